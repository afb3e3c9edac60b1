"""The Board's reads: every query a Board page or fragment runs, scoped to the signed-in human.

Each module answers one screen's questions. Every function takes a :class:`~todos.core.selectors.access.Viewer`
(built from the request's user by :func:`~todos.core.selectors.access.viewer_for`), so no query can forget
``operatorOwns``: the viewer carries the ids of the endpoints its teams own, and every todo query is
restricted to them. Being a superuser does not widen that set.

Reads go through the store's psycopg pool (:func:`todos.core.db.pool`) as raw SQL so each query can be
written for the index that serves it; writes never happen here (they are store statements). In a
Board page request they may read the read replica instead (:func:`todos.core.replica.read_connection`);
``access`` (who may see what) and ``agent_api`` (an agent must see its own writes) always read the
primary.
"""
