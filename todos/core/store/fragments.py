"""SQL fragments shared by the store's statements: scopes, the fence, the change log, misses.

Each is a piece of one statement, never a statement of its own: the transitions in
``agent.py``, ``human.py`` and ``background.py`` stay one readable SQL statement each.
"""

from __future__ import annotations

from typing import LiteralString, TypeAlias

from todos.core.words import BoardState, ChangeOp, TodoState

# Agents waiting in claim_next: work became claimable for (endpoint, queue). Sent by statements.
READY_CHANNEL: LiteralString = "board_ready"


def ready_message(endpoint: LiteralString, queue: LiteralString, count: LiteralString | None = None) -> LiteralString:
    """The one ``board_ready`` message: work became claimable for (endpoint, queue).

    With ``count``, it says how many todos did (``n``), and a process wakes that many of its
    waiting claims; without (a resumed queue, a raised concurrency limit: the number is unknown),
    it wakes every waiter of the endpoint and queue.
    """
    counted: LiteralString = f", 'n', {count}" if count is not None else ""
    return f"""pg_notify('{READY_CHANNEL}',
                    json_build_object('endpoint', {endpoint}, 'queue', {queue}{counted})::text)"""


# The one "not before" predicate (docs/lifecycle.md, "Run later"): a retry window and a schedule
# are both ``next_retry_at``, and both are over when it is reached.
DUE: LiteralString = "t.next_retry_at <= now()"

# "Claimable", minus the queue-pause, assignee and concurrency-key parts that depend on the caller
# or on other rows. A pending todo is claimable unless it is scheduled for later.
CLAIMABLE: LiteralString = f"""(
        (t.state = {TodoState.PENDING.sql} AND (t.next_retry_at IS NULL OR {DUE}))
     OR (t.state = {TodoState.CLAIMED.sql} AND t.lease_expires_at < now() AND t.attempt < t.max_attempts)
     OR (t.state = {TodoState.FAILED.sql} AND {DUE} AND t.attempt < t.max_attempts))"""

# Backoff after a reported failure: 30 s · 2^(attempt−1), at most 15 minutes. The exponent is
# clamped before the power: least() evaluates both arguments, and 30 s · 2^48 already overflows
# PostgreSQL's interval (max_attempts may be 100). 2^10 is far past the 15-minute cap.
BACKOFF: LiteralString = """least(interval '30 seconds' * power(2, least(greatest(t.attempt - 1, 0), 10)),
                  interval '15 minutes')"""


# The fragments below that name ``%(team_id)s`` are the agent's: every todo an agent statement
# touches is its own endpoint's (``t.endpoint_id = %(endpoint_id)s``), so the team is the one its
# credential resolved to (``AgentScope.team_id``, an endpoint never changes team), bound rather
# than joined through ``endpoints`` on every call.

# The todo's concurrency key (if any) has a free slot, as of the statement's snapshot. A claim's
# scans use it to skip keys at their limit without locking anything; the slot itself is taken
# (and the limit enforced under concurrency) by ``take_concurrency_slot`` (0017) in the claim's
# ``taken`` CTE (``claims.py``).
KEY_HAS_ROOM: LiteralString = """(t.concurrency_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM concurrency_keys ck
        WHERE ck.team_id = %(team_id)s AND ck.key = t.concurrency_key AND ck.claimed >= ck.max_claimed))"""

# The todo's rate key (if any) has an allowance left, as of the statement's snapshot: its ring's
# oldest entry has left the window (``refills_at``, kept by every write of the ring, 0025). Like
# KEY_HAS_ROOM it only lets the scans skip throttled keys, at no cost to unkeyed rows; the
# allowance itself is taken by ``take_rate_allowance`` in the claim's ``taken`` CTE.
RATE_HAS_ROOM: LiteralString = """(t.rate_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM rate_limits rl
        WHERE rl.team_id = %(team_id)s AND rl.key = t.rate_key AND rl.refills_at > now()))"""

