"""The SDK's session manager, taught to serve sessions that another Board process opened.

``StreamableHTTPSessionManager`` keeps each stateful session (its transport and its message loop) in
the memory of the process that answered ``initialize`` and answers 404 to a session id it does not
hold. Behind a round-robin balancer a session's requests reach every process, so Board's manager
adds one thing: :meth:`SessionManager.restore` re-creates, in this process, a session recorded in
PostgreSQL (``todos/core/store/mcp_sessions.py``) — same id, same owner (endpoint and token), and an
initialized connection carrying the negotiated protocol version and the client's ``initialize``
params — after which the SDK serves the request as it would any of its own. :meth:`drop` forgets a
session that ended elsewhere.

It also keeps each live session's ``Connection`` (:func:`connection_of`): ``todo_ready`` is sent on
the connection's standalone stream, and that stream is the client's GET, held by whichever
process the GET reached.

This relies on the manager's internals in the pinned SDK (mcp 2.3.0: ``_server_instances``,
``_session_owners``, ``_session_creation_lock``, ``_task_group``, ``_lifespan_state``,
``_discard_session``, and the transport arguments of ``_admit_session``);
``tests/mcp/test_balanced.py`` breaks first if they move.
"""

from __future__ import annotations

import logging

import anyio
from anyio.abc import TaskStatus
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import InitializeRequestParams
from pydantic import ValidationError

from todos.core.store.mcp_sessions import SessionRecord

logger = logging.getLogger("todos.agents.mcp")

# Every live session's connection in this process, by session id (ids are unique across loops).
_connections: dict[str, Connection] = {}


def attach(session_id: str, connection: Connection) -> None:
    """Remember a live session's connection until the session ends."""
    _connections[session_id] = connection
    connection.exit_stack.callback(_detach, session_id, connection)


def _detach(session_id: str, connection: Connection) -> None:
    if _connections.get(session_id) is connection:
        del _connections[session_id]


def connection_of(session_id: str) -> Connection | None:
    return _connections.get(session_id)


def held_sessions() -> list[str]:
    """The live sessions of this process that are recorded (attached once their record exists)."""
    return list(_connections)


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's manager plus :meth:`restore` and :meth:`drop` (see the module docstring)."""

    def holds(self, session_id: str) -> bool:
        return session_id in self._server_instances

    async def drop(self, session_id: str) -> None:
        """Forget a session that ended elsewhere (its DELETE reached another process, or it
        expired): its id answers 404 here from now on, and an open stream of it closes."""
        transport = self._server_instances.get(session_id)
        if transport is not None:
            logger.info("MCP session %s ended elsewhere; dropping this process's copy", session_id[:8])
            await self._discard_session(session_id, transport)

    async def restore(self, found: SessionRecord, user: AuthenticatedUser | None) -> str:
        """Re-create the recorded session ``found`` here. ``"restored"`` (or ``"held"`` if it
        already was), ``"full"`` at the session limit, ``"unreadable"`` if its record cannot be
        restored (it is then treated as ended)."""
        try:
            client_params = InitializeRequestParams.model_validate(found.client_params, by_name=False)
        except ValidationError:
            logger.error("MCP session %s has an unreadable record; treating it as ended", found.session_id[:8])
            return "unreadable"
        session_id = found.session_id
        # Admission and start under the lock: a second request for the same session must not
        # reach the transport before its message loop is connected.
        async with self._session_creation_lock:
            if session_id in self._server_instances:
                return "held"
            if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
                return "full"
            transport = StreamableHTTPServerTransport(
                mcp_session_id=session_id,
                is_json_response_enabled=self.json_response,
                event_store=self.event_store,
                security_settings=self.security_settings,
                retry_interval=self.retry_interval,
                idle_timeout=self.session_idle_timeout,
            )
            self._server_instances[session_id] = transport
            if user is not None:
                self._session_owners[session_id] = authorization_context(user)
            try:
                assert self._task_group is not None
                await self._task_group.start(self._serve_restored, transport, found.protocol_version, client_params)
            except BaseException:
                await self._discard_session(session_id, transport)
                raise
        logger.info("MCP session %s restored in this process", session_id[:8])
        return "restored"

    async def _serve_restored(
        self,
        transport: StreamableHTTPServerTransport,
        protocol_version: str,
        client_params: InitializeRequestParams,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """The session's message loop, as the SDK's ``serve_loop`` runs it, on a connection whose
        handshake is already done."""
        session_id = transport.mcp_session_id
        assert session_id is not None
        try:
            async with transport.connect() as (read_stream, write_stream):
                dispatcher = JSONRPCDispatcher(read_stream, write_stream, inline_methods=frozenset({"initialize"}))
                connection = Connection.for_loop(
                    dispatcher, session_id=session_id, protocol_version_hint=protocol_version
                )
                connection.client_params = client_params
                connection.initialized.set()
                attach(session_id, connection)
                task_status.started()
                idle_scope = transport.idle_scope if transport.idle_scope is not None else anyio.CancelScope()
                with idle_scope:
                    await serve_connection(
                        self.app, dispatcher, connection=connection, lifespan_state=self._lifespan_state
                    )
                if idle_scope.cancelled_caught:
                    logger.info("MCP session %s idle timeout in this process", session_id[:8])
        except Exception:
            logger.exception("restored MCP session %s crashed", session_id[:8])
        finally:
            await self._discard_session(session_id, transport)
