"""A real OpenID Connect provider for the single sign-on tests: ``tests/support/oidc/provider.mjs``
(the npm package oidc-provider) under node, on a free loopback port.

Its packages are installed on first use (``npm ci`` in that folder) when ``node_modules`` is
missing; .ci/run installs them up front. Accounts live in a JSON file the test may rewrite
between two sign-ins (the provider reads it at each one).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.live_server import free_port

FOLDER = Path(__file__).resolve().parent / "oidc"
START_TIMEOUT = 30.0


@dataclass
class Provider:
    issuer: str
    process: subprocess.Popen
    accounts_path: Path
    log_path: Path

    def set_accounts(self, accounts: dict[str, dict]) -> None:
        self.accounts_path.write_text(json.dumps(accounts))

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-10000:]


def install() -> None:
    if (FOLDER / "node_modules" / "oidc-provider").is_dir():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: the single sign-on tests need node and npm")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=FOLDER, check=True, capture_output=True, timeout=300)


def start_provider(*, board_urls: list[str], client_secret: str, port: int | None = None) -> Provider:
    install()
    port = port or free_port()
    accounts_path = Path(tempfile.mkstemp(prefix="board-oidc-accounts-", suffix=".json")[1])
    accounts_path.write_text("{}")
    log_path = Path(tempfile.mkstemp(prefix="board-oidc-", suffix=".log")[1])
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "PORT": str(port),
        "BOARD_URLS": ",".join(board_urls),
        "ACCOUNTS_FILE": str(accounts_path),
        "CLIENT_SECRET": client_secret,
        "NODE_ENV": "development",
    }
    node = shutil.which("node") or "node"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([node, "provider.mjs"], cwd=FOLDER, env=env, stdout=log, stderr=subprocess.STDOUT)
    provider = Provider(f"http://127.0.0.1:{port}", process, accounts_path, log_path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the OIDC provider exited with {process.returncode}:\n{provider.log()}")
        if "listening" in provider.log():
            return provider
        time.sleep(0.1)
    stop_provider(provider)
    raise RuntimeError(f"the OIDC provider did not start within {START_TIMEOUT:.0f} s")


def stop_provider(provider: Provider) -> None:
    if provider.process.poll() is None:
        provider.process.terminate()
        try:
            provider.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            provider.process.kill()
            provider.process.wait(timeout=10)
    provider.accounts_path.unlink(missing_ok=True)
    provider.log_path.unlink(missing_ok=True)
