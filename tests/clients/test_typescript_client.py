"""The TypeScript client (clients/typescript): a method per verb, types generated from the OpenAPI
document the server serves now, and its own tests (node's test runner) against a live Board.

Node.js (18 or later) and npm must be on PATH: these tests fail, not skip, without them. The
package's dev dependencies are installed with ``npm install --no-package-lock`` when missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import factories
from todos.agents.api.openapi import document
from todos.agents.api.verbs import VERBS
from todos.core.db import execute
from todos.core.store import queue_settings

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
GENERATED = PACKAGE / "src" / "openapi.ts"
NODE_TESTS_TIMEOUT = 200  # within pytest's own 300 s, an install and a build included

# The queues of the endpoint the node tests run as: each test file works its own queues, so the
# files may run side by side (clients/typescript/src/test/board.ts names them).
QUEUES = ("default", "other", "client", "poll", "fence", "errors", "worker", "outcomes", "beats", "lost", "stop",
          "retry", "schedules", "failures", "paused", "timeout", "timeout-default", "traces")  # fmt: skip
# A queue whose team default run-time limit is 1 s (set by an admin, as the Board or manage.py
# would): the worker test of a limit the claim answers from the queue, not the todo.
QUEUE_DEFAULT_LIMIT = ("timeout-default", 1)


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not on PATH: the TypeScript client's tests need Node.js 18+ and npm")
    return found


def run(
    command: list[str], *, timeout: float = 240, env: dict[str, str] | None = None, log: Callable[[], str] = str
) -> str:
    """Run a command in the package; its output, or the test's failure showing it (and ``log()``)."""
    try:
        done = subprocess.run(command, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        output = _text(exc.stdout) + _text(exc.stderr)
        pytest.fail(f"{' '.join(command)} ran over {timeout:.0f} s:\n{output[-20000:]}{log()}", pytrace=False)
    output = done.stdout + done.stderr
    if done.returncode != 0:
        pytest.fail(f"{' '.join(command)} exited with {done.returncode}:\n{output[-20000:]}{log()}", pytrace=False)
    return output


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else (output or "")


def installed() -> bool:
    """Every dev dependency installed at the version package.json pins."""
    wanted = json.loads((PACKAGE / "package.json").read_text())["devDependencies"]
    for name, version in wanted.items():
        manifest = PACKAGE / "node_modules" / name / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return True


@pytest.fixture(scope="session")
def dev_tools() -> None:
    """The package's dev dependencies, installed without a lock file (it would record registry
    addresses)."""
    tool("node")
    if not installed():
        run([tool("npm"), "install", "--no-package-lock", "--ignore-scripts", "--no-audit", "--no-fund"])


@pytest.fixture(scope="session")
def built(dev_tools, tmp_path_factory) -> Path:
    """The package compiled as ``npm run build`` does, into a folder of this session's own: another
    run in the same tree cannot pull its files away mid-test."""
    out = tmp_path_factory.mktemp("board-client-ts")
    run([tool("node"), str(PACKAGE / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "tsconfig.json",
         "--outDir", str(out)])  # fmt: skip
    (out / "package.json").write_text('{"type": "module"}\n')  # ES modules, as in the package
    return out


def test_every_verb_has_a_method_of_the_client(built):
    script = (
        f"const m = await import({json.dumps((built / 'index.js').as_uri())});"
        "console.log(JSON.stringify({methods: Object.getOwnPropertyNames(m.Client.prototype), map: m.METHODS}));"
    )
    listed = json.loads(run([tool("node"), "--input-type=module", "-e", script]))
    assert set(listed["map"]) == set(VERBS), "METHODS in src/client.ts must name every verb, and only verbs"
    for verb, method in listed["map"].items():
        camel = "".join(part if i == 0 else part.title() for i, part in enumerate(verb.split("_")))
        assert method == camel, f"{verb}'s method is {method}, not {camel}"
        assert method in listed["methods"], f"Client has no method {method} for the verb {verb}"


def test_the_generated_types_are_the_served_document(dev_tools):
    """src/openapi.ts is what openapi-typescript makes of the document the server serves now (the
    types carry every verb's input and output fields, so a field added to a schema shows here)."""
    with tempfile.TemporaryDirectory() as folder:
        source, output = Path(folder) / "openapi.json", Path(folder) / "openapi.ts"
        source.write_text(json.dumps(document()))
        run([tool("node"), "scripts/generate.mjs", str(source), "--output", str(output)])
        fresh = output.read_text()
    assert GENERATED.read_text() == fresh, (
        "clients/typescript/src/openapi.ts is stale (the OpenAPI document changed): "
        "run `npm run generate` in clients/typescript and commit the result"
    )


@pytest.fixture
def endpoints(store_db):
    """The endpoints the node tests call as: a worker with every verb in its queues, and a narrow
    producer of the same team (create_for and list_todos in "default" only) for the refusals."""
    team = factories.team()
    worker = factories.endpoint(team, slug="ts-worker", queues=QUEUES)
    narrow = factories.endpoint(team, slug="ts-producer", queues=("default",), verbs=("create_for", "list_todos"))
    execute(queue_settings.set_timeout(None, team.id, *QUEUE_DEFAULT_LIMIT))
    return worker, narrow


# The tests that need OpenTelemetry's packages; the others run where they cannot be imported, so
# they also show the client working without them (src/tracing.ts).
WITH_OPENTELEMETRY = ("tracing.test.js",)


@pytest.fixture(scope="session")
def traced(built, tmp_path_factory) -> Path:
    """The compiled package beside the package's node_modules: OpenTelemetry's API and SDK found."""
    out = tmp_path_factory.mktemp("board-client-ts-traced")
    shutil.copytree(built, out, dirs_exist_ok=True)
    (out / "node_modules").symlink_to(PACKAGE / "node_modules", target_is_directory=True)
    return out


def node_tests(folder: Path, asgi_server, endpoints, *, names=None) -> None:
    worker, narrow = endpoints
    env = {
        **os.environ,
        "BOARD_URL": asgi_server.url,
        "BOARD_TOKEN": worker.token,
        "BOARD_ENDPOINT": worker.endpoint.slug,
        "BOARD_NARROW_TOKEN": narrow.token,
        "BOARD_QUEUES": ",".join(QUEUES),
    }
    tests = sorted(
        str(path)
        for path in (folder / "test").glob("*.test.js")
        if (path.name in names if names is not None else path.name not in WITH_OPENTELEMETRY)
    )
    assert tests, "no compiled tests: clients/typescript/src/test/*.test.ts"
    command = [tool("node"), "--test", "--test-reporter=spec", *tests]
    output = run(
        command, timeout=NODE_TESTS_TIMEOUT, env=env, log=lambda: f"\n--- the server's log ---\n{asgi_server.log()}"
    )
    print(output)  # node's report, shown with -s or -rP


def test_the_client_tests_pass_against_a_live_board(built, asgi_server, endpoints):
    node_tests(built, asgi_server, endpoints)


def test_the_tracing_tests_pass_with_opentelemetry_installed(traced, asgi_server, endpoints):
    node_tests(traced, asgi_server, endpoints, names=WITH_OPENTELEMETRY)
