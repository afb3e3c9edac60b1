"""A schedule's ticks: the cron expression and time zone read by cronsim, never by our own parser.

Everything the store and the Board need of a timetable is here: checking an expression and a zone
(:func:`check`), the next ticks after a time (:func:`next_ticks`, the Board's preview as you type)
and what a due schedule fires now (:func:`plan`): the ticks it reached, split by the missed-tick
policy into the ones to fire and the ones to skip, and the tick after ``now`` to wait for next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cronsim import CronSim, CronSimError

from todos.core.errors import Invalid

# A tick fired within this long of its time is on time; an older one was *missed* (the loops were
# down, the machine slept, the schedule was just resumed) and the schedule's policy decides.
GRACE = timedelta(seconds=60)
# A schedule missed for longer than this many ticks is not walked tick by tick: the count of missed
# ticks stops here ("at least") and the next tick is found from now.
MISSED_WALK_LIMIT = 10_000
POLICIES = ("skip", "catch_up")
CRON_MAX_CHARS = 200
CRON_FIELDS = 5  # minute hour day-of-month month day-of-week: no seconds


def zone(value: object, field: str = "timezone") -> ZoneInfo:
    """An IANA time zone name (``Europe/Paris``, ``UTC``)."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid(field, "is required: an IANA time zone name such as UTC or Europe/Paris")
    name = value.strip()
    if len(name) > 64 or name not in _zone_names():
        raise Invalid(field, f"unknown time zone {name!r} (an IANA name such as UTC or Europe/Paris)")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise Invalid(field, f"unknown time zone {name!r} (an IANA name such as UTC or Europe/Paris)") from None


_ZONES: frozenset[str] | None = None


def _zone_names() -> frozenset[str]:
    global _ZONES
    if _ZONES is None:
        _ZONES = frozenset(available_timezones()) | {"UTC"}
    return _ZONES


def cron(value: object, field: str = "cron") -> str:
    """A cron expression cronsim accepts; the error names the field cronsim stopped at."""
    if not isinstance(value, str) or not value.strip():
        raise Invalid(field, "is required (five fields: minute hour day-of-month month day-of-week)")
    expr = " ".join(value.split())
    if len(expr) > CRON_MAX_CHARS:
        raise Invalid(field, f"must be at most {CRON_MAX_CHARS} characters")
    fields = len(expr.split(" "))
    if fields != CRON_FIELDS:
        # cronsim also reads six fields (seconds first) and @-macros; Board's timetables are minutes.
        raise Invalid(
            field,
            f"does not parse: Wrong number of fields in {expr!r}: {fields}, not five"
            " (minute hour day-of-month month day-of-week)",
        )
    try:
        CronSim(expr, datetime.now(ZoneInfo("UTC")))
    except CronSimError as exc:
        raise Invalid(field, f"does not parse: {exc} in {expr!r}") from None
    except Exception as exc:  # noqa: BLE001 - cronsim raises plain errors on some odd inputs
        raise Invalid(field, f"does not parse: {exc} in {expr!r}") from None
    return expr


def policy(value: object, field: str = "missed") -> str:
    if value is None or value == "":
        return "skip"
    if value not in POLICIES:
        raise Invalid(field, "must be skip or catch_up")
    return str(value)


def next_ticks(expr: str, tz: ZoneInfo, after: datetime, count: int) -> list[datetime]:
    """The ``count`` ticks strictly after ``after``, in the schedule's zone."""
    it = CronSim(expr, after.astimezone(tz))
    out = []
    for tick in it:
        out.append(tick)
        if len(out) >= count:
            break
    return out


def next_tick(expr: str, tz: ZoneInfo, after: datetime) -> datetime:
    ticks = next_ticks(expr, tz, after, 1)
    if not ticks:
        raise Invalid("cron", "never fires")
    return ticks[0]


@dataclass(frozen=True)
class Fire:
    tick: datetime
    how: str  # 'tick' (on time) or 'catch_up' (one fire for the missed ticks)
    missed: int  # for a catch-up: how many ticks it stands for


@dataclass(frozen=True)
class Plan:
    fires: tuple[Fire, ...]
    skipped: int  # missed ticks not fired
    next_fire_at: datetime


def plan(expr: str, tz_name: str, due: datetime, now: datetime, missed_policy: str) -> Plan:
    """What a schedule whose ``next_fire_at`` (``due``) has been reached fires at ``now``.

    ``due`` is a lower bound: normally a tick itself, but a resumed schedule's is the time it was
    resumed, which this aligns to the first tick at or after it. Every tick in ``[due, now]`` is
    reached. Those within :data:`GRACE` of ``now`` fire, each as itself. Older ones were missed:
    ``skip`` fires none of them; ``catch_up`` fires one todo for all of them (its tick is the latest
    missed one). The next fire time is the first tick after ``now``, so a schedule never fires a
    tick before its time, and never one twice.
    """
    tz = ZoneInfo(tz_name)
    reached: list[datetime] = []
    walked_out = False
    upcoming = None
    # cronsim yields ticks strictly after its start, at whole seconds at most: start just before.
    for tick in CronSim(expr, (due - timedelta(seconds=1)).astimezone(tz)):
        if tick < due:
            continue
        if tick > now:
            upcoming = tick
            break
        reached.append(tick)
        if len(reached) >= MISSED_WALK_LIMIT:
            walked_out = True
            upcoming = next_tick(expr, tz, now)
            break
    if upcoming is None:  # pragma: no cover - an expression with no further tick
        upcoming = now + timedelta(days=36500)
    on_time = [] if walked_out else [t for t in reached if now - t <= GRACE]
    missed = [t for t in reached if t not in on_time]
    fires: list[Fire] = []
    skipped = len(missed)
    if missed and missed_policy == "catch_up":
        fires.append(Fire(missed[-1], "catch_up", len(missed)))
        skipped = 0
    fires.extend(Fire(t, "tick", 0) for t in on_time)
    return Plan(tuple(fires), skipped, upcoming)
