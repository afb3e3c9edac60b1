"""Every named statement of the store, the relay and the selectors, built with fixed arguments.

``manage.py render_sql`` renders each entry into ``todos/sql/statements/<name>.sql``
(``todos/ops/sql_render.py``), and ``tests/test_sql_statements.py`` fails when a committed file differs
from what the code builds, or when a store function that returns a Statement has no entry here: so
the whole SQL of any change to a statement is in its diff.

Names are ``<area>.<module>.<function>`` (``store.agent.claim_next``, ``selectors.overview.rows``),
with a suffix for a variant whose SQL differs (``store.endpoints.vend.by_command``). Arguments are
fixed (ids, users, cursors; no randomness): the SQL never depends on their values, but they are in
each file's header so the file says exactly what was built. A statement that builds different SQL
for different inputs (the todo list's filter shapes, a command-line caller) has one entry per shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from todos.core.filters import Cursor, PriorityRange, TodoFilter
from todos.core.selectors import (
    access,
    activity,
    agents,
    bulk_targets,
    claimability,
    dead_letters,
    downstream,
    drawer,
    flow,
    overview,
    todo_counts,
    todo_export,
    todo_list,
)
from todos.core.selectors import agent_api as agent_reads
from todos.core.selectors import bulk_jobs as bulk_job_reads
from todos.core.selectors import concurrency as concurrency_reads
from todos.core.selectors import endpoints as endpoint_reads
from todos.core.selectors import identities as identity_reads
from todos.core.selectors import people as people_reads
from todos.core.selectors import preferences as preference_reads
from todos.core.selectors import queue_settings as queue_setting_reads
from todos.core.selectors import rate_limits as rate_reads
from todos.core.selectors import saved_views as saved_view_reads
from todos.core.selectors import schedules as schedule_reads
from todos.core.selectors import teams as team_reads
from todos.core.selectors.access import EndpointRef, TeamAccess, Viewer
from todos.core.selectors.activity import ActivityFilter
from todos.core.selectors.rows import TodoRow
from todos.core.store import (
    agent,
    background,
    bulk_jobs,
    concurrency,
    endpoints,
    human,
    identities,
    mcp_sessions,
    people,
    preferences,
    queue_settings,
    rate_limits,
    saved_views,
    schedules,
    teams,
    waiting,
)
from todos.core.store.bulk_jobs import Chunk
from todos.core.store.endpoint_gate import STAMPS
from todos.core.store.records import BulkOutcome
from todos.core.store.scopes import AgentScope, OperatorScope
from todos.ops.sql_capture import Call, Constant, call, captured, constant

# --- fixed arguments -----------------------------------------------------------------------------

TEAM = UUID("00000000-0000-4000-8000-00000000a001")
OTHER_TEAM = UUID("00000000-0000-4000-8000-00000000a002")
ENDPOINT = UUID("00000000-0000-4000-8000-00000000e001")
SIBLING = UUID("00000000-0000-4000-8000-00000000e002")
FOREIGN = UUID("00000000-0000-4000-8000-00000000e003")
JOB = UUID("00000000-0000-4000-8000-00000000b001")
TODO = "td_00000000000000000000000000000001"
OTHER_TODO = "td_00000000000000000000000000000002"
AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
DAY = AT.date()
LEASE_TOKEN = "AAAAAAAAAAAAAAAAAAAAAA"  # 16 zero bytes, base64url: a fixed, well-formed token

AGENT = AgentScope(endpoint_id=ENDPOINT, team_id=TEAM, queues=("default", "other"))
HUMAN = OperatorScope(user_id=7, username="olive")
CURSOR = Cursor(AT, OTHER_TODO)
PRIORITY_CURSOR = Cursor(AT, OTHER_TODO, priority=100)
VIEWER = Viewer(
    user_id=7,
    username="olive",
    is_superuser=False,
    teams=(TeamAccess(TEAM, "team-a", "Alpha", "operator"), TeamAccess(OTHER_TEAM, "team-b", "Beta", "viewer")),
    endpoints=(
        EndpointRef(ENDPOINT, TEAM, "worker", "Worker", "active", ("default", "other")),
        EndpointRef(SIBLING, TEAM, "sibling", "Sibling", "active", ("default",)),
        EndpointRef(FOREIGN, OTHER_TEAM, "watcher", "Watcher", "active", ("default",)),
    ),
)
SITE_ADMIN = Viewer(user_id=1, username="root", is_superuser=True, teams=(), endpoints=())
TODO_ROW = TodoRow(
    id=TODO,
    endpoint_id=ENDPOINT,
    queue="default",
    kind=None,
    title="A todo",
    state="failed",
    owner=None,
    assignee=None,
    priority=100,
    attempt=3,
    max_attempts=3,
    attempts_total=3,
    lease_expires_at=None,
    next_retry_at=None,
    blocked=False,
    created_at=AT,
    updated_at=AT,
    claimed_at=AT,
    completed_at=AT,
    lease_lapsed=False,
    concurrency_key=None,
    requires=[],
)
CHUNK = Chunk(job_id=JOB, seq=0, todo_ids=(TODO, OTHER_TODO), action="retry", user_id=7, username="olive", note=None)


def _user():
    from django.contrib.auth.models import User

    return User(pk=7, username="olive")


# --- the store -----------------------------------------------------------------------------------

STORE_AGENT = {
    "store.agent.create": call(agent.create, AGENT, queue="default", title="Resize image", idempotency_key="job-1"),
    "store.agent.create_batch": call(
        agent.create_batch,
        AGENT,
        [
            {"queue": "default", "title": "Resize image", "idempotency_key": "job-1"},
            {"queue": "default", "title": "Crop"},
        ],
    ),
    # creates that wait for other todos: parents locked and marked, the dependency rows written
    "store.agent.create.after": call(agent.create, AGENT, queue="default", title="Merge", after=[TODO, OTHER_TODO]),
    "store.agent.create_batch.after": call(
        agent.create_batch,
        AGENT,
        [
            {"queue": "default", "title": "Plan", "idempotency_key": "plan-1"},
            {"queue": "default", "title": "Step", "after_items": [0]},
            {"queue": "default", "title": "Merge", "after": [TODO], "after_items": [0, 1], "on_parent_failure": "run"},
        ],
    ),
    "store.agent.claim_next": call(agent.claim_next, AGENT),
    "store.agent.claim_batch": call(agent.claim_batch, AGENT, max=10),
    "store.agent.claim_next.one_queue": call(agent.claim_next, AGENT, queue="default"),
    "store.agent.claim_batch.one_queue": call(agent.claim_batch, AGENT, max=10, queue="default"),
    "store.agent.claim": call(agent.claim, AGENT, TODO),
    # a claim presenting capabilities (its own, or its endpoint's defaults): `requires <@ …`
    "store.agent.claim_next.capabilities": call(agent.claim_next, AGENT, capabilities=["gpu", "region:eu"]),
    "store.agent.claim_batch.capabilities": call(agent.claim_batch, AGENT, max=10, capabilities=["gpu"]),
    "store.agent.claim.capabilities": call(agent.claim, AGENT, TODO, capabilities=["gpu"]),
    "store.agent.heartbeat": call(agent.heartbeat, AGENT, TODO, lease_token=LEASE_TOKEN),
    "store.agent.complete": call(agent.complete, AGENT, TODO, result={"ok": True}, lease_token=LEASE_TOKEN),
    "store.agent.complete.reported": call(
        agent.complete, AGENT, TODO, summary="merged", error={"type": "Warning", "message": "slow"}
    ),
    "store.agent.fail": call(agent.fail, AGENT, TODO, summary="timeout", lease_token=LEASE_TOKEN),
    "store.agent.release": call(agent.release, AGENT, TODO, lease_token=LEASE_TOKEN),
    "store.agent.complete_batch": call(agent.complete_batch, AGENT, [{"id": TODO}, {"id": OTHER_TODO}]),
}


@dataclass(frozen=True)
class _Stamping(Call):
    """A call building its statement with (or without) the once-a-minute ``last_seen_at`` stamp,
    whatever this process's clock says (todos/core/store/endpoint_gate.py)."""

    stamp: bool = False

    def __call__(self) -> Any:
        with STAMPS.fixed(self.stamp):
            return super().__call__()


