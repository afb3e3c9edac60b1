"""Who is calling the store: an agent (an endpoint's credential) or a human on the Board."""

from __future__ import annotations

from dataclasses import dataclass, field
from uuid import UUID


@dataclass(frozen=True)
class AgentScope:
    """An endpoint acting through its credential. Its todos are those with its ``endpoint_id``;
    ``queues`` is its ``scope_queues``."""

    endpoint_id: UUID
    team_id: UUID
    queues: tuple[str, ...]
    default_lease_ttl_seconds: int | None = None
    session: str | None = None  # the MCP session, when the call came over MCP
    verbs: frozenset[str] = field(default_factory=frozenset)
    # the endpoint's default capabilities: what a claim presenting none of its own presents
    capabilities: tuple[str, ...] = ()
    # the endpoint's slug, for the audit log's actor (not in the repr: the rendered statements'
    # headers show how they were built, and the slug changes no SQL)
    slug: str | None = field(default=None, repr=False)

    @property
    def owner(self) -> str:
        return f"endpoint:{self.endpoint_id}"

    @property
    def actor(self) -> str:
        """The audit log's actor of what the agent changes: ``endpoint:<slug>`` (its id when the slug is not known)."""
        return f"endpoint:{self.slug or self.endpoint_id}"


@dataclass(frozen=True)
class OperatorScope:
    """A signed-in human. Sees the todos of their teams' endpoints (``operatorOwns``)."""

    user_id: int
    username: str

    @property
    def owner(self) -> str:
        return f"human:{self.user_id}"
