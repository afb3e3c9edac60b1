"""What must never happen in a browser test, whichever fixture opened the browser:
no console error (Chromium reports a CSP violation as one), no uncaught exception.

Every browser fixture launches Chromium through ``launch`` here: each page of each context it
opens is watched from its first moment, and ``tests/conftest.py``'s autouse fixture fails the test
that saw a problem. A test expecting a particular error (a server taken away on purpose, say)
names it with ``@pytest.mark.console_allows(r"regex", ...)``.
"""

from __future__ import annotations

import re

# 409 and 422 are answers the Board swaps in (a lost race, a refused field: htmx-config's
# responseHandling), which Chromium still logs as a failed resource.
EXPECTED_STATUS = re.compile(r"^Failed to load resource: the server responded with a status of (409|422) ")

PROBLEMS: list[str] = []  # this test's, cleared before and checked after it by tests/conftest.py


def watch_page(page, problems: list[str] = PROBLEMS) -> list[str]:
    def console(message):
        if message.type == "error" and not EXPECTED_STATUS.search(message.text):
            problems.append(f"console on {page.url}: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda e: problems.append(f"page error on {page.url}: {e}"))
    return problems


def watched(browser):
    """``browser`` with every context it opens from now on watching its pages."""
    new_context = browser.new_context

    def watching_new_context(*args, **kwargs):
        context = new_context(*args, **kwargs)
        context.on("page", watch_page)
        return context

    browser.new_context = watching_new_context
    return browser


def unexpected(problems: list[str], allowed: list[str]) -> list[str]:
    return [p for p in problems if not any(re.search(pattern, p) for pattern in allowed)]
