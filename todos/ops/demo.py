"""Demo data and simulated agents for ``manage.py up --demo``: a living queue for a newcomer.

Everything here goes through the store, exactly as real agents and operators would: the seed
creates todos and drives some of them through claims, failures, deaths and dead letters, and the
simulated agents keep claiming, heartbeating, completing, failing and dying while Board runs.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import connection

from todos.core.db import execute
from todos.core.errors import Conflict, Paused, StoreError
from todos.core.store import agent as agent_store
from todos.core.store import concurrency as concurrency_store
from todos.core.store import endpoints as endpoint_store
from todos.core.store import human as operator_store
from todos.core.store import queue_settings
from todos.core.store import rate_limits as rate_store
from todos.core.store import schedules as schedule_store
from todos.core.store import teams as team_store
from todos.core.store.scopes import AgentScope, OperatorScope

logger = logging.getLogger(__name__)

DEMO_TEAM = "demo"
# The demo's read-only person: a known password, so a visitor can see the viewer role's Board.
DEMO_VIEWER = "viewer"
# Todos the demo's producer creates for itself (no claim verb): the Overview's "no agent can claim".
STRAYS = 2
DEMO_VIEWER_PASSWORD = "viewer-demo"


@dataclass(frozen=True)
class DemoAgent:
    slug: str
    name: str
    queues: tuple[str, ...]
    work_seconds: tuple[float, float]
    fail_rate: float
    die_rate: float
    # Required capabilities: the endpoint's default capabilities, and what each of its
    # simulated workers presents on its claims (by worker number; none: the defaults).
    defaults: tuple[str, ...] = ()
    presents: tuple[tuple[str, ...], ...] = ()
    # How often a worker "hangs": it keeps heartbeating but never finishes, until its queue's
    # run-time limit ends the attempt (the heartbeat is refused; the todo is retried or dead).
    hang_rate: float = 0.0


# The summarizer is a mixed pool: its endpoint's default capabilities say it has a GPU (so a plain
# `manage.py work` on its token takes GPU work), worker 0 is the GPU runner and says so itself,
# and worker 1 is a CPU-only runner whose own capabilities replace the defaults: it takes only
# docs work that needs nothing.
AGENTS = (
    DemoAgent("ci-fixer", "CI fixer", ("ci-failures",), (2, 8), 0.2, 0.05),
    DemoAgent("triage-bot", "Support triage", ("support", "triage"), (1, 4), 0.1, 0.03, hang_rate=0.05),
    DemoAgent(
        "summarizer", "Doc summarizer", ("docs",), (3, 10), 0.05, 0.08, defaults=("gpu",), presents=(("gpu",), ("cpu",))
    ),
)
# The support queue's default run-time limit: short, so a hung triage worker is timed out while
# one watches (docs/lifecycle.md, "Run-time limits").
HANG_QUEUE, HANG_LIMIT_SECONDS = "support", 30
# The demo endpoints' default lease. The seed leaves some work claimed with no worker behind it,
# for the reaper to show deaths as its leases lapse; on HANG_QUEUE such a todo carries a run-time
# limit of its own, longer than the lease, so the lapse comes first (else every one of them would
# time out together half a minute after start, as if its workers had hung).
SEED_LEASE_SECONDS = 60
LEFT_CLAIMED_LIMIT_SECONDS = 2 * SEED_LEASE_SECONDS
# Docs work that needs the large model (about one in three, decided from the todo's number).
BOUND_QUEUE, BOUND_NEEDS = "docs", ["gpu"]
PRODUCER = DemoAgent("ingest", "Webhook ingest", ("ci-failures", "support", "triage", "docs"), (0, 0), 0, 0)

# A simulated failure: the summary an agent writes, and the error object its worker reports
# (exception class, message, and a traceback ending in the same words).
FAILURES = (
    ("pytest exited 1: 3 tests failed in test_api.py", "subprocess.CalledProcessError",
     "Command '['pytest', '-q', 'tests/test_api.py']' returned non-zero exit status 1.",
     (("agents/ci_fixer/run.py", 88, "run_tests", "subprocess.run(command, check=True, cwd=checkout)"),
      ("/usr/lib/python3.12/subprocess.py", 571, "run", "raise CalledProcessError(retcode, process.args,"))),
    ("timeout after 300 s waiting for build container", "TimeoutError",
     "build container ci-{n} not ready after 300 s",
     (("agents/ci_fixer/build.py", 41, "wait_ready", "raise TimeoutError(f\"build container {name} not ready\")"),)),
    ("upstream 502 from api.example.com (attempt {n})", "httpx.HTTPStatusError",
     "Server error '502 Bad Gateway' for url 'https://api.example.com/v1/tickets/{n}'",
     (("agents/triage/fetch.py", 23, "ticket", "response.raise_for_status()"),
      ("httpx/_models.py", 829, "raise_for_status", "raise HTTPStatusError(message, request=request, response=self)"))),
    ("could not parse stack trace: unexpected token at line {n}", "agents.parsing.ParseError",
     "unexpected token ')' at line {n}, column 17",
     (("agents/triage/parse.py", 112, "parse_trace", "frames = grammar.parse(text)"),
      ("agents/parsing.py", 57, "parse", "raise ParseError(f\"unexpected token {tok!r} at line {line}\")"))),
    ("model refused: context window exceeded ({n} tokens)", "agents.llm.ContextWindowExceeded",
     "prompt of 13{n}512 tokens exceeds the model's 128000-token window",
     (("agents/summarizer/summarize.py", 64, "summarize", "reply = model.complete(prompt)"),
      ("agents/llm.py", 201, "complete", "raise ContextWindowExceeded(f\"prompt of {n} tokens exceeds the window\")"))),
    ("git push rejected: non-fast-forward on branch fix-{n}", "git.exc.GitCommandError",
     "Cmd('git') failed due to: exit code(1)\n  cmdline: git push origin fix-{n}\n"
     "  stderr: ' ! [rejected] fix-{n} -> fix-{n} (non-fast-forward)'",
     (("agents/ci_fixer/publish.py", 30, "push", "repo.remote('origin').push(branch)"),
      ("git/cmd.py", 1109, "execute", "raise GitCommandError(redacted_command, status, stderr_value, stdout_value)"))),
)  # fmt: skip


def failure(rng: random.Random) -> tuple[str, dict]:
    """A simulated failure's summary and error object, as a worker would report them."""
    summary, kind, message, frames = rng.choice(FAILURES)
    n = rng.randint(1, 9)
    summary, message = summary.format(n=n), message.format(n=n)
    lines = ["Traceback (most recent call last):"]
    for path, line, function, code in frames:
        lines += [f'  File "{path}", line {line}, in {function}', f"    {code}"]
    lines.append(f"{kind}: {message}")
    return summary, {"type": kind, "message": message, "traceback": "\n".join(lines)}