# The lease-token fence: the open attempt (seq = attempts_total, so a takeover committed while this
# statement waited on the row lock is seen through the re-read todo row) holds the presented
# token's digest, both NULL counting as equal. Compared in SQL, on fixed-length digests.
FENCE: LiteralString = """EXISTS (
        SELECT 1 FROM todo_attempts fa
        WHERE fa.todo_id = t.id AND fa.seq = t.attempts_total AND fa.ended_at IS NULL
          AND ((fa.lease_token_hash IS NULL AND %(token_hash)s::bytea IS NULL)
               OR fa.lease_token_hash = %(token_hash)s::bytea))"""


def run_time_limit(team: LiteralString) -> LiteralString:
    """The run-time limit of todo ``t`` in seconds (docs/lifecycle.md, "Run-time limits"): its own,
    else its team's default for its queue (``team``: SQL naming the team), else NULL (none). The
    queue's row is looked up only for a todo without a limit of its own (COALESCE stops early)."""
    return f"""coalesce(t.timeout_seconds, (
            SELECT qs.timeout_seconds FROM queue_settings qs
            WHERE qs.team_id = {team} AND qs.queue = t.queue))"""


# The claimed todo ``t`` (an agent's: the team is ``%(team_id)s``) has not run past its run-time
# limit: the attempt began at ``t.claimed_at`` (the claim sets both with one ``now()``).
WITHIN_RUN_TIME_LIMIT: LiteralString = f"""coalesce(
        t.claimed_at + make_interval(secs => {run_time_limit("%(team_id)s")}
        ) >= now(), true)"""


# The lease's open attempt is visible to this statement, so closing "the open attempt" closes it.
# A claim that committed while this statement waited on the todo's row lock is seen through the
# re-read row (attempts_total moved on) but not its new attempt, which is newer than the
# statement's snapshot: without this guard an unfenced statement (the operator's, a revoke) would
# end the lease and leave that attempt open. With it, the statement is a conflict (or skips the
# row) and the caller sees the todo as it now is. The agent's FENCE has the same property.
LEASE_SEEN: LiteralString = """EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)"""

# The agent's team has not paused the todo's queue: agents' claims skip a paused queue.
NOT_PAUSED: LiteralString = """NOT EXISTS (
        SELECT 1 FROM queue_pauses qp WHERE qp.team_id = %(team_id)s AND qp.queue = t.queue)"""


def queue_not_paused(queue: LiteralString) -> LiteralString:
    """The agent's team has not paused ``queue`` (an expression naming a queue).

    A check per queue, for scans that go queue by queue: tested against every row (as
    ``NOT_PAUSED`` is), it stops the planner from walking the claim index in order and makes it
    fetch and sort the queue's whole backlog instead.
    """
    return f"""NOT EXISTS (
        SELECT 1 FROM queue_pauses qp WHERE qp.team_id = %(team_id)s AND qp.queue = {queue})"""


# The roles of a team, by what they may do: viewers see, operators and admins act on todos,
# admins manage the team's endpoints and members.
ACTING_ROLES: LiteralString = "('operator', 'admin')"
ADMIN_ROLES: LiteralString = "('admin')"


def member_of(
    team: LiteralString, *, roles: LiteralString | None = None, user: LiteralString = "%(user_id)s"
) -> LiteralString:
    """SQL: ``user`` is a member of ``team`` (both SQL expressions), in one of ``roles`` when given
    (``ACTING_ROLES``, ``ADMIN_ROLES``). Every "may this person …" of the store is this predicate:
    membership is the one tenancy rule: people see the todos of their teams' endpoints
    (docs/guarantees.md)."""
    role = "" if roles is None else f"\n          AND m.role IN {roles}"
    return f"EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = {team} AND m.user_id = {user}{role})"


# operatorOwns(human): the todo's endpoint belongs to a team the human is a member of.
OPERATOR_SEES: LiteralString = f"""t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe
        WHERE {member_of("oe.team_id")})"""
# …and may act on it.
OPERATOR_ACTS: LiteralString = f"""t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe
        WHERE {member_of("oe.team_id", roles=ACTING_ROLES)})"""


