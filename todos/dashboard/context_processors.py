"""Template context every Board page gets."""

from __future__ import annotations

from todos.core import replica
from todos.dashboard import clock as viewer_clock


def read_replica(request):
    """``read_replica_note``: why the page's reads came from the primary although a read replica
    is configured (lagging, unreachable), or "". A callable: asked only where a template shows it."""
    return {"read_replica_note": replica.status_note}


def clock(request):
    """``clock``: the zone the page's times are in and what the person chose (the header's
    switch and every time input's label say it)."""
    return {"clock": viewer_clock.resolve(request)}
