"""The drawer's attempt timeline: every attempt shown as a span on one time axis.

From the todo's creation to now (or to its last attempt's end), each attempt is a bar from its
claim to its end (to now while open), coloured by outcome, with a tick at its last heartbeat; the
gaps between attempts (and the wait before the first) are dashed lines with their durations.
Every mark carries a ``<title>`` in words with exact UTC times (hover, and assistive technology);
the attempt list below repeats it all as text. Server-rendered SVG (``todos/_timeline.html``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from todos.dashboard import clock
from todos.dashboard.templatetags.board import duration_text

WIDTH = 480
LEFT, RIGHT = 34, 8
LANE, TOP = 16, 4
PLOT_W = WIDTH - LEFT - RIGHT

# An outcome in words, then what became of the todo: people read sentences, the code stays as
# secondary text.
OUTCOME_WORDS = {
    "completed": "Completed",
    "failed": "Failed (the worker reported it)",
    "released": "Released (given back)",
    "lease_expired": "Died: the lease lapsed and another claim took it over",
    "reaped": "Died: the lease lapsed and the reaper ended it",
    "canceled": "Canceled by a person",
    "revoked": "Ended: the endpoint was revoked",
}
DISPOSITION_WORDS = {
    "done": "the todo is done",
    "retry_scheduled": "a retry was scheduled",
    "requeued": "the todo went back to the queue",
    "dead_lettered": "the todo became a dead letter",
    "canceled": "the todo was canceled",
}
# The colour class of each outcome: completed, failed, died, neutral (given back, canceled), open.
OUTCOME_TONES = {
    "completed": "completed",
    "failed": "failed",
    "revoked": "failed",
    "lease_expired": "died",
    "reaped": "died",
    "released": "neutral",
    "canceled": "neutral",
}


def outcome_sentence(outcome: str | None, disposition: str | None) -> str:
    """ "Failed (the worker reported it); a retry was scheduled"; "In progress" while open."""
    if outcome is None:
        return "In progress"
    words = OUTCOME_WORDS.get(outcome, outcome)
    then = DISPOSITION_WORDS.get(disposition or "", disposition or "")
    return f"{words}; {then}" if then else words


def exact(value: datetime) -> str:
    """To the second, in the viewer's zone with the zone written (``todos/dashboard/clock.py``)."""
    when = clock.local(value)
    return f"{when:%Y-%m-%d %H:%M:%S} {clock.abbreviation(when)}"


@dataclass(frozen=True)
class Span:
    seq: int
    tone: str  # completed | failed | died | neutral | open
    x: float
    width: float
    y: float
    heartbeat_x: float | None
    title: str


@dataclass(frozen=True)
class Gap:
    x1: float
    x2: float
    y: float
    title: str


@dataclass
class Timeline:
    spans: list[Span]
    gaps: list[Gap]
    start_label: str
    end_label: str
    start_title: str
    end_title: str
    summary: str
    height: int
    width: int = WIDTH
    left: int = LEFT
    right: int = WIDTH - RIGHT


@dataclass(frozen=True)
class AttemptView:
    """What the attempt list shows besides the row: the outcome in words and how long it ran."""

    sentence: str
    ran: str


def attempt_view(attempt, now: datetime) -> AttemptView:
    end = attempt.ended_at or now
    return AttemptView(
        sentence=outcome_sentence(attempt.outcome, attempt.disposition),
        ran=duration_text((end - attempt.claimed_at).total_seconds()),
    )


def timeline(created_at: datetime, attempts: list, now: datetime) -> Timeline | None:
    """The timeline of ``attempts`` (any order; the drawer's are newest first); None without any."""
    if not attempts:
        return None
    ordered = sorted(attempts, key=lambda a: a.seq)
    first_shown_is_first = ordered[0].seq == 1
    start = created_at if first_shown_is_first else ordered[0].claimed_at
    end = max([a.ended_at or now for a in ordered])
    if any(a.ended_at is None for a in ordered):
        end = now
    total = max((end - start).total_seconds(), 0.001)

    def x(at: datetime) -> float:
        return round(LEFT + PLOT_W * min(max((at - start).total_seconds() / total, 0.0), 1.0), 2)

    spans, gaps = [], []
    previous_end = created_at if first_shown_is_first else None
    for lane, a in enumerate(ordered):
        y = TOP + lane * LANE
        if previous_end is not None and a.claimed_at >= previous_end:
            waited = duration_text((a.claimed_at - previous_end).total_seconds())
            what = (
                "in the queue before its first claim" if a.seq == 1 else f"between attempts #{a.seq - 1} and #{a.seq}"
            )
            gaps.append(Gap(x(previous_end), x(a.claimed_at), y + LANE / 2 - 1, f"{waited} {what}"))
        finish = a.ended_at or now
        ran = duration_text((finish - a.claimed_at).total_seconds())
        tone = "open" if a.ended_at is None else OUTCOME_TONES.get(a.outcome, "neutral")
        parts = [
            f"Attempt #{a.seq}: {outcome_sentence(a.outcome, a.disposition)}",
            f"ran {ran}" + (" so far" if a.ended_at is None else ""),
            f"claimed {exact(a.claimed_at)}",
        ]
        if a.last_heartbeat_at:
            parts.append(f"last heartbeat {exact(a.last_heartbeat_at)}")
        parts.append(f"ended {exact(a.ended_at)}" if a.ended_at else f"lease until {exact(a.lease_expires_at)}")
        if a.outcome:
            parts.append(f"({a.outcome} → {a.disposition})")
        left = x(a.claimed_at)
        spans.append(
            Span(
                seq=a.seq,
                tone=tone,
                x=left,
                width=max(round(x(finish) - left, 2), 2.0),
                y=y + 2,
                heartbeat_x=x(a.last_heartbeat_at) if a.last_heartbeat_at else None,
                title=" · ".join(parts),
            )
        )
        previous_end = finish
    span_text = duration_text(total)
    return Timeline(
        spans=spans,
        gaps=gaps,
        start_label="created" if first_shown_is_first else f"#{ordered[0].seq}",
        end_label="now" if end == now else "last end",
        start_title=exact(start),
        end_title=exact(end),
        summary=f"{len(ordered)} attempt{'s' if len(ordered) != 1 else ''} over {span_text}",
        height=TOP + LANE * len(ordered) + 16,
    )


def now_utc() -> datetime:
    return datetime.now(UTC)
