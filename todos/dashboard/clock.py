"""One clock for the Board: every time it shows, and every time a form reads, is in the viewer's zone.

The viewer picks the zone in the header (UTC, their browser's zone, or an IANA name); the choice
lives in ``person_preferences`` (written by ``todos/core/store/preferences.py``), and people who
never chose get ``BOARD_DEFAULT_TIME_ZONE``. The browser's zone reaches the server in a cookie
board.js keeps current (:data:`BROWSER_COOKIE`), so every request (pages, and the fragments the
live updates fetch) renders in the zone of the person who asked.

:func:`in_viewer_zone` makes the zone Django's current zone for a request (``board_view`` wraps
every Board view in it); the formatting and parsing below read that current zone, so a template
or a form parser never needs to be handed it. docs/board.md, "Times and zones".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django.conf import settings
from django.utils import timezone
from django.utils.html import format_html

from todos.core import schedule_times
from todos.core.errors import Invalid
from todos.core.selectors import preferences as preference_reads
from todos.core.store.preferences import BROWSER_ZONE

_DATE_AND_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}")  # a date alone is no time
BROWSER_COOKIE = "board_browser_zone"  # the IANA name board.js reads from Intl.DateTimeFormat
_CACHE_ATTR = "_board_viewer_zone"


@dataclass(frozen=True)
class ViewerZone:
    """The zone a request's times are shown and read in, and what the person chose."""

    choice: str  # "browser" or an IANA name: the person's choice, or the default
    zone: ZoneInfo  # the zone in use
    browser_reported: str = ""  # the browser's zone as the request's cookie said it ("" if none)
    chosen: bool = False  # the person chose (False: BOARD_DEFAULT_TIME_ZONE)
    browser_sent: str = ""  # the cookie as sent, known zone or not: board.js reloads only if it differs

    @property
    def name(self) -> str:
        return self.zone.key

    @property
    def is_browser(self) -> bool:
        return self.choice == BROWSER_ZONE

    @property
    def is_utc(self) -> bool:
        return self.choice == "UTC"

    @property
    def named(self) -> str:
        """The IANA name chosen, when it is neither UTC nor the browser's zone ("" otherwise)."""
        return "" if self.is_browser or self.is_utc else self.choice

    @property
    def note(self) -> str:
        """Why the zone in use is not the one chosen, or ""."""
        if self.is_browser and self.browser_sent and not self.browser_reported:
            return f"your browser's zone {self.browser_sent!r} is not one the Board knows: times are in {self.name}"
        if self.is_browser and not self.browser_reported:
            return f"your browser has not told the Board its zone yet: times are in {self.name}"
        return ""


def known_zone(name: str) -> ZoneInfo | None:
    try:
        return schedule_times.zone(name)
    except Invalid:
        return None


def browser_zone(request) -> ZoneInfo | None:
    """The zone the request's browser reported (its cookie), if it is a known IANA zone."""
    raw = request.COOKIES.get(BROWSER_COOKIE, "")
    return known_zone(raw) if raw else None


def resolve(request) -> ViewerZone:
    """The viewer's zone for this request (read once per request: one row, by primary key)."""
    cached = getattr(request, _CACHE_ATTR, None)
    if cached is not None:
        return cached
    user = getattr(request, "user", None)
    chosen = preference_reads.time_zone_choice(user.pk) if user is not None and user.is_authenticated else None
    choice = chosen or settings.BOARD_DEFAULT_TIME_ZONE
    reported = browser_zone(request)
    if choice == BROWSER_ZONE:
        zone = reported or ZoneInfo("UTC")
    else:
        zone = known_zone(choice) or ZoneInfo("UTC")
    sent = request.COOKIES.get(BROWSER_COOKIE, "")[:64]
    result = ViewerZone(choice, zone, reported.key if reported else "", chosen is not None, sent)
    setattr(request, _CACHE_ATTR, result)
    return result


@contextmanager
def in_viewer_zone(request) -> Iterator[ViewerZone]:
    """Django's current zone is the viewer's while the view runs and renders."""
    viewer_zone = resolve(request)
    with timezone.override(viewer_zone.zone):
        yield viewer_zone


def current() -> ZoneInfo:
    zone = timezone.get_current_timezone()
    return zone if isinstance(zone, ZoneInfo) else ZoneInfo("UTC")


def local(value: datetime, zone: ZoneInfo | None = None) -> datetime:
    return value.astimezone(zone or current())


def abbreviation(value: datetime) -> str:
    """The zone as people write it beside a time: "EST", "CET", "UTC" (or "+0530" where the
    zone has no letters)."""
    name = value.tzname() or ""
    if name and name[0] in "+-":
        return value.strftime("%z")
    return name or "UTC"


def short(value: datetime, zone: ZoneInfo | None = None) -> str:
    """The minute, with its zone written: 2026-12-02 14:42 EST."""
    when = local(value, zone)
    return f"{when:%Y-%m-%d %H:%M} {abbreviation(when)}"


def clock_time(value: datetime, zone: ZoneInfo | None = None) -> str:
    """A time of today as a toast says it: 14:05:09 EST."""
    when = local(value, zone)
    return f"{when:%H:%M:%S} {abbreviation(when)}"


def exact(value: datetime, zone: ZoneInfo | None = None) -> str:
    """The exact instant with its offset, and the zone's name (the hover text)."""
    when = local(value, zone)
    return f"{when.isoformat(timespec='milliseconds')} {when.tzinfo}"


def iso(value: datetime, zone: ZoneInfo | None = None) -> str:
    """ISO 8601 with the offset, for ``<time datetime>``."""
    return local(value, zone).isoformat(timespec="milliseconds")


def time_element(value: datetime, text: str | None = None):
    """``<time>`` with the instant (``datetime``), the exact time on hover (``title``) and the
    minute in the viewer's zone as its text."""
    return format_html(
        '<time datetime="{}" title="{}">{}</time>', iso(value), exact(value), short(value) if text is None else text
    )


def input_value(value: datetime) -> str:
    """A time as a ``datetime-local`` field's value, in the viewer's zone (the label says which)."""
    return local(value).strftime("%Y-%m-%dT%H:%M:%S")


def parse_local(field: str, raw: str, zone: ZoneInfo | None = None) -> datetime:
    """A ``datetime-local`` field's naive text read in the viewer's zone; a time written with
    its offset is taken as written.

    A local time the clocks skip (the hour daylight saving time starts) names the field and is
    refused; one they pass twice (the hour it ends) is the earlier of the two.
    """
    zone = zone or current()
    try:
        if not _DATE_AND_TIME.match(raw.strip()):
            raise ValueError(raw)
        naive = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise Invalid(field, f"must be a date and time such as 2030-01-31T18:00 (in {zone.key})") from None
    if naive.tzinfo is not None:
        return naive.astimezone(UTC)
    earlier = naive.replace(tzinfo=zone, fold=0)
    if earlier.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != naive:
        raise Invalid(
            field,
            f"{naive:%Y-%m-%d %H:%M} does not exist in {zone.key}: the clocks skip that hour when "
            "daylight saving time starts; choose a time outside it",
        )
    return earlier.astimezone(UTC)  # in UTC: an instant, whatever the wall clock did
