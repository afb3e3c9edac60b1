"""Rough edges a first walk through the Board found, each held fixed here.

Each test failed on the Board as it was before its fix; the browser-only ones are in
``test_rough_edges_browser.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from tests.factories import relayed
from tests.support.board import make
from todos.core.db import execute
from todos.core.store import agent as agent_store

pytestmark = pytest.mark.usefixtures("store_db")

ROOT = Path(__file__).resolve().parents[2]


def text_of(response) -> str:
    return response.content.decode()


# --- "Board · adminadmin" ------------------------------------------------------------------------


def test_a_human_claim_names_its_claimant_once(world, alice_client):
    todo = make(world, "mine")
    body = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    attempt = body[body.index('class="attempt-who"') :]
    attempt = attempt[: attempt.index("</div>")]
    assert "Board · alice" in attempt
    assert "alicealice" not in attempt


# --- the live indicator on pages that are not live --------------------------------------------


def test_pages_that_are_not_live_do_not_say_offline(world, alice_client):
    login = text_of(Client().get(reverse("login")))
    groups = text_of(alice_client.get(reverse("dead_letter_groups")))
    new = text_of(alice_client.get(reverse("todo_new")))
    for body in (login, groups, new):
        status = re.search(r'<span id="live-status"[^>]*>([^<]*)</span>', body)
        assert status, body[:300]
        assert "hidden" in status.group(0) and status.group(1) == ""
        assert 'data-live-page=""' in body
        assert ">offline<" not in body


# --- "Last seen: never" beside a heartbeat ----------------------------------------------------


def test_an_agent_that_heartbeats_is_not_never_seen(world, alice_client):
    todo = make(world, "claimed")
    execute(agent_store.heartbeat(world.agent, todo.id))  # through the store: the endpoint's last_seen_at stays NULL
    body = text_of(alice_client.get(reverse("agents")))
    row = body[body.index("acme-worker") :]
    row = row[: row.index("</tr>")]
    assert "never" not in row
    assert row.count(" ago") >= 2  # last heartbeat and last seen


# --- the Teams slug pattern -------------------------------------------------------------------


SYNTAX_IN_CLASS = set("()[]{}/-|")


def v_flag_class_errors(pattern: str) -> list[str]:
    """The characters of ``pattern``'s classes that the ``v`` flag requires escaped (a range's
    dash excepted): what makes Chromium reject a ``pattern`` attribute."""
    errors = []
    for cls in re.findall(r"\[((?:\\.|[^\]\\])*)\]", pattern):
        tokens = re.findall(r"\\.|.", cls)
        i = 0
        while i < len(tokens):
            if i + 2 < len(tokens) and tokens[i + 1] == "-" and len(tokens[i]) == len(tokens[i + 2]) == 1:
                i += 3  # a range such as a-z
                continue
            if tokens[i] in SYNTAX_IN_CLASS:
                errors.append(tokens[i])
            i += 1
    return errors


def test_every_pattern_attribute_is_valid_with_the_v_flag():
    """Chromium compiles ``pattern`` with the ``v`` flag, where a literal ``-`` (or ``(``, ``|``, …)
    inside a class must be escaped; an invalid pattern is ignored (with a console error), so the
    field accepts anything. The browser test checks the Teams form live."""
    assert v_flag_class_errors("[a-z0-9][a-z0-9-]*") == ["-"]  # the Teams slug on main
    assert v_flag_class_errors("[a-z0-9][a-z0-9\\-]*") == []
    patterns = [
        (path.name, pattern)
        for path in (ROOT / "templates").rglob("*.html")
        for pattern in re.findall(r'pattern="([^"]*)"', path.read_text())
    ]
    assert len(patterns) >= 2
    assert [(name, pattern) for name, pattern in patterns if v_flag_class_errors(pattern)] == []


# --- the reveal page's worker command, up's message --------------------------------------------


def test_the_reveal_page_worker_command_needs_only_the_client(world):
    from todos.dashboard.views import endpoints

    source = Path(endpoints.__file__).read_text()
    assert "uv pip install ./clients/python" in source and 'f"board-worker --queue' in source
    assert "manage.py work" not in source


def test_up_names_the_menu_item_to_change_the_password():
    from todos.management.commands import up

    source = Path(up.__file__).read_text()
    assert "Change password" in source and "under Account" not in source
    assert "Change password" in (ROOT / "templates" / "base.html").read_text()


# --- contrast of the state tags ---------------------------------------------------------------


def _luminance(hex_colour: str) -> float:
    h = hex_colour.lstrip("#")
    channels = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_state_tags_have_at_least_4_5_to_1_contrast_in_both_themes():
    css = (ROOT / "static" / "board" / "board.css").read_text()
    blocks = [b for b in re.findall(r"\{([^{}]*)\}", css) if "--done:" in b]
    assert len(blocks) >= 2
    checked = 0
    for block in blocks:
        colours = dict(re.findall(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6})", block))
        for state in ("pending", "claimed", "retry", "dead", "done", "canceled"):
            if state in colours and f"{state}-bg" in colours:
                ratio = contrast(colours[state], colours[f"{state}-bg"])
                assert ratio >= 4.5, (state, colours[state], colours[f"{state}-bg"], round(ratio, 2))
                checked += 1
    assert checked >= 12


# --- the full todo page has an h1 -------------------------------------------------------------


def test_the_full_todo_page_has_one_h1_and_the_drawer_none(world, alice_client):
    todo = make(world, "pending", title="Reconcile the ledgers")
    page = text_of(alice_client.get(reverse("todo_detail", args=[todo.id])))
    assert len(re.findall(r"<h1\b", page)) == 1
    assert re.search(r"<h1[^>]*>Reconcile the ledgers</h1>", page)
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    assert "<h1" not in drawer


# --- "Failed 1h": a link, and a name that says what it counts -----------------------------------


def test_every_number_of_the_overview_is_a_link(world, alice_client):
    make(world, "dead", title="gave up")
    make(world, "done")
    body = text_of(alice_client.get(reverse("overview_table")))
    assert "Failed 1h" not in body and "Dead 1h" in body
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)[1:]:
        cells = re.findall(r'<td class="num[^"]*">(.*?)</td>', row, re.S)
        assert len(cells) == 8, row  # pending, blocked, scheduled, claimed, retry, dead, done, dead 1h
        for cell in cells:
            assert re.fullmatch(r'<a href="[^"]+">[\d,]+</a>', cell.strip()), cell
    assert re.search(r'<a href="/todos/\?state=dead&amp;queue=default&amp;team=acme">1</a></td>\s*<td', body)


# --- a search shows its count, and the tabs count the search ------------------------------------


def test_a_search_counts_its_results_in_the_tabs_and_above_the_list(world, alice_client):
    make(world, "pending", title="Invoice for March")
    make(world, "pending", title="invoice for April")
    make(world, "dead", title="Invoice for May")
    for _ in range(3):
        make(world, "pending", title="Something else")
    body = text_of(alice_client.get(reverse("todo_list") + "?q=invoice"))
    counts = dict(re.findall(r'data-count="(\w+)">([^<]+)<', body))
    expected = {
        "all": "3",
        "pending": "2",
        "blocked": "0",
        "scheduled": "0",
        "claimed": "0",
        "retry": "0",
        "dead": "1",
        "done": "0",
        "canceled": "0",
    }
    assert counts == expected
    assert re.search(r'data-result-count="3">3 todos match “invoice”', body)
    pending = text_of(alice_client.get(reverse("todo_list") + "?q=invoice&state=pending"))
    assert re.search(r'data-result-count="2">2 todos match “invoice” in Pending', pending)
    none = text_of(alice_client.get(reverse("todo_list") + "?q=nothing-like-it"))
    assert 'data-result-count="0">No todos match “nothing-like-it”' in none
    assert 'data-count="all">0<' in none
    relayed()
    unsearched = text_of(alice_client.get(reverse("todo_list")))
    assert 'data-count="all">6<' in unsearched and "data-result-count" not in unsearched
    live = text_of(alice_client.get(reverse("todo_counts") + "?q=invoice"))  # the live region agrees
    assert 'data-count="all">3<' in live


def test_a_search_past_its_window_says_its_counts_are_at_least(world, alice_client, monkeypatch):
    from todos.core.selectors import todo_list

    monkeypatch.setattr(todo_list, "SEARCH_SCAN_ROWS", 3)
    for n in range(5):
        make(world, "pending", title=f"Invoice {n}")
    body = text_of(alice_client.get(reverse("todo_list") + "?q=invoice"))
    assert 'data-count="all">3+<' in body
    assert "3+ todos match “invoice”, among the newest 3 todos of this filter." in body


# --- bulk: nothing to offer at 0, no 400 with nothing selected ------------------------------------


def bulk_bar(body: str) -> str:
    return body[body.index('<form id="bulk-form"') : body.index("</form>", body.index('<form id="bulk-form"'))]


def test_the_list_offers_only_bulk_actions_that_have_rows_to_change(world, alice_client):
    make(world, "done")
    make(world, "pending")
    relayed()  # the tabs' counts are the relay's
    done = bulk_bar(text_of(alice_client.get(reverse("todo_list") + "?state=done")))
    assert "all matching" not in done  # nothing done can be retried or canceled
    pending = bulk_bar(text_of(alice_client.get(reverse("todo_list") + "?state=pending")))
    assert "Cancel all matching" in pending and "Retry all matching" not in pending
    everything = bulk_bar(text_of(alice_client.get(reverse("todo_list"))))
    assert "Cancel all matching" in everything and "Retry all matching" not in everything
    make(world, "dead")
    relayed()
    everything = bulk_bar(text_of(alice_client.get(reverse("todo_list"))))
    assert "Cancel all matching" in everything and "Retry all matching" in everything
    # the "selected" buttons are marked for board.js to turn off while nothing is ticked
    assert everything.count("data-needs-selection") == 2


def test_selected_with_nothing_selected_is_a_hint_not_a_400(world, alice_client):
    from tests.support.board import htmx

    response = alice_client.post(reverse("bulk_preview"), {"plan": "retry:selected"}, **htmx())
    assert response.status_code == 200
    body = text_of(response)
    assert "Select the todos first" in body and "notice-error" not in body
    assert "HX-Trigger" not in response  # no error toast
    page = alice_client.post(reverse("bulk_preview"), {"plan": "cancel:selected", "next": "/todos/"})
    assert page.status_code == 200 and "Select the todos first" in text_of(page)


# --- extend lease: a choice of durations, and the new expiry said -----------------------------------


def test_extend_lease_offers_durations_and_says_the_new_expiry(world, alice_client):
    import json
    from datetime import UTC, datetime, timedelta

    from tests.support.board import htmx

    todo = make(world, "mine")
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    form = drawer[drawer.index(f'action="/todos/{todo.id}/extend/"') :]
    form = form[: form.index("</form>")]
    assert re.findall(r'<option value="(\d+)"', form) == ["15", "30", "60", "120", "240", "480"]
    assert 'value="30" selected' in form  # BOARD_HUMAN_LEASE_SECONDS
    assert "lease-expiry" in drawer  # the exact expiry beside the countdown
    response = alice_client.post(reverse("todo_extend", args=[todo.id]), {"lease_minutes": "120"}, **htmx())
    assert response.status_code == 200
    with_expiry = execute_row(todo.id)
    assert timedelta(minutes=119) < with_expiry - datetime.now(UTC) <= timedelta(minutes=120)
    toast = json.loads(response["HX-Trigger"])["board:toast"]["items"][0]["message"]
    assert f"it now expires at {with_expiry:%H:%M:%S} UTC (in 2h 00m)" in toast
    bad = alice_client.post(reverse("todo_extend", args=[todo.id]), {"lease_minutes": "0"}, **htmx())
    assert bad.status_code == 422 and "lease_minutes" in text_of(bad)
    assert execute_row(todo.id) == with_expiry  # nothing written


def execute_row(todo_id: str):
    from todos.core.db import connect

    with connect() as conn:
        return conn.execute("SELECT lease_expires_at FROM todos WHERE id = %s", (todo_id,)).fetchone()[
            "lease_expires_at"
        ]


# --- force release: asks first, and its attempt says it was forced -----------------------------------


def test_force_release_asks_first_and_its_attempt_says_it_was_forced(world, alice_client):
    from tests.support.board import htmx
    from todos.core.db import connect

    todo = make(world, "claimed")
    row = text_of(alice_client.get(reverse("todo_row", args=[todo.id])))
    assert "force-release" not in row  # no one-click force release in the list
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    form = drawer[drawer.index(f'action="/todos/{todo.id}/force-release/"') :]
    form = form[: form.index("</form>")]
    assert "hx-confirm" not in form
    assert f'data-confirm="force_release-confirm-{todo.id}"' in form
    assert re.search(r'<dialog id="force_release-confirm-[^"]+" class="confirm-dialog"', form)
    assert ">Keep their lease</button>" in form and ">Force release</button>" in form
    assert alice_client.post(reverse("todo_force_release", args=[todo.id]), **htmx()).status_code == 200
    with connect() as conn:
        attempt = conn.execute("SELECT outcome, ended_by FROM todo_attempts WHERE todo_id = %s", (todo.id,)).fetchone()
    assert attempt == {"outcome": "released", "ended_by": f"human:{world.alice.user_id}"}
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    assert "Force-released by Board · alice: the lease was taken away; it went back to pending" in drawer
    assert "released → requeued, forced" in drawer
    # a holder's own release is not called forced
    mine = make(world, "mine")
    execute(__import__("todos.core.store.human", fromlist=["release"]).release(world.alice, mine.id))
    own = text_of(alice_client.get(reverse("todo_drawer", args=[mine.id])))
    assert "Released by its holder; it went back to pending" in own and "forced" not in own


def test_an_agent_release_leaves_ended_by_empty(world):
    from todos.core.db import connect

    todo = make(world, "claimed")
    execute(agent_store.release(world.agent, todo.id))
    with connect() as conn:
        row = conn.execute("SELECT outcome, ended_by FROM todo_attempts WHERE todo_id = %s", (todo.id,)).fetchone()
    assert row == {"outcome": "released", "ended_by": None}


def test_ended_by_refuses_a_malformed_actor(world):
    import psycopg

    from todos.core.db import connect

    todo = make(world, "claimed")
    with connect() as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE todo_attempts SET ended_by = 'alice' WHERE todo_id = %s", (todo.id,))


# --- confirmations: the Board's own dialog, buttons that say what they do -----------------------------


def test_cancel_asks_in_the_boards_dialog_with_unambiguous_buttons(world, alice_client):
    todo = make(world, "pending")
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    form = drawer[drawer.index(f'action="/todos/{todo.id}/cancel/"') :]
    form = form[: form.index("</form>")]
    assert "hx-confirm" not in drawer
    assert "Cancel this todo for good?" in form
    buttons = re.findall(r"<button[^>]*>([^<]*)</button>", form)
    assert buttons == ["Cancel…", "Keep it", "Cancel this todo"]


# --- the assignee list offers only who can claim in the queue ------------------------------------------


def test_the_assignee_list_offers_only_who_can_claim_in_the_queue(world, alice_client):
    from tests import factories

    factories.endpoint(world.acme, slug="producer", queues=("default",), verbs=("create_for", "list_todos"))
    factories.endpoint(world.acme, slug="elsewhere", queues=("other",))
    factories.endpoint(world.acme, slug="second-worker", queues=("default",), verbs=("claim_next", "complete"))
    todo = make(world, "pending")
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    select = drawer[drawer.index(f'id="assign-{todo.id}"') :]
    select = select[: select.index("</select>")]
    labels = re.findall(r"<option [^>]*>([^<]*)</option>", select)
    assert labels == [
        "Nobody (any claimer)",
        "adam (human)",
        "alice (human)",
        "acme-worker (endpoint)",
        "second-worker (endpoint)",
    ]  # not vera (a viewer), not the producer (no claim verb), not "elsewhere" (another queue)


# --- outcomes and audit actions in words, codes beside them --------------------------------------------


def test_outcomes_and_audit_actions_read_as_sentences_with_the_code_beside(world, alice_client):
    from todos.dashboard import wording

    todo = make(world, "dead")
    execute(__import__("todos.core.store.human", fromlist=["retry"]).retry(world.alice, todo.id, note="again"))
    drawer = text_of(alice_client.get(reverse("todo_drawer", args=[todo.id])))
    assert "Failed: the worker reported an error; it became a dead letter" in drawer
    assert '<code class="code-note" title="As the API reports it">failed → dead_lettered</code>' in drawer
    assert 'sent it back to pending (retry)</span> <code class="code-note">todo.retry</code>' in drawer
    activity = text_of(alice_client.get(reverse("activity")))
    assert "sent it back to pending (retry)" in activity and ">todo.retry</code>" in activity
    # every code the schema allows has words
    assert set(wording.OUTCOMES) == {
        "completed",
        "failed",
        "released",
        "lease_expired",
        "reaped",
        "canceled",
        "revoked",
        "timed_out",
    }
    assert set(wording.DISPOSITIONS) == {"done", "retry_scheduled", "requeued", "dead_lettered", "canceled"}
    assert wording.action("todo.something_new") == "todo.something_new"  # unworded: shown as itself


# --- the drawer in the URL ---------------------------------------------------------------------------


def test_the_list_renders_the_drawer_its_url_names(world, alice_client):
    mine = make(world, "pending", title="Open me")
    foreign = make(world, "pending", title="Not yours", agent=world.globex_agent)
    body = text_of(alice_client.get(reverse("todo_list") + f"?open={mine.id}"))
    assert f'<aside id="drawer" class="drawer" data-todo-id="{mine.id}"' in body
    assert "Open me</h2>" in body
    for other in (foreign.id, "td_" + "0" * 32, "x" * 100, ""):
        body = text_of(alice_client.get(reverse("todo_list"), {"open": other}))
        assert '<aside id="drawer" class="drawer drawer-empty" hidden></aside>' in body
        assert "Not yours" not in body


# --- dead letters: rows say why; a reason group opens to its members, keyset paged ----------------------


def test_dead_letter_rows_show_their_reason(world, alice_client):
    dead = make(world, "dead", title="Charge the card")
    pending = make(world, "pending", title="Not dead")
    body = text_of(alice_client.get(reverse("todo_list")))
    row = body[body.index(f'<tr id="todo-{dead.id}"') :]
    row = row[: row.index("</tr>")]
    assert f"boom on {dead.id[-6:]}" in row and "dead-reason" in row
    other = body[body.index(f'<tr id="todo-{pending.id}"') :]
    assert "dead-reason" not in other[: other.index("</tr>")]
    fragment = text_of(alice_client.get(reverse("todo_row", args=[dead.id])))  # live refreshes keep it
    assert f"boom on {dead.id[-6:]}" in fragment


def test_a_reason_group_opens_to_its_members_a_keyset_page_at_a_time(world, alice_client, monkeypatch):
    from todos.core.selectors import dead_letters

    monkeypatch.setattr(dead_letters, "MEMBERS_PAGE", 2)
    monkeypatch.setattr(dead_letters.group_members, "__kwdefaults__", {"after": None, "limit": 2})
    for n in range(5):
        todo = execute(agent_store.create(world.agent, queue="default", title=f"Timed out {n}", max_attempts=1)).todo
        execute(agent_store.claim(world.agent, todo.id))
        execute(agent_store.fail(world.agent, todo.id, summary=f"timeout after {30 + n}s"))
    make(world, "dead", title="Another reason")
    groups = text_of(alice_client.get(reverse("dead_letter_groups")))
    link = re.search(r'<a class="reason-link" href="\?group=(timeout[^"#]+)#group-members"', groups)
    assert link, groups[-3000:]
    seen: list[str] = []
    url = f"{reverse('dead_letter_groups')}?group={link.group(1)}"
    for _ in range(5):
        page = text_of(alice_client.get(url))
        assert "5 dead letters failing with" in page
        seen += re.findall(r'data-member-id="([^"]+)"', page)
        following = re.search(r'<a class="button small" rel="next" href="([^"#]+)#group-members"', page)
        if not following:
            break
        url = reverse("dead_letter_groups") + following.group(1).replace("&amp;", "&")
    assert len(seen) == 5 and len(set(seen)) == 5  # every member once, newest first, over 3 pages
    bad = text_of(alice_client.get(f"{reverse('dead_letter_groups')}?group={link.group(1)}&after=nonsense"))
    assert "after: not a page of this group" in bad
    unknown = text_of(alice_client.get(f"{reverse('dead_letter_groups')}?group=no-such-reason"))
    assert "No dead letters in this group now." in unknown
