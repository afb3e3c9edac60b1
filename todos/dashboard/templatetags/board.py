"""Template helpers for the Board: timestamps, countdowns, states, masked JSON, safe links.

Everything that came from an agent or a producer (titles, payloads, results, summaries,
artifacts) is untrusted: these helpers return plain strings that the template escapes, and build
markup only around values they escape themselves (``format_html``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django import template
from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from todos.core.filters import BOARD_STATES
from todos.dashboard import clock

register = template.Library()

STATE_LABELS = {key: label for key, label in BOARD_STATES.items() if key != "all"}  # a todo's display state
# A shape per state, so the state reads without colour (the text says it too).
STATE_GLYPHS = {
    "pending": "○",
    "blocked": "⧖",
    "scheduled": "◷",
    "claimed": "◐",
    "retry": "↻",
    "dead": "✕",
    "done": "✓",
    "canceled": "⊘",
}
MASK = "••••••"


def iso(value: datetime) -> str:
    """The instant in UTC, for machine-read attributes (countdowns, cursors)."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@register.filter
def isotime(value):
    return iso(value) if value else ""


@register.simple_tag
def ts(value):
    """A time in the viewer's zone with the zone written ("2026-12-02 14:42 EST"), rendered here
    (``todos/dashboard/clock.py``), with the exact instant and its offset on hover."""
    if not value:
        return mark_safe('<span class="muted">—</span>')
    return clock.time_element(value)


@register.simple_tag
def fire_time(value, schedule_zone=""):
    """A schedule's fire time in the viewer's zone, and in the schedule's own zone beside it when
    that differs (its cron is read there)."""
    if not value:
        return mark_safe('<span class="muted">—</span>')
    shown = clock.time_element(value)
    own = clock.known_zone(schedule_zone) if schedule_zone else None
    if own is None or own.key == clock.current().key:
        return shown
    there = clock.local(value, own)
    return format_html(
        '{} <span class="muted schedule-zone">({} {} in {})</span>',
        shown,
        there.strftime("%a %H:%M"),
        clock.abbreviation(there),
        own.key,
    )


@register.simple_tag
def ago(value, now=None):
    """Age since ``value`` ("4m"), refreshed by board.js; the exact time on hover."""
    if not value:
        return mark_safe('<span class="muted">—</span>')
    now = now or datetime.now(UTC)
    return format_html(
        '<time datetime="{}" data-format="age" title="{}">{}</time>',
        iso(value),
        clock.exact(value),
        age_text((now - value).total_seconds()),
    )


@register.simple_tag
def countdown(value, prefix="", refresh=False):
    """A live countdown to a lease expiry or retry time: "in 4m 12s" / "lapsed 3s ago".

    ``refresh``: once it lapses, its live region is rendered again, for a time whose passing
    changes what the region says but writes nothing that would refresh it (a rate key's refill)."""
    if not value:
        return ""
    now = datetime.now(UTC)
    seconds = (value - now).total_seconds()
    text = f"in {duration_text(seconds)}" if seconds >= 0 else f"lapsed {duration_text(-seconds)} ago"
    return format_html(
        '<time class="countdown" data-countdown="{}"{} datetime="{}" title="{}">{}</time>',
        iso(value),
        mark_safe(" data-countdown-refresh") if refresh else "",
        iso(value),
        clock.exact(value),
        text,
    )


def duration_text(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    if seconds < 60:
        return f"{seconds}s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m {sec:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    return f"{hours // 24}d {hours % 24}h"


def age_text(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"


@register.filter
def state_label(key):
    return STATE_LABELS.get(key, key)


@register.filter
def state_glyph(key):
    return STATE_GLYPHS.get(key, "•")


def _masked(key: str) -> bool:
    lowered = key.lower()
    return any(m.lower() in lowered for m in settings.BOARD_MASKED_PAYLOAD_KEYS)


def mask(value):
    """A copy of a JSON value with every key named in BOARD_MASKED_PAYLOAD_KEYS masked, at any depth."""
    if isinstance(value, dict):
        return {k: (MASK if _masked(str(k)) and v is not None else mask(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    return value


@register.filter
def pretty_json(value):
    """Indented JSON with secret-looking keys masked. Returns plain text: the template escapes it."""
    if value is None:
        return ""
    return json.dumps(mask(value), indent=2, ensure_ascii=False, sort_keys=False)


@register.filter
def https_url(value):
    """True only for an ``https://`` URL with a host: the one kind of artifact rendered as a link."""
    if not isinstance(value, str) or not value[:8].lower() == "https://":
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme.lower() == "https" and bool(parts.hostname) and not any(c.isspace() for c in value)


@register.filter
def short(value, length=11):
    return (value or "")[: int(length)]


@register.simple_tag(takes_context=True)
def query(context, **overrides):
    """The current list filter's querystring with some params replaced (``{% query state='dead' %}``)."""
    f = context["filter"]
    return f.query(**overrides)


@register.filter
def get_item(mapping, key):
    """``mapping[key]`` in a template (ids to display names)."""
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.filter
def detail_value(value):
    """An audit detail value as short text: lists joined, objects as compact JSON."""
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dict):
        # an edit's old and new payloads are in here: secret-looking keys masked as on the drawer
        return json.dumps(mask(value), ensure_ascii=False, separators=(", ", ": "))
    return value


@register.filter
def audit_words(code):
    """An audit action as words (``todos/dashboard/wording.py``); the template shows the code beside it."""
    from todos.dashboard import wording

    return wording.action(code)


@register.filter
def disposition_words(code):
    from todos.dashboard import wording

    return wording.DISPOSITIONS.get(code or "", code or "")


@register.simple_tag
def outcome_words(attempt, forced_by=None):
    """An ended attempt as a sentence (``todos/dashboard/wording.py``)."""
    from todos.dashboard import wording

    ran = None
    if attempt.outcome == "timed_out" and attempt.ended_at and attempt.claimed_at:
        ran = duration_text((attempt.ended_at - attempt.claimed_at).total_seconds())
    return wording.outcome(
        attempt.outcome, attempt.disposition, forced_by=forced_by if attempt.forced else None, ran=ran
    )


@register.filter
def duration(seconds):
    """A number of seconds in words: "5m 00s", "2h 00m" (a run-time limit)."""
    return "" if seconds is None else duration_text(seconds)


@register.filter
def zone_input(value):
    """A time as a ``datetime-local`` field's value, in the viewer's zone (the label says which)."""
    if not value:
        return ""
    if isinstance(value, str):  # the form's own input, shown again after an error
        return value
    return clock.input_value(value)


@register.filter
def has_masked_keys(value) -> bool:
    """The JSON value holds a secret-looking key: the Board shows it masked, so it cannot offer it
    for editing (saving the form would write the mask over the secret)."""
    return mask(value) != value


@register.filter
def plain_json(value):
    """Indented JSON, unmasked: only for values :func:`has_masked_keys` found nothing to mask in."""
    if value is None:
        return ""
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.inclusion_tag("todos/_trace.html")
def trace(traceparent):
    """A trace id from a stored traceparent, linked through ``BOARD_TRACE_URL`` when it is set
    (docs/telemetry.md, "The Board")."""
    from todos.core.telemetry import trace_id_of

    trace_id = trace_id_of(traceparent)
    template_url = settings.BOARD_TRACE_URL
    url = template_url.replace("{trace_id}", trace_id) if template_url and trace_id else None
    return {"trace_id": trace_id, "url": url}
