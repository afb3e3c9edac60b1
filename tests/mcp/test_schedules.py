"""The schedule tools over MCP: the same verbs as HTTP, through the SDK's own client (which checks
each result against the tool's outputSchema)."""

from __future__ import annotations

from tests import factories
from tests.mcp.client import mcp_client, run
from todos.core import db

NIGHTLY = {"name": "nightly", "cron": "0 3 * * *", "timezone": "UTC", "queue": "default", "title": "Report"}


async def ok(session, tool: str, arguments: dict) -> dict:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content[0].text}"
    return result.structured_content


def schedule_count() -> int:
    with db.connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM schedules").fetchone()["n"]


def test_list_create_pause_resume_delete(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            made = (await ok(s, "create_schedule", NIGHTLY))["schedule"]
            listed = await ok(s, "list_schedules", {})
            paused = (await ok(s, "pause_schedule", {"id": made["id"]}))["schedule"]
            resumed = (await ok(s, "resume_schedule", {"id": made["id"]}))["schedule"]
            gone = await ok(s, "delete_schedule", {"id": made["id"]})
            after = await ok(s, "list_schedules", {})
            return made, listed, paused, resumed, gone, after

    made, listed, paused, resumed, gone, after = run(scenario())
    assert made["name"] == "nightly" and made["timezone"] == "UTC" and made["paused"] is False
    assert [x["id"] for x in listed["schedules"]] == [made["id"]]
    assert paused["paused"] is True and resumed["paused"] is False
    assert gone == {"id": made["id"], "name": "nightly", "deleted": True}
    assert after == {"schedules": [], "next_cursor": None} and schedule_count() == 0


def test_errors_are_tool_errors_naming_the_field_or_not_found(url, tenancy):
    sibling = factories.endpoint(tenancy.team, slug="sibling", queues=("default",))

    async def theirs():
        async with mcp_client(url, sibling.token) as client:
            return (await ok(client.session, "create_schedule", NIGHTLY))["schedule"]["id"]

    their_id = run(theirs())

    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            bad_cron = await client.session.call_tool("create_schedule", {**NIGHTLY, "cron": "every day"})
            bad_zone = await client.session.call_tool("create_schedule", {**NIGHTLY, "timezone": "Mars/Olympus"})
            not_mine = await client.session.call_tool("delete_schedule", {"id": their_id})
            return bad_cron, bad_zone, not_mine

    bad_cron, bad_zone, not_mine = run(scenario())
    assert bad_cron.is_error and bad_cron.content[0].text.startswith("invalid: ") and "cron" in bad_cron.content[0].text
    assert bad_zone.is_error and "timezone" in bad_zone.content[0].text
    assert not_mine.is_error and not_mine.content[0].text == "not_found: no such schedule"
    assert schedule_count() == 1  # the sibling's, untouched


def test_edit_and_fire_now(url, tenancy):
    async def scenario():
        async with mcp_client(url, tenancy.token) as client:
            s = client.session
            made = (await ok(s, "create_schedule", NIGHTLY))["schedule"]
            edited = (await ok(s, "update_schedule", {**NIGHTLY, "id": made["id"], "cron": "*/15 * * * *"}))["schedule"]
            fired = await ok(s, "fire_schedule", {"id": made["id"]})
            partial = await s.call_tool("update_schedule", {"id": made["id"], "title": "Only this"})
            return made, edited, fired, partial

    made, edited, fired, partial = run(scenario())
    assert edited["id"] == made["id"] and edited["cron"] == "*/15 * * * *" and edited["title"] == "Report"
    with db.connect() as conn:
        todo = conn.execute("SELECT * FROM todos WHERE id = %s", (fired["todo_id"],)).fetchone()
        cron = conn.execute("SELECT cron FROM schedules").fetchone()["cron"]
    assert todo["source"] == "schedule" and todo["title"] == "Report" and todo["state"] == "pending"
    assert fired["schedule"]["fires"][0]["todo_id"] == fired["todo_id"]
    assert partial.is_error and partial.content[0].text.startswith("invalid: ") and cron == "*/15 * * * *"