# A todo's state as the Board counts it: ``failed`` split into ``retry`` and ``dead`` (0006).
def board_state(alias: LiteralString) -> LiteralString:
    return f"todo_board_state({alias}.state, {alias}.next_retry_at)"


def log_change(
    op: ChangeOp,
    source: LiteralString,
    *,
    team: LiteralString,
    endpoint: LiteralString = "NULL",
    todo: LiteralString = "NULL",
    queue: LiteralString = "NULL",
    before: LiteralString = "NULL",
    after: LiteralString = "NULL",
    user: LiteralString = "NULL",
    waited: LiteralString = "NULL",
    ran: LiteralString = "NULL",
    many: bool = False,
) -> LiteralString:
    """The change-log INSERT of a statement: one row per row of ``source`` (a FROM clause), each
    column an SQL expression over it. Every state-changing statement runs one (or two) as a CTE,
    so its change commits with it or not at all; the relay (``todos/live/relay.py``) turns the rows
    into Board notifications, exact counts and the charts' rollup (``todo_flow``): ``waited`` and
    ``ran`` are seconds a first claim waited and an ended attempt ran. Ids and small fields only:
    never a payload. A todo's row has a line for each state and timing, which can be long; any
    other row is one line.

    ``many``: the statement may log thousands of rows (the children one parent unblocks). The op
    is then a value of the ``change_op`` domain made once for the statement (an InitPlan), which
    the column takes as it is, instead of a literal whose domain CHECK runs on every row: measured,
    that check was half the cost of 10,000 change-log rows.
    """
    op_value: LiteralString = f"(SELECT {op.sql}::change_op)" if many else op.sql
    values: LiteralString = f"{team}, {endpoint}, {todo}, {queue}, {op_value}"
    if todo == "NULL":
        values += f", {before}, {after}, {user}, {waited}, {ran}"
    else:
        values += f""",
           {before},
           {after},
           {user},
           {waited},
           {ran}"""
    return f"""INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT {values}
    FROM {source}"""


def attempt_ran(ended: bool | LiteralString, since: LiteralString = "r.claimed_at") -> LiteralString:
    """Seconds the open attempt of todo ``r`` ran until now, where ``ended`` (SQL) says this change
    ends it. ``since`` is when that attempt began: by default the todo's own ``claimed_at``, which
    the claim sets to the attempt's ``claimed_at`` (one ``now()``, one statement) and nothing
    changes while the todo stays claimed, so ending an attempt costs no lookup of its row. A claim
    that takes over a lapsed lease has already overwritten ``claimed_at`` and passes the value
    its candidate read before the update instead. Where the statement knows whether it ends the
    attempt (``ended`` a bool), the seconds are there or NULL, with no CASE."""
    seconds: LiteralString = f"extract(epoch FROM now() - {since})::double precision"
    if isinstance(ended, bool):
        return seconds if ended else "NULL"
    return f"""CASE WHEN {ended}
                THEN {seconds} END"""


def audit_row(
    action: LiteralString,
    source: LiteralString,
    *,
    team: LiteralString,
    user: LiteralString = "%(user_id)s",
    actor: LiteralString = "%(actor)s",
    todo: LiteralString = "NULL",
    endpoint: LiteralString = "NULL",
    queue: LiteralString = "NULL",
    note: LiteralString = "NULL",
    detail: LiteralString = "NULL",
) -> LiteralString:
    """The audit-log INSERT of a statement a person (or the system) caused: one row per row of
    ``source`` (a FROM clause), each column an SQL expression over it. The audit trail is what a
    human reads later ("who canceled this?"), so it is written by the same statement as the
    change, and every statement writes it through this one builder: one column list, one order.
    """
    return f"""INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT {team}, {user}, {actor}, '{action}', {todo}, {endpoint}, {queue}, {note},
           {detail}
    FROM {source}"""