# An endpoint's claims and reports: rendered as most run (no stamp), and once each kind with it.
_ENDPOINT_STATEMENTS = [name for name in STORE_AGENT if not name.startswith("store.agent.create")]
_STAMPED = ("store.agent.claim_next", "store.agent.claim", "store.agent.heartbeat", "store.agent.complete_batch")
STORE_AGENT |= {name: _Stamping(**vars(STORE_AGENT[name])) for name in _ENDPOINT_STATEMENTS}
STORE_AGENT |= {f"{name}.stamped": _Stamping(**{**vars(STORE_AGENT[name]), "stamp": True}) for name in _STAMPED}

STORE_OPERATOR = {
    "store.human.claim": call(human.claim, HUMAN, TODO),
    "store.human.extend": call(human.extend, HUMAN, TODO),
    "store.human.complete": call(human.complete, HUMAN, TODO, note="done by hand"),
    "store.human.fail": call(human.fail, HUMAN, TODO, note="broken input"),
    "store.human.release": call(human.release, HUMAN, TODO),
    "store.human.force_release": call(human.force_release, HUMAN, TODO, note="agent stuck"),
    "store.human.retry": call(human.retry, HUMAN, TODO),
    "store.human.cancel": call(human.cancel, HUMAN, TODO),
    "store.human.run_anyway": call(human.run_anyway, HUMAN, TODO),
    "store.human.cancel_downstream": call(human.cancel_downstream, HUMAN, TODO),
    "store.human.retry_many": call(human.retry_many, HUMAN, [TODO, OTHER_TODO]),
    "store.human.cancel_many": call(human.cancel_many, HUMAN, [TODO, OTHER_TODO]),
    "store.human.assign": call(human.assign, HUMAN, TODO, "human:7"),
    "store.human.assign.clear": call(human.assign, HUMAN, TODO, None),
    "store.human.set_priority": call(human.set_priority, HUMAN, TODO, 10),
    "store.human.create": call(human.create, HUMAN, endpoint_id=ENDPOINT, queue="default", title="Check this"),
    "store.human.create.after": call(
        human.create,
        HUMAN,
        endpoint_id=ENDPOINT,
        queue="default",
        title="Check this",
        after=[TODO, OTHER_TODO],
        team_id=TEAM,
        rate_key="crawl:upstream",
        timeout_seconds=600,
    ),
    "store.human.pause_queue": call(human.pause_queue, HUMAN, TEAM, "default", note="deploy"),
    "store.human.resume_queue": call(human.resume_queue, HUMAN, TEAM, "default"),
    "store.waiting.run_now": call(waiting.run_now, HUMAN, TODO),
    "store.waiting.run_now_many": call(waiting.run_now_many, HUMAN, [TODO, OTHER_TODO]),
    "store.human.run_anyway_many": call(human.run_anyway_many, HUMAN, [TODO, OTHER_TODO]),
    "store.waiting.reschedule": call(waiting.reschedule, HUMAN, TODO, delay_seconds=3600),
    "store.waiting.edit": call(
        waiting.edit,
        HUMAN,
        TODO,
        {
            "title": "Renamed",
            "payload": {"a": 1},
            "priority": 5,
            "max_attempts": 3,
            "assignee": None,
            "requires": ["gpu"],
            "run_at": "",
        },
    ),
    "store.waiting.edit.title": call(waiting.edit, HUMAN, TODO, {"title": "Renamed"}),
    "store.concurrency.set_limit": call(concurrency.set_limit, HUMAN, TEAM, "deploy:prod", 2),
    "store.concurrency.set_limit.by_command": call(concurrency.set_limit, None, TEAM, "deploy:prod", 2),
    "store.queue_settings.set_timeout": call(queue_settings.set_timeout, HUMAN, TEAM, "default", 300),
    "store.queue_settings.set_timeout.by_command": call(queue_settings.set_timeout, None, TEAM, "default", None),
    "store.rate_limits.set_limit": call(rate_limits.set_limit, HUMAN, TEAM, "crawl:upstream", 60, "minute"),
    "store.rate_limits.set_limit.by_command": call(rate_limits.set_limit, None, TEAM, "crawl:upstream", 60, "minute"),
    "store.rate_limits.remove_limit": call(rate_limits.remove_limit, HUMAN, TEAM, "crawl:upstream"),
}

