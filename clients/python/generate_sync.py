"""Write ``board_client/_sync_client.py`` from ``board_client/_async_client.py``.

The synchronous client is the asynchronous one with ``async``/``await`` taken out, so the two
cannot drift apart; a test fails when the written file is not what this makes.

    python clients/python/generate_sync.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent / "board_client"
HEADER = '''"""The synchronous client: one method per verb of the agent API.

Written by ``generate_sync.py`` from ``_async_client.py`` (edit that one); the rules of both
(errors, retries, the fence) are in that file's docstring.
"""
'''
REPLACEMENTS = (
    ("httpx.AsyncClient", "httpx.Client"),
    ("httpx.AsyncBaseTransport", "httpx.BaseTransport"),
    ("AsyncClient", "Client"),
    ("async def __aenter__", "def __enter__"),
    ("async def __aexit__", "def __exit__"),
    ("aclose()", "close()"),
    ("async def ", "def "),
    ("await ", ""),
    ("asyncio.sleep(", "time.sleep("),
    ("import asyncio\n", "import time\n"),
    ("AsyncWire", "SyncWire"),
)


def render() -> str:
    source = (HERE / "_async_client.py").read_text()
    body = source[source.index('"""', 3) + 3 :].lstrip("\n")
    for old, new in REPLACEMENTS:
        body = body.replace(old, new)
    return HEADER + "\n" + body


def formatted(text: str) -> str:
    """``text`` as ruff formats it (taking ``await`` out can let a wrapped call fit on one line)."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    done = subprocess.run(
        [ruff, "format", "--stdin-filename", str(HERE / "_sync_client.py"), "-"],
        input=text, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def main() -> None:
    (HERE / "_sync_client.py").write_text(formatted(render()))


if __name__ == "__main__":
    main()
