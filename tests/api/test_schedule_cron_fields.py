"""``create_schedule`` and ``update_schedule`` refuse a cron expression of six fields (seconds
first), as the OpenAPI document's "five fields" says, naming ``cron`` and writing nothing."""

from __future__ import annotations

from tests.api.test_schedules_api import NIGHTLY, schedule_rows

SIX = "*/5 * * * * *"
PROBLEM = f"cron: does not parse: Wrong number of fields in {SIX!r}: 6, not five"


def test_create_schedule_refuses_six_fields(api, tenancy):
    message = api.error(tenancy.worker_token, "create_schedule", {**NIGHTLY, "cron": SIX}, "invalid")
    assert message.startswith(PROBLEM), message
    assert schedule_rows() == []


def test_update_schedule_refuses_six_fields(api, tenancy):
    made = api.ok(tenancy.worker_token, "create_schedule", NIGHTLY)["schedule"]
    message = api.error(tenancy.worker_token, "update_schedule", {**NIGHTLY, "id": made["id"], "cron": SIX}, "invalid")
    assert message.startswith(PROBLEM), message
    assert [row["cron"] for row in schedule_rows()] == [NIGHTLY["cron"]]