RELEASES = (
    "rate limited by upstream; handing the todo back",
    "worker draining for a deploy; released",
    "needs a GPU runner; released for another worker",
)
TITLES = {
    "ci-failures": ["Fix flaky test in {mod}", "Build broken on main after #{n}", "Lint errors in {mod}"],
    "support": ["Customer #{n}: cannot log in", "Refund request for order {n}", "Bug report: export to CSV"],
    "triage": ["Label new issue #{n}", "Duplicate check for #{n}", "Route ticket {n} to owner"],
    "docs": ["Summarize RFC-{n}", "Changelog for v1.{n}", "Explain module {mod}"],
}
MODULES = ("billing", "auth", "search", "exports", "webhooks", "scheduler")
# Run later and concurrency keys: CI fixes of one repository go one at a time (a
# concurrency key per repository; billing, the busiest, may run two), and some work is scheduled
# for the next minutes. Decided from the todo's number, so the seed's random sequence is unchanged.
KEYED_QUEUE = "ci-failures"
WIDER_KEY, WIDER_LIMIT = "repo:acme/billing", 2


# Rate limits: triage labels issues through the code host's API, which allows so many calls an
# hour: every triage todo carries its rate key, so the overview's "Rate limits" shows it throttled
# with work waiting once the seed's claims have used the hour's allowance.
RATED_QUEUE = "triage"
RATE_KEY, RATE_LIMIT, RATE_PER = "api:code-host", 10, "hour"


def _key(queue: str, payload: dict) -> str | None:
    return f"repo:{payload['repo']}" if queue == KEYED_QUEUE else None


def _rate_key(queue: str) -> str | None:
    return RATE_KEY if queue == RATED_QUEUE else None


