"""Server-rendered SVG charts: the geometry of a flow (``todos.core.selectors.flow``) for the templates.

No chart library: two chart kinds, each a handful of rectangles, lines and labels that the
templates (``charts/_chart.html``) draw. Every mark carries a ``<title>`` (its values on hover and
to assistive technology) and every chart comes with the same numbers as a table.

* outcomes — completed, failed and died per interval, stacked bars on a linear axis;
* times — waited and ran at p50 and p95 per interval, lines on a logarithmic axis (a p95 can be a
  thousand times its p50; a linear axis would flatten the p50 into the floor).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from todos.core.selectors.flow import Flow, Interval
from todos.dashboard import clock

WIDTH, HEIGHT = 640, 200
LEFT, RIGHT, TOP, BOTTOM = 52, 10, 10, 26
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

# Log-axis ticks: round durations people read at a glance.
TIME_TICKS = (0.01, 0.1, 1, 10, 60, 600, 3600, 36000, 86400, 864000)

OUTCOMES = (("completed", "Completed"), ("failed", "Failed"), ("died", "Died (lease lapsed)"))
TIMES = (
    ("waited_p50", "Waited p50"),
    ("waited_p95", "Waited p95"),
    ("ran_p50", "Ran p50"),
    ("ran_p95", "Ran p95"),
)


def duration(seconds: float | None) -> str:
    """Seconds as people read them: 350 ms, 12 s, 4.2 min, 3.1 h, 2.0 d."""
    if seconds is None:
        return "—"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def interval_label(flow: Flow, start: datetime) -> str:
    local = timezone.localtime(start)
    if flow.range.key == "1h":
        return local.strftime("%H:%M")
    if flow.range.key == "24h":
        return local.strftime("%H:00")
    return local.strftime("%a %H:00")


def zoned_interval_label(flow: Flow, start: datetime) -> str:
    """The interval's label with its zone written (hover titles, the table), as every time the
    Board shows: the axis keeps the short one."""
    return f"{interval_label(flow, start)} {clock.abbreviation(timezone.localtime(start))}"


@dataclass(frozen=True)
class Tick:
    pos: float  # x or y in the viewBox
    label: str


@dataclass(frozen=True)
class Segment:
    """One stacked bar piece."""

    kind: str
    x: float
    y: float
    width: float
    height: float


@dataclass
class Column:
    """One interval: its stacked bars (or its line points) and the hover text."""

    x: float
    width: float
    title: str
    segments: list[Segment] = field(default_factory=list)


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    title: str


@dataclass
class Line:
    kind: str
    label: str
    paths: list[str]  # polyline point lists, broken where an interval has no value
    points: list[Point]


@dataclass
class Chart:
    kind: str  # outcomes | times
    title: str
    summary: str  # the SVG's accessible name
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    columns: list[Column] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    empty: bool = False
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    top: int = TOP
    plot_w: int = PLOT_W
    plot_h: int = PLOT_H

    @property
    def bottom(self) -> int:
        return self.top + self.plot_h

    @property
    def right(self) -> int:
        return self.left + self.plot_w


def _count(value: float) -> str:
    """An axis label for a count: whole numbers as such, a half (of 1 or 5) with its decimal."""
    return f"{int(value):,}" if value == int(value) else f"{value:,.1f}"


def _nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5 × 10^k at or above ``value`` (an axis maximum)."""
    if value <= 1:
        return 1
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def _x_ticks(flow: Flow) -> list[Tick]:
    n = len(flow.intervals)
    every = {"1h": 10, "24h": 4, "7d": 4}[flow.range.key]
    step = PLOT_W / n
    return [
        Tick(round(LEFT + (i + 0.5) * step, 2), interval_label(flow, iv.start))
        for i, iv in enumerate(flow.intervals)
        if (n - 1 - i) % every == 0
    ]


