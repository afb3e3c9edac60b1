"""With local passwords off (docs/sign-in.md, "Local passwords off: break-glass") a password is of
use to site admins only: the People page offers no reset for anyone else, and the store refuses it
with a message that says why, writing nothing."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.urls import reverse

from tests import factories
from tests.support.board import login
from todos.core.db import connect, execute
from todos.core.errors import Conflict
from todos.core.store import people
from todos.core.store.scopes import OperatorScope

pytestmark = pytest.mark.usefixtures("store_db")

PASSWORDS_OFF = override_settings(BOARD_OIDC_ONLY=True)


def password_of(user) -> str:
    return get_user_model().objects.get(pk=user.pk).password


def resets() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM audit_log WHERE action = 'person.password_reset'").fetchone()[
            "n"
        ]


def row_of(page: str, user) -> str:
    return re.search(rf'<tr id="person-{user.id}">.*?</tr>', page, re.S).group(0)


@PASSWORDS_OFF
def test_the_store_refuses_a_persons_reset_and_resets_a_site_admins():
    root = factories.user("root", superuser=True)
    other_admin = factories.user("breakglass", superuser=True)
    pat = factories.user("pat")
    by = OperatorScope(user_id=root.id, username="root")
    before = password_of(pat)
    with pytest.raises(Conflict, match="local passwords are off: pat signs in through the identity provider"):
        execute(people.reset_password(by, user_id=pat.id))
    assert password_of(pat) == before and resets() == 0
    with pytest.raises(Conflict, match="local passwords are off"):
        execute(people.reset_password(None, user_id=pat.id))  # manage.py person reset-password too
    assert execute(people.reset_password(by, user_id=other_admin.id)).person.username == "breakglass"
    assert resets() == 1


def test_the_page_hides_the_reset_only_while_passwords_are_off():
    root = login(factories.user("root", superuser=True))
    pat = factories.user("pat")
    admin = factories.user("breakglass", superuser=True)
    reset_link = "Reset password…"
    page = root.get(reverse("people")).content.decode()
    assert reset_link in row_of(page, pat) and reset_link in row_of(page, admin)
    with PASSWORDS_OFF:
        page = root.get(reverse("people")).content.decode()
    assert reset_link not in row_of(page, pat)
    assert "Deactivate…" in row_of(page, pat)  # the row's other action stays
    assert reset_link in row_of(page, admin)  # the break-glass account keeps its password


@PASSWORDS_OFF
def test_asking_or_posting_a_persons_reset_is_refused_with_the_reason():
    root = login(factories.user("root", superuser=True))
    pat = factories.user("pat")
    before = password_of(pat)
    reason = "Cannot reset the password: local passwords are off: pat signs in through the identity provider."
    for response in (
        root.get(reverse("person_password_reset", args=[pat.id])),
        root.post(reverse("person_password_reset", args=[pat.id])),
    ):
        assert response.status_code == 409
        assert reason in response.content.decode()
    assert password_of(pat) == before and resets() == 0
