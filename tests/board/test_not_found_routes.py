"""Every person, team and endpoint id route answers a malformed or absent id with the Board's own
404 (templates/board/not_found.html), with DEBUG on (not Django's page listing every URL pattern)
and with DEBUG off (not Django's plain "Not Found")."""

from __future__ import annotations

import pytest
from django.test import Client

from tests import factories
from tests.support.board import login
from todos.dashboard.route_converters import MALFORMED_ID, RowId
from todos.dashboard.views.common import not_found

pytestmark = pytest.mark.usefixtures("store_db")

# Segments no team, endpoint or person has: a NUL, text, signs, a number past any id, non-ASCII.
MALFORMED = ["%00", "a%01b", "no%20such", "-1", "0", "99999999999999999999", "%E2%98%83", "1.5"]

GET_ROUTES = [
    "/teams/{}/",
    "/endpoints/{}/edit/",
    "/endpoints/{}/rotate/",
    "/endpoints/{}/revoke/",
    "/endpoints/{}/delete/",
    "/todos/{}/",
    "/schedules/{}/",
    "/todos/bulk/{}/",
]
POST_ROUTES = [
    "/teams/{}/members/",
    "/teams/acme/members/{}/remove/",
    "/people/{}/deactivate/",
    "/people/{}/reactivate/",
    "/people/{}/password/",
    "/endpoints/{}/edit/",
    "/endpoints/{}/rotate/",
    "/endpoints/{}/revoke/",
    "/endpoints/{}/delete/",
]


@pytest.fixture
def admin_client(world) -> Client:
    """A site admin who also administers acme: every route lets them past its role check."""
    person = factories.user("root", superuser=True)
    factories.member(world.acme, person, "admin")
    return login(person)


def board_404(response) -> bool:
    return response.status_code == 404 and response.content == not_found().content


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
@pytest.mark.parametrize("segment", MALFORMED)
def test_a_malformed_id_gets_the_boards_own_404(admin_client, settings, debug, segment):
    settings.DEBUG = debug
    for route in GET_ROUTES:
        response = admin_client.get(route.format(segment))
        assert board_404(response), (route, segment, response.status_code, response.content[:300])
        assert b"URLconf" not in response.content and b"urlpatterns" not in response.content
    for route in POST_ROUTES:
        response = admin_client.post(route.format(segment), {"role": "viewer", "username": "vera"})
        assert board_404(response), (route, segment, response.status_code, response.content[:300])


@pytest.mark.parametrize("debug", [True, False], ids=["debug-on", "debug-off"])
def test_the_reported_urls_get_the_boards_own_404(alice_client, settings, debug):
    settings.DEBUG = debug
    for url in ("/teams/%00/", "/endpoints/%00/edit/"):
        response = alice_client.get(url)
        assert board_404(response), (url, response.content[:300])
        assert b"Using the URLconf" not in response.content


def test_a_well_formed_id_still_reaches_its_page(admin_client, world):
    assert admin_client.get("/teams/acme/").status_code == 200
    assert admin_client.get(f"/endpoints/{world.acme_ep.slug}/edit/").status_code == 200


@pytest.mark.parametrize(
    ("segment", "value"),
    [
        ("1", 1),
        ("42", 42),
        (str(2**31 - 1), 2**31 - 1),
        (str(2**31), MALFORMED_ID),
        ("0", MALFORMED_ID),
        ("٣", MALFORMED_ID),
    ],
)
def test_row_ids_outside_a_rows_range_are_malformed(segment, value):
    assert RowId().to_python(segment) == value
