"""The shape of a ``manage.py`` command over one team's audited setting.

``concurrency``, ``queue_timeout`` and ``ratelimit`` each ``list`` a team's setting and change it
through the same store statement as the Board's form, as the system. What they share is here: the
team named by its slug, the subcommands that each take it, a whole number read from the shell with
an error naming the field, and a store refusal shown as the command's error.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from todos.core.errors import StoreError
from todos.models import Team


def team_action(sub: Any, name: str, help: str, *, team_flag: bool = False) -> ArgumentParser:
    """A subcommand of ``sub`` that names its team by slug (``--team <slug>`` with ``team_flag``)."""
    action = sub.add_parser(name, help=help)
    if team_flag:
        action.add_argument("--team", required=True, help="the team's slug")
    else:
        action.add_argument("team", help="the team's slug")
    return action


def whole_number(field: str, value: str, allowed: str) -> int:
    """``value`` as an int, or the command's error naming ``field`` and what is ``allowed``."""
    try:
        return int(value)
    except ValueError:
        raise CommandError(f"{field}: must be {allowed}, got {value!r}") from None


class TeamSettingCommand(BaseCommand):
    """``list`` shows the team's setting; any other action changes it (a store refusal is the
    command's error)."""

    def show(self, team_id: UUID) -> None:
        raise NotImplementedError

    def change(self, action: str, team_id: UUID, options: dict[str, Any]) -> None:
        raise NotImplementedError

    def handle(self, *args: Any, action: str, team: str, **options: Any) -> None:
        team_id = Team.objects.filter(slug=team).values_list("id", flat=True).first()
        if team_id is None:
            raise CommandError(f"no team with slug {team!r}")
        if action == "list":
            self.show(team_id)
            return
        try:
            self.change(action, team_id, options)
        except StoreError as exc:
            raise CommandError(exc.message) from None
