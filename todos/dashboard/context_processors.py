"""Template context every Board page gets."""

from __future__ import annotations

from todos.core import replica


def read_replica(request):
    """``read_replica_note``: why the page's reads came from the primary although a read replica
    is configured (lagging, unreachable), or "". A callable: asked only where a template shows it."""
    return {"read_replica_note": replica.status_note}
