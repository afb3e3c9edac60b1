"""``manage.py vend`` and ``manage.py revoke``."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from tests import factories
from todos.core.db import execute
from todos.core.selectors.agent_api import credential_for
from todos.core.store import agent as agent_store
from todos.core.store.endpoints import DRAIN_VERBS, SCOPE_VERBS, token_hash
from todos.models import Endpoint


def vend(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("vend", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def token_of(output: str) -> str:
    return re.search(r"^token:\s+(\S+)$", output, re.M).group(1)


def test_vend_prints_the_token_once_and_it_authenticates(store_db):
    team = factories.team("acme")
    out, err = vend("--team", "acme", "--name", "CI fixer", "--verbs", "claim_next,complete", "--queues", "ci,builds")
    token = token_of(out)
    assert out.count(token) == 1 and "shown once" in err
    assert re.search(r"^slug:\s+ci-fixer$", out, re.M)
    credential = execute(credential_for(token_hash(token)))
    assert credential.team_id == team.id and credential.usable
    assert credential.scope_verbs == ("claim_next", "complete")
    assert credential.scope_queues == ("builds", "ci")


def test_vend_defaults_to_the_drain_verbs_and_takes_all(store_db):
    factories.team("acme")
    token = token_of(vend("--team", "acme", "--name", "w1", "--queues", "q")[0])
    assert set(execute(credential_for(token_hash(token))).scope_verbs) == set(DRAIN_VERBS)
    token = token_of(vend("--team", "acme", "--name", "w2", "--queues", "q", "--verbs", "all", "--slug", "custom")[0])
    credential = execute(credential_for(token_hash(token)))
    assert set(credential.scope_verbs) == set(SCOPE_VERBS) and credential.slug == "custom"


def test_vend_expiry_and_default_lease(store_db):
    factories.team("acme")
    out, _ = vend("--team", "acme", "--name", "temp", "--queues", "q", "--expires-in", "24h", "--default-lease", "600")
    credential = execute(credential_for(token_hash(token_of(out))))
    assert credential.default_lease_ttl_seconds == 600
    expires = Endpoint.objects.values_list("expires_at", flat=True).get(slug="temp")
    assert abs(expires - (datetime.now(UTC) + timedelta(hours=24))) < timedelta(minutes=1)
    out, _ = vend("--team", "acme", "--name", "fixed", "--queues", "q", "--expires-at", "2099-01-01T00:00:00Z")
    assert Endpoint.objects.values_list("expires_at", flat=True).get(slug="fixed") == datetime(2099, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--team", "nope", "--name", "x", "--queues", "q"], "no team"),
        (["--team", "acme", "--name", "x", "--queues", "q", "--verbs", "claim_next,fly"], "--verbs"),
        (["--team", "acme", "--name", "x", "--queues", "bad queue!"], "--queues"),
        (["--team", "acme", "--name", "x", "--queues", "q", "--default-lease", "30"], "--default-lease"),
        (["--team", "acme", "--name", "x", "--queues", "q", "--expires-in", "soon"], "--expires-in"),
        (["--team", "acme", "--name", "x", "--queues", "q", "--expires-at", "yesterday"], "--expires-at"),
        (["--team", "acme", "--name", "x", "--queues", "q", "--expires-at", "2001-01-01T00:00:00Z"], "future"),
        (["--team", "acme", "--name", "!!!", "--queues", "q"], "--slug"),
        (["--team", "acme", "--name", "x", "--queues", "q", "--slug", "Bad_Slug"], "--slug"),
        (["--team", "acme", "--name", "taken", "--queues", "q"], "already taken"),
    ],
)
def test_vend_refuses_bad_options_clearly(store_db, args, message):
    team = factories.team("acme")
    factories.endpoint(team, slug="taken")
    with pytest.raises(CommandError, match=re.escape(message)):
        vend(*args)
    assert set(Endpoint.objects.values_list("slug", flat=True)) == {"taken"}  # nothing vended


def test_revoke_dead_letters_live_todos_and_refuses_the_token(store_db):
    team = factories.team()
    vended = factories.endpoint(team, slug="doomed")
    scope = factories.agent(vended)
    for n in range(2):
        execute(agent_store.create(scope, queue="default", title=f"live {n}"))
    done = execute(agent_store.create(scope, queue="default", title="done")).todo
    execute(agent_store.claim(scope, done.id))
    execute(agent_store.complete(scope, done.id))
    out = io.StringIO()
    call_command("revoke", "doomed", stdout=out)
    assert out.getvalue().strip() == "revoked doomed; 2 live todos dead-lettered"
    assert execute(credential_for(token_hash(vended.token))).revoked


def test_revoke_unknown_or_already_revoked_is_an_error(store_db):
    factories.endpoint(factories.team(), slug="once")
    with pytest.raises(CommandError, match="no endpoint"):
        call_command("revoke", "never", stdout=io.StringIO())
    call_command("revoke", "once", stdout=io.StringIO())
    with pytest.raises(CommandError, match="already revoked"):
        call_command("revoke", "once", stdout=io.StringIO())


def test_vend_sets_default_capabilities_and_refuses_bad_ones_naming_the_option(store_db):
    factories.team("acme")
    out, _ = vend("--team", "acme", "--name", "GPU box", "--queues", "ci", "--capabilities", "gpu, cuda")
    assert re.search(r"^capabilities: cuda,gpu$", out, re.M)
    assert execute(credential_for(token_hash(token_of(out)))).capabilities == ("cuda", "gpu")
    with pytest.raises(CommandError, match=r"--capabilities\[0\]: must be at most 64 characters"):
        vend("--team", "acme", "--name", "Bad", "--queues", "ci", "--capabilities", "x" * 65)
    assert not Endpoint.objects.filter(slug="bad").exists()
