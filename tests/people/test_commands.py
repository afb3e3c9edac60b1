"""Shell parity for a headless setup: ``manage.py team`` and ``manage.py person``, with clear errors
for unknown teams, people and roles; ``vend`` names the team command when the team is missing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command

from tests import factories
from todos.core.db import connect

pytestmark = pytest.mark.usefixtures("store_db")


def run(*args) -> str:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue()


def members(slug: str) -> dict[str, str]:
    with connect() as conn:
        rows = conn.execute(
            "SELECT u.username, m.role FROM team_members m JOIN teams t ON t.id = m.team_id "
            "JOIN auth_user u ON u.id = m.user_id WHERE t.slug = %s",
            (slug,),
        ).fetchall()
    return {r["username"]: r["role"] for r in rows}


def password_of(output: str) -> str:
    return next(line.split(": ", 1)[1] for line in output.splitlines() if line.startswith("password: "))


def test_a_headless_setup_from_team_to_first_agent():
    assert "Created team acme (Acme Inc.)" in run("team", "create", "acme", "Acme Inc.")
    out = run("person", "create", "alice", "--team", "acme", "--role", "admin")
    assert authenticate(username="alice", password=password_of(out)) is not None
    run("person", "create", "bob")
    assert "bob is now viewer of acme (added)" in run("team", "add", "acme", "bob", "--role", "viewer")
    assert "(changed)" in run("team", "add", "acme", "bob", "--role", "operator")
    assert members("acme") == {"alice": "admin", "bob": "operator"}
    assert "Removed bob from acme" in run("team", "remove", "acme", "bob")
    assert members("acme") == {"alice": "admin"}
    listing = run("team", "list")
    assert "acme" in listing and "alice (admin)" in listing
    assert "token:" in run("vend", "--team", "acme", "--name", "Worker", "--queues", "default")
    with connect() as conn:
        actions = [r["action"] for r in conn.execute("SELECT action FROM audit_log ORDER BY id").fetchall()]
    assert actions.count("person.create") == 2 and "member.remove" in actions and "team.create" in actions


def test_person_deactivate_reactivate_and_reset_password():
    factories.user("pat")
    assert "Deactivated pat" in run("person", "deactivate", "pat")
    assert authenticate(username="pat", password="pw-for-tests-1") is None
    with pytest.raises(CommandError, match="already deactivated"):
        run("person", "deactivate", "pat")
    with pytest.raises(CommandError, match="'pat' is deactivated; reactivate them with: manage.py person reactivate"):
        run("person", "reset-password", "pat")
    assert "Reactivated pat" in run("person", "reactivate", "pat")
    new = password_of(run("person", "reset-password", "pat"))
    assert authenticate(username="pat", password=new) is not None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("team", "add", "nope", "pat"), "no team with slug 'nope'; create it with: manage.py team create nope"),
        (("team", "add", "acme", "ghost"), "no person named 'ghost'; create them with: manage.py person create ghost"),
        (("team", "add", "acme", "pat", "--role", "king"), "--role must be one of viewer, operator, admin"),
        (("team", "remove", "acme", "pat"), "'pat' is not a member of 'acme'"),
        (("team", "remove", "nope", "pat"), "no team with slug 'nope'"),
        (("team", "create", "acme"), "slug: 'acme' is already taken"),
        (("team", "create", "Bad Slug"), "slug:"),
        (("person", "create", "pat"), "username: 'pat' is already taken"),
        (("person", "create", "has space"), "username: must be"),
        (("person", "create", "sam", "--role", "viewer"), "--role needs --team"),
        (("person", "create", "sam", "--team", "acme", "--role", "king"), "--role must be one of"),
        (("person", "create", "sam", "--team", "nope"), "no team with slug 'nope'"),
        (("person", "deactivate", "ghost"), "no person named 'ghost'"),
        (("vend", "--team", "nope", "--name", "W", "--queues", "q"), 'manage.py team create nope "Team name"'),
    ],
)
def test_clear_errors_that_write_nothing(args, message):
    factories.team("acme")
    factories.user("pat")
    with connect() as conn:
        before = conn.execute(
            "SELECT (SELECT count(*) FROM auth_user) + (SELECT count(*) FROM teams) "
            "+ (SELECT count(*) FROM team_members) + (SELECT count(*) FROM audit_log) AS n"
        ).fetchone()
    with pytest.raises(CommandError) as caught:
        run(*args)
    assert message in str(caught.value)
    with connect() as conn:
        after = conn.execute(
            "SELECT (SELECT count(*) FROM auth_user) + (SELECT count(*) FROM teams) "
            "+ (SELECT count(*) FROM team_members) + (SELECT count(*) FROM audit_log) AS n"
        ).fetchone()
    assert after == before


def test_up_demo_gives_the_viewer_a_known_password():
    from django.contrib.auth import get_user_model

    from todos.ops.demo import DEMO_VIEWER_PASSWORD, ensure_viewer_password, seed

    assert ensure_viewer_password() is None  # no demo, no viewer
    seed(factories.user("admin", superuser=True), todos=5)
    assert authenticate(username="viewer", password=DEMO_VIEWER_PASSWORD) is None  # seeded without one
    assert ensure_viewer_password() == DEMO_VIEWER_PASSWORD
    assert authenticate(username="viewer", password=DEMO_VIEWER_PASSWORD) is not None
    assert ensure_viewer_password() == DEMO_VIEWER_PASSWORD  # printed again on the next start
    viewer = get_user_model().objects.get(username="viewer")
    viewer.set_password("their-own-password")
    viewer.save(update_fields=["password"])
    assert ensure_viewer_password() is None  # a password of its own is left alone and not printed
    assert authenticate(username="viewer", password="their-own-password") is not None


def test_the_readme_setup_runs_as_written():
    """README "Add your team and your first agent": its manage.py lines run as written, in order,
    and leave a team, its admin and an endpoint; its worker is Python that parses and imports only
    what the client exports."""
    import ast
    import re
    import shlex
    from pathlib import Path

    readme = Path(__file__).resolve().parents[2].joinpath("README.md").read_text()
    section = readme.split("## Add your team and your first agent", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = block.strip().splitlines()
    assert len(lines) == 3
    commands = [re.sub(r"\s+#.*$", "", line) for line in lines if line.startswith("uv run manage.py ")]
    assert [shlex.split(c)[3] for c in commands] == ["team", "person", "vend"]
    worker = section.split("```python\n", 1)[1].split("```", 1)[0]
    imports = [node for node in ast.walk(ast.parse(worker)) if isinstance(node, ast.ImportFrom)]
    import board_client

    assert [(i.module, [a.name for a in i.names]) for i in imports] == [("board_client", ["Client", "Worker"])]
    assert all(hasattr(board_client, name) for name in ("Client", "Worker"))
    for command in commands[:3]:
        run(*shlex.split(command)[3:])
    assert members("acme") == {"alice": "admin"}
    with connect() as conn:
        assert conn.execute("SELECT scope_queues FROM endpoints").fetchone()["scope_queues"] == ["builds"]


def test_the_demo_shows_work_no_agent_can_claim():
    from django.contrib.auth import get_user_model

    from tests.factories import relayed
    from todos.core.selectors.access import viewer_for
    from todos.core.selectors.claimability import stuck_work
    from todos.ops.demo import STRAYS, seed

    admin = factories.user("admin", superuser=True)
    seed(admin, todos=40)
    relayed()
    [stray] = stuck_work(viewer_for(get_user_model().objects.get(pk=admin.pk)))
    assert (stray.endpoint_slug, stray.queue, stray.reason, stray.pending) == (
        "ingest",
        "triage",
        "no_claim_verb",
        STRAYS,
    )
    assert stray.claimers  # the retarget fix names the demo's triage worker