SCHEDULE = UUID("00000000-0000-4000-8000-00000000c001")
_SCHEDULE = dict(
    name="Nightly report",
    cron="0 3 * * *",
    timezone="Europe/Paris",
    endpoint_id=ENDPOINT,
    queue="default",
    title="Write the nightly report",
    kind="report",
    payload={"scope": "all"},
    now=AT,
)
STORE_SCHEDULES = {
    "store.schedules.create": call(schedules.create, HUMAN, TEAM, **_SCHEDULE),
    "store.schedules.create.by_command": call(schedules.create, None, TEAM, **_SCHEDULE),
    "store.schedules.update": call(schedules.update, HUMAN, SCHEDULE, **_SCHEDULE),
    "store.schedules.set_paused": call(schedules.set_paused, HUMAN, SCHEDULE, True, now=AT),
    "store.schedules.delete": call(schedules.delete, HUMAN, SCHEDULE),
    # An agent manages its own schedules (the verbs create_schedule, pause_schedule…).
    "store.schedules.create.by_agent": call(schedules.create, AGENT, TEAM, **_SCHEDULE),
    "store.schedules.set_paused.by_agent": call(schedules.set_paused, AGENT, SCHEDULE, True, now=AT),
    "store.schedules.delete.by_agent": call(schedules.delete, AGENT, SCHEDULE),
    "store.schedules.update.by_agent": call(schedules.update, AGENT, SCHEDULE, **_SCHEDULE),
    "store.schedules.fire_now.by_agent": call(schedules.fire_now, AGENT, SCHEDULE),
    "store.schedules.fire_now": call(schedules.fire_now, HUMAN, SCHEDULE),
    "store.schedules.lock_due": call(schedules.lock_due),
    "store.schedules.fire": call(schedules.fire, [SCHEDULE], [AT], [(SCHEDULE, AT, "tick", 0)]),
}