def audit_todos(action: LiteralString, rows: LiteralString) -> LiteralString:
    """Audit an operator's change to each todo of CTE ``rows`` (``id, endpoint_id, queue``), with
    the statement's ``note`` and ``detail`` parameters; the team is the owning endpoint's."""
    return audit_row(
        action,
        f"{rows} r JOIN endpoints ae ON ae.id = r.endpoint_id",
        team="ae.team_id",
        todo="r.id",
        endpoint="r.endpoint_id",
        queue="r.queue",
        note="%(note)s",
        detail="%(detail)s",
    )


# A state a change-log row records: one the statement knows (then the builders fold what it
# decides), SQL over the logged row ``r``, or None (NULL: the todo did not, or no longer, exist).
LoggedState: TypeAlias = BoardState | LiteralString | None
# The todo's Board state as the logged row ``r`` has it after the change.
ROW_STATE: LiteralString = board_state("r")


def state_sql(state: LoggedState) -> LiteralString:
    """A logged state as SQL: its literal, the SQL itself, or NULL."""
    if state is None:
        return "NULL"
    return state.sql if isinstance(state, BoardState) else state


def leaves_claimed(before: LoggedState, after: LoggedState) -> bool | LiteralString:
    """Whether a change from ``before`` to ``after`` ends the todo's open attempt (the todo leaves
    ``claimed``): a bool where both states are known, else SQL that tests only what varies."""
    if before is None or (isinstance(before, BoardState) and before is not BoardState.CLAIMED):
        return False
    if after is BoardState.CLAIMED:
        return False
    tests: list[LiteralString] = []
    if not isinstance(before, BoardState):
        tests.append(f"({before}) = {BoardState.CLAIMED.sql}")
    if after is not None and not isinstance(after, BoardState):
        tests.append(f"({after}) IS DISTINCT FROM {BoardState.CLAIMED.sql}")
    return "\n                  AND ".join(tests) if tests else True


def log_todos(
    op: ChangeOp,
    rows: LiteralString,
    *,
    before: LoggedState,
    after: LoggedState = ROW_STATE,
    waited: LiteralString = "NULL",
    ended: bool | LiteralString | None = None,
    ran_since: LiteralString = "r.claimed_at",
    team: LiteralString | None = None,
    many: bool = False,
) -> LiteralString:
    """Log a change to each todo of CTE ``rows`` (``id, queue, endpoint_id`` and, unless ``after``
    is given, the todo's new ``state`` and ``next_retry_at``). ``before``/``after`` are the Board
    states around the change (``LoggedState``); None where the todo did not or no longer exists.
    The team is the owning endpoint's: ``team`` (SQL over ``r``) where the statement knows it (an
    agent's: ``%(team_id)s``), else read through a join (the statement's rows are its own, so the
    join always hits).
    ``waited`` (seconds, a first claim's) and ``ended`` (the change ends the open attempt: SQL, or
    a bool where the statement knows; by default, a todo that leaves ``claimed``:
    ``leaves_claimed``) feed the charts' timings; ``ran_since`` is when the ended attempt began
    (``attempt_ran``). ``many``: see :func:`log_change`.
    """
    return log_change(
        op,
        f"{rows} r JOIN endpoints le ON le.id = r.endpoint_id" if team is None else f"{rows} r",
        team="le.team_id" if team is None else team,
        endpoint="r.endpoint_id",
        todo="r.id",
        queue="r.queue",
        before=state_sql(before),
        after=state_sql(after),
        waited=waited,
        ran=attempt_ran(leaves_claimed(before, after) if ended is None else ended, ran_since),
        many=many,
    )


def log_endpoints(op: ChangeOp, rows: LiteralString) -> LiteralString:
    """Log a change to each endpoint of ``rows`` (``id, team_id``): a vend, a scope or lease
    change, a rotation, a revoke, a deletion, the last-seen stamp. It reads the team from the rows
    themselves, so it also logs an endpoint the same statement inserted or deleted."""
    return log_change(op, f"{rows} n", team="n.team_id", endpoint="n.id")


