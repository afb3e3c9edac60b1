"""The attempt list's words: an outcome as a sentence, and how long an attempt ran."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from todos.dashboard.templatetags.board import ago
from todos.dashboard.views.attempt_timeline import attempt_view, now_utc

register = template.Library()


@register.filter
def outcome_words(attempt) -> str:
    """ "Failed (the worker reported it); a retry was scheduled"."""
    return attempt_view(attempt, now_utc()).sentence


@register.filter
def ran_for(attempt) -> str:
    """How long the attempt ran: claim → end (→ now while open)."""
    return attempt_view(attempt, now_utc()).ran


@register.simple_tag
def since(value):
    """ "4m ago", kept current by board.js, the exact time in ``title`` (hover); "—" for none."""
    if not value:
        return mark_safe('<span class="muted">—</span>')
    return format_html("{} ago", ago(value))