STORE_BACKGROUND = {
    "store.background.reap": call(background.reap),
    "store.background.time_out": call(background.time_out),
    "store.background.requeue_due_retries": call(background.requeue_due_retries),
    "store.background.purge_terminal": call(background.purge_terminal, older_than_days=30),
}

_VEND = dict(team_id=TEAM, name="Worker", slug="worker", verbs=list(endpoints.DRAIN_VERBS), queues=["default"])
STORE_ENDPOINTS = {
    "store.endpoints.vend": call(endpoints.vend, HUMAN, **_VEND),
    "store.endpoints.vend.by_command": call(endpoints.vend, None, **_VEND),
    "store.endpoints.set_scopes": call(endpoints.set_scopes, HUMAN, ENDPOINT, verbs=["claim_next"], queues=["default"]),
    "store.endpoints.set_default_lease": call(endpoints.set_default_lease, HUMAN, ENDPOINT, 600),
    "store.endpoints.set_capabilities": call(endpoints.set_capabilities, HUMAN, ENDPOINT, ["gpu", "region:eu"]),
    "store.endpoints.rotate": call(endpoints.rotate, HUMAN, ENDPOINT),
    "store.endpoints.rotate.if_prefix": call(endpoints.rotate, HUMAN, ENDPOINT, if_prefix="bd_AAAAAAA"),
    "store.endpoints.revoke": call(endpoints.revoke, HUMAN, ENDPOINT, note="leaked"),
    "store.endpoints.revoke.by_command": call(endpoints.revoke, None, ENDPOINT),
    "store.endpoints.expire_due": call(endpoints.expire_due),
    "store.endpoints.delete": call(endpoints.delete, HUMAN, ENDPOINT),
    "store.endpoints.delete.site_admin": call(endpoints.delete, HUMAN, ENDPOINT, superuser=True),
    "store.endpoints.touch_last_seen": call(endpoints.touch_last_seen, ENDPOINT),
    "store.endpoints.pause_claims": call(endpoints.pause_claims, HUMAN, ENDPOINT, note="draining"),
    "store.endpoints.resume_claims": call(endpoints.resume_claims, HUMAN, ENDPOINT),
    "store.endpoints.set_own_default_lease": call(endpoints.set_own_default_lease, ENDPOINT, 600),
}

STORE_TEAMS = {
    "store.teams.create_team": call(teams.create_team, slug="team-a", name="Alpha", by=HUMAN),
    "store.teams.set_member": call(teams.set_member, HUMAN, team_id=TEAM, user_id=8, role="viewer"),
    "store.teams.set_member.site_admin": call(
        teams.set_member, HUMAN, team_id=TEAM, user_id=8, role="viewer", superuser=True
    ),
    "store.teams.remove_member": call(teams.remove_member, HUMAN, team_id=TEAM, user_id=8),
}