def _use_rate_allowance(team_id, scope: AgentScope) -> None:
    """Set the rated key's limit once the seed's own history is written, then use its allowance
    with claims as a triage worker would, so the rest of the key's work waits for the next one."""
    execute(rate_store.set_limit(None, team_id, RATE_KEY, RATE_LIMIT, RATE_PER))
    for _ in range(RATE_LIMIT):
        try:
            if execute(agent_store.claim_next(scope, queue=RATED_QUEUE, claimant="triager/seed")) is None:
                return
        except StoreError:
            return


def traceparent(rng: random.Random, trace_id: str | None = None) -> str:
    """A W3C trace context as a traced producer (or worker, in ``trace_id``'s trace) would send:
    the drawer shows its trace id (docs/telemetry.md)."""
    trace = trace_id or f"{rng.getrandbits(128) | 1:032x}"
    return f"00-{trace}-{rng.getrandbits(64) | 1:016x}-01"


def worker_traceparent(todo_context: str | None, rng: random.Random) -> str | None:
    """The context a traced worker reports: a span of the todo's own trace."""
    return traceparent(rng, todo_context.split("-")[1]) if todo_context else None


def _requires(queue: str, n: int) -> list[str] | None:
    return BOUND_NEEDS if queue == BOUND_QUEUE and n % 3 == 0 else None


def _run_later(n: int) -> int | None:
    """Seconds to wait, for about one todo in seven: between 2 and 30 minutes."""
    return 120 + (n * 397) % 1680 if n % 7 == 3 else None


def release_items(producer: AgentScope, rng: random.Random) -> list[dict]:
    """A release's notes as a graph: plan → parts (each after the plan) → merge (after them all)."""
    release = f"v2.{rng.randint(0, 40)}.{rng.randint(0, 9)}"
    parts = rng.randint(3, 6)

    def item(title: str, key: str, n: int, **more) -> dict:
        return {
            "queue": BOUND_QUEUE,
            "title": title,
            "kind": "doc",
            "source": producer.owner,
            "payload": {"release": release, "part": n},
            "idempotency_key": f"release-{release}-{key}",
            **more,
        }

    return [
        item(f"Plan the {release} release notes", "plan", 0),
        *(
            item(f"Summarize the {release} release notes, part {n} of {parts}", str(n), n, after_items=[0])
            for n in range(1, parts + 1)
        ),
        item(f"Merge the {release} release notes", "merge", parts + 1, after_items=list(range(1, parts + 1))),
    ]


def _agent_scope(vended) -> AgentScope:
    ep = vended.endpoint if hasattr(vended, "endpoint") else vended
    return AgentScope(
        endpoint_id=ep.id,
        team_id=ep.team_id,
        queues=tuple(ep.scope_queues),
        default_lease_ttl_seconds=ep.default_lease_ttl_seconds,
        verbs=frozenset(ep.scope_verbs),
        capabilities=tuple(ep.capabilities),
    )


def _title(queue: str, rng: random.Random) -> str:
    return rng.choice(TITLES[queue]).format(n=rng.randint(100, 9999), mod=rng.choice(MODULES))


def demo_scopes() -> dict[str, AgentScope] | None:
    """The demo endpoints' scopes, or None when there is no demo team yet."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT e.slug, e.id, e.team_id, e.scope_queues, e.default_lease_ttl_seconds, e.scope_verbs,
                      e.capabilities
               FROM endpoints e JOIN teams t ON t.id = e.team_id
               WHERE t.slug = %s AND e.state = 'active'""",
            [DEMO_TEAM],
        )
        rows = cursor.fetchall()
    if not rows:
        return None
    return {
        slug: AgentScope(
            endpoint_id=eid,
            team_id=tid,
            queues=tuple(queues),
            default_lease_ttl_seconds=lease,
            verbs=frozenset(verbs),
            capabilities=tuple(capabilities),
        )
        for slug, eid, tid, queues, lease, verbs, capabilities in rows
    }


