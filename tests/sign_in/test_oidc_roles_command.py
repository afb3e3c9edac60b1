"""``manage.py oidc-roles``: list, add, remove, with clear errors and nothing written on them."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests import factories
from todos.core.db import connect

pytestmark = pytest.mark.usefixtures("store_db")


def run(*args) -> str:
    out = StringIO()
    call_command("oidc-roles", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def count() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM oidc_role_mappings").fetchone()["n"]  # type: ignore[index]


def test_add_list_and_remove():
    factories.team("acme")
    assert "No mappings yet" in run("list")
    assert "Group ops now grants operator of acme" in run("add", "ops", "acme", "--role", "operator")
    assert run("list").split() == ["ops", "acme", "operator"]
    with connect() as conn:
        audited = conn.execute("SELECT actor FROM audit_log WHERE action = 'sign_in.mapping_add'").fetchall()
    assert [row["actor"] for row in audited] == ["system"]
    assert "no longer grants" in run("remove", "ops", "acme")
    assert count() == 0


def test_bad_input_is_refused_and_writes_nothing():
    factories.team("acme")
    with pytest.raises(CommandError, match="--role must be one of"):
        run("add", "ops", "acme", "--role", "king")
    with pytest.raises(CommandError, match="no team with slug 'nope'"):
        run("add", "ops", "nope")
    with pytest.raises(CommandError, match="group: is required"):
        run("add", " ", "acme")
    run("add", "ops", "acme")
    with pytest.raises(CommandError, match="already maps to this team"):
        run("add", "ops", "acme", "--role", "admin")
    with pytest.raises(CommandError, match="does not map to 'acme'"):
        run("remove", "devs", "acme")
    assert count() == 1