STORE_PEOPLE = {
    "store.people.create_person": call(
        people.create_person, HUMAN, username="pat", team_id=TEAM, role="operator", password="fixed-for-the-catalog"
    ),
    "store.people.set_active.deactivate": call(people.set_active, HUMAN, user_id=8, active=False),
    "store.people.set_active.reactivate": call(people.set_active, HUMAN, user_id=8, active=True),
    "store.people.reset_password": call(people.reset_password, HUMAN, user_id=8, password="fixed-for-the-catalog"),
    "store.preferences.set_time_zone": call(preferences.set_time_zone, user_id=8, time_zone="Europe/Paris"),
}

STORE_IDENTITIES = {
    "store.identities.sign_in": call(
        identities.sign_in,
        issuer="https://id.example.com",
        subject="abc123",
        email="Pat@Example.com",
        email_verified=True,
    ),
    "store.identities.apply_mappings": call(identities.apply_mappings, user_id=8, groups=["ops", "devs"]),
    "store.identities.add_mapping": call(
        identities.add_mapping, HUMAN, group_value="ops", team_id=TEAM, role="operator"
    ),
    "store.identities.remove_mapping": call(identities.remove_mapping, HUMAN, mapping_id=3),
}

STORE_SAVED_VIEWS = {
    "store.saved_views.save": call(saved_views.save, HUMAN, name="Dead mail", query="state=dead&queue=email"),
    "store.saved_views.rename": call(saved_views.rename, HUMAN, 12, name="Dead email"),
    "store.saved_views.delete": call(saved_views.delete, HUMAN, 12),
}

STORE_BULK_JOBS = {
    "store.bulk_jobs.create": call(
        bulk_jobs.create,
        HUMAN,
        action="retry",
        scope="selected",
        description="Retry 2 selected todos",
        selected_ids=[TODO, OTHER_TODO],
    ),
    "store.bulk_jobs.take_queued": call(bulk_jobs.take_queued),
    "store.bulk_jobs.materialize": call(bulk_jobs.materialize, JOB, "host:1", [TODO, OTHER_TODO], truncated=False),
    "store.bulk_jobs.take_chunk": call(bulk_jobs.take_chunk),
    "store.bulk_jobs.chunk_done": call(
        bulk_jobs.chunk_done, CHUNK, BulkOutcome(changed=(TODO,), skipped=(OTHER_TODO,)), "host:1"
    ),
    "store.bulk_jobs.fail": call(bulk_jobs.fail, JOB, "the filter no longer parses", "host:1"),
    "store.bulk_jobs.stop": call(bulk_jobs.stop, HUMAN, JOB),
    "store.bulk_jobs.purge_finished": call(bulk_jobs.purge_finished, 7),
}

SESSION = "0123456789abcdef0123456789abcdef"
DIGEST = bytes(32)  # a fixed token digest
STORE_MCP_SESSIONS = {
    "store.mcp_sessions.record": call(
        mcp_sessions.record, SESSION, ENDPOINT, DIGEST, "2025-06-18", {"clientInfo": {"name": "c", "version": "1"}}
    ),
    "store.mcp_sessions.lookup": call(mcp_sessions.lookup, SESSION, ENDPOINT, DIGEST, 1800),
    "store.mcp_sessions.end": call(mcp_sessions.end, SESSION, ENDPOINT, DIGEST),
    "store.mcp_sessions.keep_alive": call(mcp_sessions.keep_alive, [SESSION]),
    "store.mcp_sessions.present": call(mcp_sessions.present, [SESSION], 1800),
    "store.mcp_sessions.sweep": call(mcp_sessions.sweep, 1800),
}

# --- the relay -----------------------------------------------------------------------------------

_RELAY = "todos.live.relay"
RELAY = {
    "relay.pass_setup": constant(_RELAY, "PASS_SETUP_SQL", lock=0x626F61726402),
    "relay.pass": constant(_RELAY, "PASS_SQL", batch=500, floor=0, filenode=16384),
    "relay.log_writers": constant(_RELAY, "LOG_WRITERS_SQL"),
    "relay.still_writing": constant(_RELAY, "STILL_WRITING_SQL", writers=["3/1234"]),
    "relay.drift": constant(_RELAY, "DRIFT_SQL"),
    "relay.rebuild": constant(_RELAY, "REBUILD_STATEMENTS"),
    "relay.notify_recount": constant(_RELAY, "NOTIFY_RECOUNT"),
    "relay.cap": constant(_RELAY, "CAP_SQL", age=3600.0),
    "relay.finished_retention": constant(_RELAY, "FINISHED_RETENTION_SQL"),
    "relay.flow_retention": constant(_RELAY, "FLOW_RETENTION_SQL"),
}