def ensure_viewer_password() -> str | None:
    """Give the demo's viewer the known password when it has none it can sign in with (seeding
    creates it without one). Returns the password while it is the known one (so ``up --demo`` can
    print it on every start), None when the viewer is absent or has a password of its own."""
    User = get_user_model()
    viewer = User.objects.filter(username=DEMO_VIEWER).first()
    if viewer is None:
        return None
    if not viewer.password or not viewer.has_usable_password():
        viewer.set_password(DEMO_VIEWER_PASSWORD)
        viewer.save(update_fields=["password"])
        return DEMO_VIEWER_PASSWORD
    return DEMO_VIEWER_PASSWORD if viewer.check_password(DEMO_VIEWER_PASSWORD) else None


def seed(admin, *, todos: int = 300, rng: random.Random | None = None) -> dict[str, AgentScope]:
    """Create the demo team, its endpoints and a few hundred todos in every state. Idempotent:
    an existing demo team is left as it is."""
    existing = demo_scopes()
    if existing:
        return existing
    rng = rng or random.Random(7)
    team = execute(team_store.create_team(slug=DEMO_TEAM, name="Demo team"))
    execute(team_store.set_member(None, team_id=team.id, user_id=admin.id, role="admin"))
    User = get_user_model()
    viewer, _ = User.objects.get_or_create(username=DEMO_VIEWER, defaults={"is_active": True})
    execute(team_store.set_member(None, team_id=team.id, user_id=viewer.id, role="viewer"))
    scopes = {}
    for spec in AGENTS + (PRODUCER,):
        verbs = ["create_for", "list_todos", "get_todo"] if spec is PRODUCER else list(endpoint_store.DRAIN_VERBS)
        vended = execute(
            endpoint_store.vend(
                None,
                team_id=team.id,
                name=spec.name,
                slug=spec.slug,
                verbs=verbs,
                queues=list(spec.queues),
                default_lease_ttl_seconds=SEED_LEASE_SECONDS,
                capabilities=list(spec.defaults),
            )
        )
        scopes[spec.slug] = _agent_scope(vended)
    human = OperatorScope(user_id=admin.id, username=admin.username)
    execute(concurrency_store.set_limit(None, team.id, WIDER_KEY, WIDER_LIMIT))
    execute(queue_settings.set_timeout(None, team.id, HANG_QUEUE, HANG_LIMIT_SECONDS))
    owners = {q: scopes[a.slug] for a in AGENTS for q in a.queues}
    for n in range(todos):
        if todos >= 10 * STRAYS and n >= todos - STRAYS:
            # the classic mistake, for the Overview to flag: the producer's create_for without
            # endpoint=…, so the todo is the producer's own and nothing can claim it
            execute(
                agent_store.create(
                    scopes[PRODUCER.slug],
                    queue="triage",
                    title=_title("triage", rng),
                    kind="triage",
                    source="webhook",
                    idempotency_key=f"demo-{n}",
                )
            )
            continue
        queue = rng.choice(list(owners))
        scope = owners[queue]
        fate = rng.random()
        max_attempts = 3 if fate < 0.12 else rng.choice((3, 5))
        title = _title(queue, rng)
        payload = {"n": n, "repo": f"acme/{rng.choice(MODULES)}", "api_token": "demo-secret-masked"}
        later = _run_later(n) if 0.12 <= fate < 0.45 else None
        left_claimed = fate >= 0.85
        created = execute(
            agent_store.create(
                scope,
                queue=queue,
                title=title,
                kind=queue.rstrip("s"),
                source="webhook",
                payload=payload,
                idempotency_key=f"demo-{n}",
                priority=rng.choice((0, 0, 0, 5, -5)),
                max_attempts=max_attempts,
                delay_seconds=later,
                concurrency_key=_key(queue, payload),
                requires=_requires(queue, n),
                rate_key=_rate_key(queue),
                timeout_seconds=LEFT_CLAIMED_LIMIT_SECONDS if left_claimed and queue == HANG_QUEUE else None,
                # most producers trace; their ids come from a generator of their own, so the seed's
                # other choices stay what they were
                traceparent=traceparent(random.Random(n)) if n % 3 else None,
            )
        ).todo
        if 0.12 <= fate < 0.45:
            continue  # pending (or scheduled)
        try:
            claim = execute(agent_store.claim(scope, created.id, claimant=f"{scope.owner.split(':')[0]}/seed-{n % 4}"))
        except StoreError:
            continue
        if fate < 0.12:
            # a dead letter with a history to read: earlier holders gave up, the last one failed
            for earlier in range(max_attempts - 1):
                execute(agent_store.release(scope, created.id, summary=rng.choice(RELEASES)))
                execute(agent_store.claim(scope, created.id, claimant=f"{scope.owner.split(':')[0]}/seed-{earlier}"))
            summary, error = failure(rng)
            execute(
                agent_store.fail(scope, created.id, summary=summary, error=error, result={"error": "handler_failed"})
            )
        elif fate < 0.7:
            worker_context = worker_traceparent(created.traceparent, random.Random(-n))
            execute(
                agent_store.complete(
                    scope, created.id, result={"ok": True}, summary="done in seed", traceparent=worker_context
                )
            )
        elif fate < 0.8:
            summary, error = failure(rng)
            execute(agent_store.fail(scope, created.id, summary=summary, error=error))
        elif fate < 0.85:
            execute(operator_store.cancel(human, created.id, note="not needed any more"))
        # else (left_claimed): its lease lapses and the reaper shows a death; on HANG_QUEUE its own
        # run-time limit, LEFT_CLAIMED_LIMIT_SECONDS, is longer than the lease
        del claim
    _use_rate_allowance(team.id, owners[RATED_QUEUE])
    _seed_releases(owners[BOUND_QUEUE], scopes[PRODUCER.slug], human, rng)
    _seed_schedules(team.id, scopes, human)
    return scopes