def outcomes_chart(flow: Flow, scope: str, *, height: int = HEIGHT) -> Chart:
    """Stacked bars; ``height`` smaller for the overview's compact chart."""
    peak = _nice_ceiling(max((iv.completed + iv.failed + iv.died for iv in flow.intervals), default=0))
    n = len(flow.intervals)
    step = PLOT_W / n
    plot_h = height - TOP - BOTTOM
    total = flow.total
    chart = Chart(
        kind="outcomes",
        title="Completed, failed and died",
        summary=(
            f"{flow.range.label}, {scope}: {total.completed:,} completed, {total.failed:,} failed, {total.died:,} died"
        ),
        x_ticks=_x_ticks(flow),
        y_ticks=[Tick(TOP + plot_h - plot_h * f, _count(peak * f)) for f in (0, 0.5, 1)],
        empty=not (total.completed or total.failed or total.died),
        height=height,
        plot_h=plot_h,
    )
    for i, iv in enumerate(flow.intervals):
        x = LEFT + i * step
        column = Column(x=x, width=step, title=_outcome_title(flow, iv))
        base = TOP + plot_h
        for kind, _ in OUTCOMES:
            value = getattr(iv, kind)
            if value:
                bar = plot_h * value / peak
                base -= bar
                column.segments.append(
                    Segment(kind, round(x + step * 0.1, 2), round(base, 2), round(step * 0.8, 2), round(bar, 2))
                )
        chart.columns.append(column)
    return chart


def _outcome_title(flow: Flow, iv: Interval) -> str:
    return f"{zoned_interval_label(flow, iv.start)}: {iv.completed:,} completed, {iv.failed:,} failed, {iv.died:,} died"


def times_chart(flow: Flow, scope: str) -> Chart:
    values = [v for iv in flow.intervals for kind, _ in TIMES if (v := getattr(iv, kind)) is not None]
    total = flow.total
    chart = Chart(
        kind="times",
        title="Time waiting and running",
        summary=(
            f"{flow.range.label}, {scope}: waited p50 {duration(total.waited_p50)}, p95 {duration(total.waited_p95)}; "
            f"ran p50 {duration(total.ran_p50)}, p95 {duration(total.ran_p95)}"
        ),
        x_ticks=_x_ticks(flow),
        y_ticks=[],
        empty=not values,
    )
    if not values:
        return chart
    low = max([t for t in TIME_TICKS if t <= min(values)], default=TIME_TICKS[0])
    high = min([t for t in TIME_TICKS if t >= max(values)], default=TIME_TICKS[-1])
    if high <= low:
        high = next((t for t in TIME_TICKS if t > low), low * 10)
    span = math.log10(high) - math.log10(low)

    def y(seconds: float) -> float:
        clamped = min(max(seconds, low), high)
        return round(TOP + PLOT_H - PLOT_H * (math.log10(clamped) - math.log10(low)) / span, 2)

    chart.y_ticks = [Tick(y(t), duration(t)) for t in TIME_TICKS if low <= t <= high]
    step = PLOT_W / len(flow.intervals)
    for kind, label in TIMES:
        line = Line(kind=kind, label=label, paths=[], points=[])
        run: list[str] = []
        for i, iv in enumerate(flow.intervals):
            value = getattr(iv, kind)
            if value is None:
                if run:
                    line.paths.append(" ".join(run))
                run = []
                continue
            x = round(LEFT + i * step + step / 2, 2)
            run.append(f"{x},{y(value)}")
            count = iv.waited_count if kind.startswith("waited") else iv.ran_count
            line.points.append(
                Point(x, y(value), f"{zoned_interval_label(flow, iv.start)}: {label} {duration(value)} (of {count:,})")
            )
        if run:
            line.paths.append(" ".join(run))
        chart.lines.append(line)
    return chart


@dataclass(frozen=True)
class TableRow:
    label: str
    interval: Interval

    def cells(self) -> list[str]:
        iv = self.interval
        return [
            f"{iv.completed:,}",
            f"{iv.failed:,}",
            f"{iv.died:,}",
            *(duration(getattr(iv, kind)) for kind, _ in TIMES),
        ]


def table_rows(flow: Flow) -> list[TableRow]:
    """The chart's numbers, newest interval first (what a reader of the table wants first)."""
    return [TableRow(zoned_interval_label(flow, iv.start), iv) for iv in reversed(flow.intervals)]