# --- the selectors (Board and agent API reads) ---------------------------------------------------

_METRICS = "todos.core.selectors.metrics"
SELECTORS = {
    "selectors.access.viewer": captured(access.viewer_for, _user()),
    "selectors.access.usernames": captured(access.usernames, [7, 8]),
    "selectors.overview.rows": captured(overview.overview, VIEWER, nth=0),
    "selectors.overview.recent": captured(overview.overview, VIEWER, nth=1),
    "selectors.overview.pauses": captured(overview.overview, VIEWER, nth=2),
    "selectors.concurrency.busy_keys": captured(concurrency_reads.busy_keys, VIEWER),
    "selectors.concurrency.team_keys": captured(concurrency_reads.team_keys, TEAM),
    "selectors.queue_settings.team_timeouts": captured(queue_setting_reads.team_timeouts, TEAM),
    "selectors.queue_settings.viewer_timeouts": captured(queue_setting_reads.viewer_timeouts, VIEWER),
    "selectors.rate_limits.rate_limits": captured(rate_reads.rate_limits, VIEWER),
    "selectors.rate_limits.team_limits": captured(rate_reads.team_limits, TEAM),
    "selectors.flow.flow": captured(flow.flow, VIEWER, range_key="24h", queue="default"),
    "selectors.flow.queues": captured(flow.queues, VIEWER),
    "selectors.schedules.schedules_of": captured(schedule_reads.schedules_of, [TEAM, OTHER_TEAM]),
    "selectors.schedules.endpoint_schedules": call(schedule_reads.endpoint_schedules, ENDPOINT),
    "selectors.schedules.endpoint_schedule": call(schedule_reads.endpoint_schedule, ENDPOINT, SCHEDULE),
    # The todo list: one entry per filter shape (each builds its own scan).
    "selectors.todo_list.list_page.all": captured(todo_list.list_page, VIEWER, TodoFilter()),
    "selectors.todo_list.list_page.next_page": captured(todo_list.list_page, VIEWER, TodoFilter(after=CURSOR)),
    "selectors.todo_list.list_page.previous_page": captured(todo_list.list_page, VIEWER, TodoFilter(before=CURSOR)),
    "selectors.todo_list.list_page.oldest": captured(todo_list.list_page, VIEWER, TodoFilter(sort="oldest")),
    "selectors.todo_list.list_page.state": captured(todo_list.list_page, VIEWER, TodoFilter(state="dead")),
    "selectors.todo_list.list_page.retry": captured(todo_list.list_page, VIEWER, TodoFilter(state="retry")),
    "selectors.todo_list.list_page.queue": captured(todo_list.list_page, VIEWER, TodoFilter(queue="default")),
    "selectors.todo_list.list_page.queue_pairs": captured(
        todo_list.list_page, VIEWER, TodoFilter(state="pending", sort="priority"), nth=0
    ),
    "selectors.todo_list.list_page.pending_by_priority": captured(
        todo_list.list_page, VIEWER, TodoFilter(state="pending", sort="priority"), nth=1
    ),
    "selectors.todo_list.list_page.pending_by_priority.next_page": captured(
        todo_list.list_page, VIEWER, TodoFilter(state="pending", sort="priority", after=PRIORITY_CURSOR), nth=1
    ),
    "selectors.todo_list.list_page.mine": captured(todo_list.list_page, VIEWER, TodoFilter(mine=True)),
    "selectors.todo_list.list_page.search": captured(todo_list.list_page, VIEWER, TodoFilter(q="timeout")),
    "selectors.todo_list.list_page.search_payload": captured(todo_list.list_page, VIEWER, TodoFilter(q="customer=42")),
    "selectors.todo_list.list_page.exact_id": captured(todo_list.list_page, VIEWER, TodoFilter(q=TODO)),
    "selectors.todo_list.list_page.filtered": captured(
        todo_list.list_page,
        VIEWER,
        TodoFilter(
            kind="report",
            priority=PriorityRange(0, 10),
            created_from=DAY,
            created_to=DAY,
            finished_from=DAY,
            finished_to=DAY,
            failed_with="timeout after #s",
        ),
    ),
    "selectors.todo_counts.state_counts.filtered": captured(
        todo_counts.state_counts, VIEWER, TodoFilter(kind="report", priority=PriorityRange(5, 5))
    ),
    "selectors.todo_export.export_page": call(todo_export.export_page, VIEWER, TodoFilter(state="dead", q="timeout")),
    "selectors.todo_export.export_page.next_page": call(todo_export.export_page, VIEWER, TodoFilter(), CURSOR),
    "selectors.saved_views.views_of": captured(saved_view_reads.views_of, VIEWER),
    "selectors.todo_list.rows_newer_than": captured(todo_list.rows_newer_than, VIEWER, TodoFilter(), CURSOR),
    "selectors.todo_list.get_row": captured(todo_list.get_row, VIEWER, TODO),
    "selectors.todo_counts.state_counts": captured(todo_counts.state_counts, VIEWER, TodoFilter()),
    "selectors.todo_counts.state_counts.mine": captured(todo_counts.state_counts, VIEWER, TodoFilter(mine=True)),
    "selectors.todo_counts.state_counts.search": captured(todo_counts.state_counts, VIEWER, TodoFilter(q="timeout")),
    "selectors.todo_list.paused_queues": captured(todo_list.paused_queues, VIEWER),
    # The drawer.
    "selectors.drawer.get_detail": captured(drawer.get_detail, VIEWER, TODO),
    "selectors.drawer.attempts": captured(drawer.attempts, TODO_ROW),
    "selectors.drawer.todo_audit": captured(drawer.todo_audit, VIEWER, TODO_ROW),
    "selectors.drawer.relatives": captured(drawer.relatives, VIEWER, TODO_ROW),
    "selectors.downstream.preview": captured(downstream.preview, VIEWER, TODO),
    # Bulk actions.
    "selectors.bulk_targets.visible_ids": captured(bulk_targets.visible_ids, VIEWER, [TODO, OTHER_TODO]),
    "selectors.bulk_targets.count_eligible.retry": captured(
        bulk_targets.count_eligible, VIEWER, [TODO, OTHER_TODO], "retry"
    ),
    "selectors.bulk_targets.count_eligible.cancel": captured(
        bulk_targets.count_eligible, VIEWER, [TODO, OTHER_TODO], "cancel"
    ),
    "selectors.bulk_targets.count_eligible.run_anyway": captured(
        bulk_targets.count_eligible, VIEWER, [TODO, OTHER_TODO], "run_anyway"
    ),
    "selectors.bulk_targets.count_matching.run_anyway": captured(
        bulk_targets.count_matching, VIEWER, TodoFilter(state="blocked"), "run_anyway", cap=10_000
    ),
    "selectors.bulk_targets.count_matching": captured(
        bulk_targets.count_matching, VIEWER, TodoFilter(state="dead"), "retry", cap=10_000
    ),
    "selectors.bulk_targets.count_matching.mine": captured(
        bulk_targets.count_matching, VIEWER, TodoFilter(mine=True), "cancel", cap=10_000
    ),
    "selectors.bulk_targets.iter_matching_ids": captured(
        bulk_targets.iter_matching_ids, VIEWER, TodoFilter(state="dead"), "retry", limit=10_000
    ),
    "selectors.bulk_jobs.get": captured(bulk_job_reads.get, VIEWER, JOB),
    "selectors.dead_letters.groups": captured(dead_letters.groups, VIEWER, TodoFilter()),
    "selectors.dead_letters.group_ids": captured(dead_letters.group_ids, VIEWER, TodoFilter(), "timeout after #s"),
    "selectors.dead_letters.group_members": captured(
        dead_letters.group_members, VIEWER, TodoFilter(), "timeout after #s", after=CURSOR
    ),
    "selectors.dead_letters.reasons": constant("todos.core.selectors.dead_letters", "REASONS_SQL", ids=[TODO]),
    "selectors.activity.page": captured(activity.activity, VIEWER, ActivityFilter()),
    "selectors.activity.page.filtered": captured(
        activity.activity, VIEWER, ActivityFilter(person="olive", action="todo.*", period="24h", before=(AT, 1000))
    ),
    "selectors.activity.people": captured(activity.people, VIEWER),
    "selectors.agents.in_flight": captured(agents.agents, VIEWER, nth=0),
    "selectors.agents.outcomes": captured(agents.agents, VIEWER, nth=1),
    "selectors.agents.seen": captured(agents.agents, VIEWER, nth=2),
    "selectors.endpoints.by_team": captured(endpoint_reads.by_team, VIEWER),
    "selectors.endpoints.endpoint_for": captured(endpoint_reads.endpoint_for, VIEWER, "worker"),
    "selectors.endpoints.known_queues": captured(endpoint_reads.known_queues, TEAM),
    "selectors.endpoints.live_work": captured(endpoint_reads.live_work, ENDPOINT),
    "selectors.endpoints.todo_total": captured(endpoint_reads.todo_total, ENDPOINT),
    "selectors.teams.visible_teams": captured(team_reads.visible_teams, VIEWER),
    "selectors.teams.visible_teams.site_admin": captured(team_reads.visible_teams, SITE_ADMIN),
    "selectors.teams.team_for": captured(team_reads.team_for, SITE_ADMIN, "team-c"),
    "selectors.teams.members": captured(team_reads.members, TEAM),
    "selectors.teams.endpoints": captured(team_reads.endpoints, TEAM),
    "selectors.teams.user_id_by_username": captured(team_reads.user_id_by_username, "olive"),
    "selectors.people.people": captured(people_reads.people),
    "selectors.people.person": captured(people_reads.person, 8),
    "selectors.people.recent_changes": captured(people_reads.recent_changes),
    "selectors.people.person_by_username": captured(people_reads.person_by_username, "olive"),
    "selectors.identities.role_mappings": captured(identity_reads.role_mappings),
    "selectors.preferences.time_zone_choice": captured(preference_reads.time_zone_choice, 8),
    "selectors.claimability.stuck_work": captured(claimability.stuck_work, VIEWER, nth=0),
    "selectors.claimability.stuck_work.assigned": captured(claimability.stuck_work, VIEWER, nth=1),
    "selectors.claimability.stuck_work.capabilities": captured(claimability.stuck_work, VIEWER, nth=2),
    "selectors.metrics.live": constant(_METRICS, "SQL", "live"),
    "selectors.metrics.oldest": constant(_METRICS, "SQL", "oldest"),
    "selectors.metrics.finished": constant(_METRICS, "SQL", "finished"),
    "selectors.metrics.attempts": constant(_METRICS, "SQL", "attempts"),
    "selectors.metrics.endpoints": constant(_METRICS, "SQL", "endpoints"),
    "selectors.metrics.queue_states": constant(_METRICS, "SQL", "queue_states"),
    "selectors.metrics.queue_totals": constant(_METRICS, "SQL", "queue_totals"),
    # The agent API's reads (Statements, like the store's).
    "selectors.agent.credential_for": call(agent_reads.credential_for, bytes(32)),
    "selectors.agent.team_endpoint": call(agent_reads.team_endpoint, TEAM, "worker"),
    "selectors.agent.list_todos": call(agent_reads.list_todos, AGENT),
    "selectors.agent.list_todos.filtered": call(
        agent_reads.list_todos,
        AGENT,
        queue="default",
        state="failed",
        dead_letter=True,
        limit=20,
        cursor="1767268800000000.td_00000000000000000000000000000002",
    ),
    "selectors.agent.get_todo": call(agent_reads.get_todo, AGENT, TODO),
}

CATALOG: dict[str, Call | Constant] = {
    **STORE_AGENT,
    **STORE_OPERATOR,
    **STORE_BACKGROUND,
    **STORE_SCHEDULES,
    **STORE_ENDPOINTS,
    **STORE_TEAMS,
    **STORE_PEOPLE,
    **STORE_IDENTITIES,
    **STORE_SAVED_VIEWS,
    **STORE_BULK_JOBS,
    **STORE_MCP_SESSIONS,
    **RELAY,
    **SELECTORS,
}

# The modules whose public Statement-returning functions must each have an entry (the test checks).
STATEMENT_MODULES = (
    agent,
    human,
    background,
    endpoints,
    teams,
    people,
    identities,
    preferences,
    saved_views,
    bulk_jobs,
    mcp_sessions,
    agent_reads,
)