def _seed_releases(target: AgentScope, producer: AgentScope, human: OperatorScope, rng: random.Random) -> None:
    """Two releases' notes as graphs: one waits on the Blocked tab (the drawer draws its graph),
    the other was withdrawn, canceled with everything downstream of its plan in one statement."""
    execute(agent_store.create_batch(target, release_items(producer, rng)))
    withdrawn = execute(agent_store.create_batch(target, release_items(producer, rng)))
    plan = withdrawn[0].todo
    if plan is not None and plan.state != "canceled":
        execute(operator_store.cancel_downstream(human, plan.id, note="release withdrawn"))


# Periodic schedules: a nightly audit that catches up after downtime, office-hours
# triage in New York, a paused weekly digest, and one every two minutes so the Schedules page
# shows fires (and their todos' fates) while the demo runs.
SCHEDULES = (
    ("Nightly dependency audit", "0 3 * * *", "Europe/Berlin", "ci-fixer", "ci-failures", "catch_up", False),
    ("Support queue sweep", "*/15 8-18 * * MON-FRI", "America/New_York", "triage-bot", "triage", "skip", False),
    ("Weekly docs digest", "0 9 * * MON", "UTC", "summarizer", "docs", "skip", True),
    ("Inbox check", "*/2 * * * *", "UTC", "triage-bot", "support", "skip", False),
)


def _seed_schedules(team_id, scopes: dict[str, AgentScope], human: OperatorScope) -> None:
    from datetime import UTC, datetime

    for name, cron, zone, agent_slug, queue, missed, paused in SCHEDULES:
        made = execute(
            schedule_store.create(
                human,
                team_id,
                now=datetime.now(UTC),
                name=name,
                cron=cron,
                timezone=zone,
                endpoint_id=scopes[agent_slug].endpoint_id,
                queue=queue,
                title=name,
                kind="scheduled",
                payload={"schedule": name},
                missed=missed,
            )
        )
        if paused:
            execute(schedule_store.set_paused(human, made.id, True, now=datetime.now(UTC)))
        else:
            execute(schedule_store.fire_now(human, made.id))