def notify_ready(rows: LiteralString, where: LiteralString = "TRUE") -> LiteralString:
    """One NOTIFY per (endpoint, queue) that gained claimable work among the rows of ``rows``, with
    how many todos did (waiting claims wake that many, not all of them).

    The one NOTIFY a statement may still send (docs/lifecycle.md, "Live notifications"): agents
    waiting in ``claim_next`` must not wait for the relay. Only statements that make work claimable
    *now* use it (create, release, an operator's retry, release or assignment, resume, the requeue
    of due retries); claims, heartbeats and completions never do, so agents' commits never queue for
    the lock.
    """
    return f"""(SELECT count({ready_message("w.endpoint_id", "w.queue", "w.n")})
                FROM (SELECT endpoint_id, queue, count(*) AS n
                      FROM {rows} WHERE {where}
                      GROUP BY 1, 2) w)"""


def agent_miss(found: LiteralString = "r.id") -> LiteralString:
    """Classify a zero-row agent transition on todo ``%(id)s``: ``agent_todo_miss`` (0040) reads
    it with the statement's snapshot. A hit (``found`` not NULL) is NULL at once and makes no
    call, and the statement's plan holds nothing for the miss but the call."""
    return f"""CASE WHEN {found} IS NOT NULL THEN NULL
        ELSE agent_todo_miss(%(id)s, %(endpoint_id)s, %(queues)s::text[]) END"""


def operator_miss(found: LiteralString = "r.id") -> LiteralString:
    """Classify a zero-row operator transition: unseen → not found; seen by a viewer → forbidden.
    A hit (``found`` not NULL) is NULL at once, without the two lookups."""
    return f"""CASE
        WHEN {found} IS NOT NULL THEN NULL
        WHEN NOT EXISTS (SELECT 1 FROM todos t WHERE t.id = %(id)s AND {OPERATOR_SEES})
        THEN 'not_found'
        WHEN NOT EXISTS (SELECT 1 FROM todos t WHERE t.id = %(id)s AND {OPERATOR_ACTS})
        THEN 'forbidden'
        ELSE 'conflict' END"""


# --- dependencies (docs/lifecycle.md, "Dependencies") -------------------------------------------

# A blocked todo: pending, scheduled for never until its last parent is done.
INFINITY: LiteralString = "'infinity'"


def blocked(alias: LiteralString = "t") -> LiteralString:
    """SQL: todo ``alias`` is blocked (pending, waiting for parents)."""
    return f"{alias}.state = {TodoState.PENDING.sql} AND {alias}.next_retry_at = {INFINITY}"


def not_blocked(alias: LiteralString = "t") -> LiteralString:
    """SQL: todo ``alias`` is not blocked (its time, if any, is a real one)."""
    return f"{alias}.next_retry_at IS DISTINCT FROM {INFINITY}"


def children_done(finished: LiteralString) -> LiteralString:
    """The answer's column that settles the children of the todos this statement completed
    (``finished``: the statement's UPDATE ... RETURNING t.*, read after it has run):
    ``todo_children_done`` (0036) counts each child off, logs the ones it unblocks (``blocked`` →
    ``pending`` or ``scheduled``, a ``requeue``) and wakes agents waiting for them; the column is
    how many queues it woke. An uncorrelated subquery: it runs once per statement, after the
    UPDATE. The function is called only with the todos marked ``has_children`` (0038: a create
    marks its parents, under their row locks), so a statement whose todos have no children makes
    no call and no probe of the dependency index (docs/deployment.md, 0036 and 0038)."""
    return f"""coalesce((SELECT todo_children_done(p.ids)
                     FROM (SELECT array_agg(f.id) AS ids FROM {finished} f WHERE f.has_children) p
                     WHERE p.ids IS NOT NULL), 0)"""


