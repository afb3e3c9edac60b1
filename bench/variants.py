"""Variants of the store's database, measured beside it without editing it.

A variant changes the fresh store database's schema after ``migrate`` and/or runs session settings
on each worker's connection; the store's statements are never rewritten (the SQL a variant would
change is changed in ``todos/core/store`` and reviewed there). ``python -m bench.drain --systems
store,store+NAME`` runs one beside the store. Each variant says what it stands for; the measured
effects are in ``bench/README.md`` ("Findings").

The variants that rewrote the store's SQL text (moving the Board's NOTIFY to an outbox, the
per-queue pause check, the literal claim ``LIMIT``) are gone: each is in the store now, the
outbox as the change log and its relay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString


@dataclass(frozen=True)
class Variant:
    doc: str
    session: tuple[LiteralString, ...] = ()  # run once on each worker connection
    schema: tuple[LiteralString, ...] = ()  # run once on the fresh store database, after migrate
    relay: bool = True  # the change-log relay runs beside the workers, as in a Board process


VARIANTS: dict[str, Variant] = {
    "no-slot-trigger": Variant(
        "measurement only: without the concurrency-slot triggers and the key index, to "
        "see what they cost a drain that uses no keys",
        schema=(
            "DROP TRIGGER todos_concurrency_slot_freed ON todos",
            "DROP TRIGGER todos_concurrency_slot_deleted ON todos",
            "DROP INDEX todos_concurrency_key",
        ),
    ),
    "no-checks": Variant(
        "measurement only: todos, todo_attempts and change_log without a table CHECK (what the ones "
        "left after 0018 cost each claim and complete; before 0018, what they all cost)",
        schema=(
            """DO $$ DECLARE r record; BEGIN
                 FOR r IN SELECT conrelid::regclass AS rel, conname FROM pg_constraint
                          WHERE contype = 'c' AND conrelid IN ('todos'::regclass, 'todo_attempts'::regclass,
                                                               'change_log'::regclass)
                 LOOP EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.rel, r.conname); END LOOP;
               END $$""",
        ),
    ),
    "no-relay": Variant(
        "measurement only: no change-log relay beside the workers (what the relay's passes take "
        "from the drain on the same machine; the change log is left to grow)",
        relay=False,
    ),
    "no-claimer-fk": Variant(
        "todo_attempts without the claimer_endpoint_id foreign key (an agent's claimer is always the "
        "todo's own endpoint, whose deletion already cascades to the attempt): no FOR KEY SHARE "
        "check on the endpoints row per claim",
        schema=("ALTER TABLE todo_attempts DROP CONSTRAINT todo_attempts_claimer_endpoint_id_fkey",),
    ),
    "no-exclusion": Variant(
        "measurement only: without the deferred one-open-attempt exclusion constraint (what its "
        "commit-time check costs)",
        schema=("ALTER TABLE todo_attempts DROP CONSTRAINT todo_attempts_one_open",),
    ),
    "lean-indexes": Variant(
        "todos without the two list indexes that every claim and complete must also update "
        "(todos_endpoint_created, todos_endpoint_state_created; todos_endpoint_queue_state_created stays)",
        schema=("DROP INDEX todos_endpoint_created", "DROP INDEX todos_endpoint_state_created"),
    ),
    "fillfactor-70": Variant(
        "todos and todo_attempts at fillfactor 70 instead of 80 (more room on each page for a "
        "heartbeat's new row version)",
        schema=("ALTER TABLE todos SET (fillfactor = 70)", "ALTER TABLE todo_attempts SET (fillfactor = 70)"),
    ),
    "no-flow-totals": Variant(
        "measurement only: without the trigger that keeps /metrics' running totals (what it costs "
        "the relay's passes beside a drain)",
        schema=("ALTER TABLE todo_flow DISABLE TRIGGER todo_flow_totals_add",),
    ),
    "no-error-rule": Variant(
        "measurement only: the attempts' error column without its domain rule (what checking the "
        "rule on each attempt written costs when no error is sent)",
        schema=("ALTER DOMAIN attempt_error DROP CONSTRAINT attempt_error_shape",),
    ),
    "no-filter-indexes": Variant(
        "measurement only: todos without the operator's filter indexes (kind, priority, failed-with) "
        "and the rate-key index, which every claim and complete opens and tests though a plain todo "
        "enters none of them",
        schema=(
            "DROP INDEX todos_endpoint_kind",
            "DROP INDEX todos_endpoint_priority",
            "DROP INDEX todos_failed_reason",
            "DROP INDEX todos_rate_key",
        ),
    ),
    "async-commit": Variant(
        "the worker's session sets synchronous_commit = off (its commits do not wait for their WAL "
        "flush; the last ~0.6 s of claims and completes are lost in a crash)",
        session=("SET synchronous_commit = off",),
    ),
}


def get(name: str | None) -> Variant | None:
    if not name:
        return None
    try:
        return VARIANTS[name]
    except KeyError:
        raise SystemExit(f"unknown variant {name!r}; known: {', '.join(VARIANTS)}") from None


def prepare_session(name: str | None, conn) -> None:
    v = get(name)
    if v is not None:
        for statement in v.session:
            conn.execute(statement)