class SimulatedAgents:
    """Threads that behave like real agents against the store, plus a producer."""

    def __init__(self, scopes: dict[str, AgentScope], *, speed: float = 1.0, seed: int | None = None):
        self.scopes = scopes
        self.speed = speed
        self.stop = threading.Event()
        self.rng = random.Random(seed)
        self.threads: list[threading.Thread] = []

    def start(self) -> None:
        for spec in AGENTS:
            for worker in range(2):
                self._spawn(self._work, spec, worker)
        self._spawn(self._produce)

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=5)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=self._guard, args=(target, *args), daemon=True, name=f"demo-{target.__name__}")
        thread.start()
        self.threads.append(thread)

    def _guard(self, target, *args) -> None:
        while not self.stop.is_set():
            try:
                target(*args)
            except Exception:  # noqa: BLE001 - a demo agent never takes Board down
                logger.exception("simulated agent crashed; restarting")
                self.stop.wait(2)

    def _sleep(self, seconds: float) -> bool:
        return self.stop.wait(seconds / self.speed)

    def _work(self, spec: DemoAgent, worker: int) -> None:
        scope = self.scopes[spec.slug]
        rng = random.Random(self.rng.random())
        presents = spec.presents[worker] if worker < len(spec.presents) else ()
        label = f"{presents[0]}-" if presents else ""
        while not self.stop.is_set():
            try:
                claim = execute(
                    agent_store.claim_next(
                        scope,
                        lease_ttl_seconds=20,
                        require_fence=rng.random() < 0.5,
                        claimant=f"{spec.slug}/{label}worker-{worker}",
                        capabilities=list(presents) or None,
                    )
                )
            except Paused:
                claim = None  # an operator paused its claims on the Agents page: wait, as a worker does
            if claim is None:
                if self._sleep(rng.uniform(1, 3)):
                    return
                continue
            todo_id, token = claim.todo.id, claim.lease_token
            roll = rng.random()
            if roll < spec.die_rate:
                continue  # the worker "crashes": no heartbeat, no report; the reaper will notice
            remaining = rng.uniform(*spec.work_seconds)
            if claim.todo.queue == HANG_QUEUE and roll > 1 - spec.hang_rate:
                remaining = 3600  # hangs: heartbeats until the run-time limit refuses one
            try:
                while remaining > 0:
                    step = min(remaining, 6)
                    if self._sleep(step):
                        execute(agent_store.release(scope, todo_id, lease_token=token, summary="shutting down"))
                        return
                    remaining -= step
                    execute(agent_store.heartbeat(scope, todo_id, lease_ttl_seconds=20, lease_token=token))
                if roll < spec.die_rate + spec.fail_rate:
                    summary, error = failure(rng)
                    execute(
                        agent_store.fail(
                            scope,
                            todo_id,
                            lease_token=token,
                            summary=summary,
                            error=error,
                            result={"error": "handler_failed"},
                            traceparent=worker_traceparent(claim.todo.traceparent, random.Random()),
                        )
                    )
                else:
                    execute(
                        agent_store.complete(
                            scope,
                            todo_id,
                            lease_token=token,
                            result={"ok": True},
                            summary=f"handled by {spec.slug}/worker-{worker}",
                            traceparent=worker_traceparent(claim.todo.traceparent, random.Random()),
                        )
                    )
            except Conflict:
                pass  # lost the lease (force-released, canceled, or past its run-time limit): move on

    def _produce(self) -> None:
        scope = self.scopes[PRODUCER.slug]
        owners = {q: self.scopes[a.slug] for a in AGENTS for q in a.queues}
        rng = random.Random(self.rng.random())
        while not self._sleep(rng.uniform(1.5, 4)):
            if rng.random() < 0.1:
                self._release_batch(owners[BOUND_QUEUE], scope, rng)
                continue
            queue = rng.choice(list(owners))
            target = owners[queue]
            payload = {"n": rng.randint(1, 10**6), "repo": f"acme/{rng.choice(MODULES)}"}
            # the producer hands work to the owning endpoint (create_for with endpoint=…); some of
            # it for later, CI fixes one at a time per repository
            execute(
                agent_store.create(
                    target,
                    queue=queue,
                    title=_title(queue, rng),
                    kind=queue.rstrip("s"),
                    source=scope.owner,
                    payload=payload,
                    max_attempts=rng.choice((2, 3, 5)),
                    priority=rng.choice((0, 0, 5, -5)),
                    delay_seconds=_run_later(payload["n"]),
                    concurrency_key=_key(queue, payload),
                    requires=_requires(queue, payload["n"]),
                    rate_key=_rate_key(queue),
                )
            )
            time.sleep(0)

    def _release_batch(self, target: AgentScope, producer: AgentScope, rng: random.Random) -> None:
        """A release lands: its notes go in as one ``create_batch`` shaped as a plan, a docs todo
        per part after it, and a merge after every part (docs/lifecycle.md, "Dependencies"); one
        idempotency key each (the same release twice answers the todos the first made)."""
        execute(agent_store.create_batch(target, release_items(producer, rng)))