def children_failed(finished: LiteralString, *, name: LiteralString = "kids") -> LiteralString:
    """CTEs that settle the children of the todos this statement finished as dead or canceled
    (``finished``: a FROM clause with an ``id`` column, read after the statement's own UPDATE has
    run): each child follows its ``on_parent_failure`` (``todo_parents_failed``, 0024). A child
    whose last parent settles here unblocks (``blocked`` → ``pending`` or ``scheduled``, logged as
    a ``requeue``); a canceled one is logged ``cancel``. Put :func:`children_woken` in the
    statement's answer: it wakes agents waiting for the unblocked ones. A statement whose todos
    have no children pays one probe of the dependency index per call.
    """
    unblocked: LiteralString = f"(SELECT * FROM {name} WHERE state = {TodoState.PENDING.sql})"
    canceled: LiteralString = f"(SELECT * FROM {name} WHERE state = {TodoState.CANCELED.sql})"
    return f"""{name} AS MATERIALIZED (
    SELECT k.* FROM todo_parents_failed(ARRAY(SELECT f.id FROM {finished} f)) k
    WHERE k.next_retry_at IS DISTINCT FROM {INFINITY}
),
{name}_unblocked AS ({log_todos(ChangeOp.REQUEUE, f"{unblocked} ", before=BoardState.BLOCKED, ended=False, many=True)}),
{name}_canceled AS ({
        log_todos(
            ChangeOp.CANCEL,
            f"{canceled} ",
            before=BoardState.BLOCKED,
            after=BoardState.CANCELED,
            ended=False,
            many=True,
        )
    })"""


def children_woken(name: LiteralString = "kids") -> LiteralString:
    """The answer's column that wakes agents waiting for the children :func:`children_failed`
    unblocked (``notify_ready``)."""
    return notify_ready(name, f"state = {TodoState.PENDING.sql} AND next_retry_at IS NULL")


def search_document(error: LiteralString, summary: LiteralString) -> LiteralString:
    """The SET item that stores what an attempt said (:func:`search_document_value`)."""
    return f"search_doc = {search_document_value(error, summary)}"


def search_document_value(error: LiteralString, summary: LiteralString) -> LiteralString:
    """What an attempt said, parsed for the search box
    (``todo_attempts.search_doc``, read by ``todo_query``'s error search), over the ``error``
    object and ``summary`` the attempt will hold (SQL expressions: the values the statement writes,
    or ``a.error`` / ``a.summary`` for the ones it keeps).

    Written by each statement that writes an attempt's text, in its own plan, instead of as a
    generated column: PostgreSQL parses a generated column's stored expression again at the start
    of every statement that writes the table, the drain's claims and plain completes included
    (docs/deployment.md, 0035). NULL for an attempt that said nothing. The fields are joined with a
    lexeme (``'|'``) no query yields, so a phrase never runs from one field into the next."""
    return f"""(
            SELECT CASE WHEN s.e IS NULL AND nullif(s.t, '') IS NULL THEN NULL
                   ELSE to_tsvector('simple'::regconfig, coalesce(s.e ->> 'type', ''))
                        || '|:1'::tsvector
                        || to_tsvector('simple'::regconfig, replace(coalesce(s.e ->> 'type', ''), '.', ' '))
                        || '|:1'::tsvector
                        || to_tsvector('simple'::regconfig, coalesce(s.t, ''))
                        || '|:1'::tsvector
                        || to_tsvector('simple'::regconfig, coalesce(s.e ->> 'message', '')) END
            -- OFFSET 0: each value is read (and checked against its domain) once, not per use
            FROM (SELECT ({error})::jsonb AS e, ({summary})::text AS t OFFSET 0) s)"""


def stored_reason_group(error: LiteralString, summary: LiteralString, result_error: LiteralString) -> LiteralString:
    """The SET item that stores the reason group of a todo this statement fails
    (``todos.failure_reason_group``, read by the "failed with" filter): ``board_reason_group``
    (0029, the Dead letters page's grouping) over what its last attempt will hold once closed, its
    ``error`` and ``summary``, and the todo's ``result.error`` (SQL expressions)."""
    return f"failure_reason_group = board_reason_group({error}, {summary}, {result_error})"


def last_attempt_reason_group(result_error: LiteralString = "t.result->>'error'") -> LiteralString:
    """:func:`stored_reason_group` for a statement that closes the attempt without writing its
    error or summary (a reap, a revoke): read from the attempt as it stands, or none."""
    return f"""failure_reason_group = (
            SELECT board_reason_group(a.error, a.summary, {result_error})
            FROM (SELECT 1) one LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total)"""
