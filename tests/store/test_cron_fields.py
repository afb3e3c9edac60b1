"""A schedule's cron expression has exactly five fields (minute hour day-of-month month
day-of-week). cronsim also reads six (seconds first) and ``@`` macros: Board refuses them by name,
before anything is written, so a schedule can never fire every few seconds."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.store.helpers import one
from tests.store.test_schedules import fields, make
from todos.core import schedule_times
from todos.core.db import execute
from todos.core.errors import Invalid
from todos.core.store import schedules as schedule_store

NOT_FIVE = ["*/5 * * * * *", "0 0 3 * * *", "0 3 * * * 2027", "@hourly", "0 3 * *"]


@pytest.mark.parametrize("expr", NOT_FIVE)
def test_anything_but_five_fields_is_refused_naming_the_count(expr):
    with pytest.raises(Invalid) as refused:
        schedule_times.cron(expr)
    assert refused.value.field == "cron"
    count = len(expr.split())
    assert refused.value.problem == (
        f"does not parse: Wrong number of fields in {expr!r}: {count}, not five"
        " (minute hour day-of-month month day-of-week)"
    )


@pytest.mark.parametrize("expr", ["*/5 * * * *", "0 3 * * MON-FRI", "  30   8 * * *  "])
def test_five_fields_are_accepted(expr):
    assert schedule_times.cron(expr) == " ".join(expr.split())


def test_create_with_six_fields_writes_nothing(world):
    with pytest.raises(Invalid, match="cron: does not parse: Wrong number of fields in '\\*/5 \\* \\* \\* \\* \\*': 6"):
        make(world, world.human, cron="*/5 * * * * *")
    assert one("SELECT count(*) AS n FROM schedules")["n"] == 0


def test_update_to_six_fields_writes_nothing(world):
    made = make(world, world.human)
    with pytest.raises(Invalid) as refused:
        execute(schedule_store.update(world.human, made.id, now=datetime.now(UTC), **fields(world, cron="* * * * * *")))
    assert refused.value.field == "cron"
    assert one("SELECT cron FROM schedules")["cron"] == made.cron
