"""The live pipeline speaks the change log's ops (``todos.core.words.ChangeOp``) and the relay's
``recount``: the pages' op tables here and in ``static/board/live.js`` name no other word, and
every op reaches some page."""

from __future__ import annotations

import re
from pathlib import Path

from todos.core.words import ChangeOp
from todos.live.messages import RECOUNT
from todos.live.subscriptions import PAGE_OPS

LIVE_JS = Path(__file__).resolve().parents[2] / "static" / "board" / "live.js"
MESSAGE_OPS = set(ChangeOp) | {RECOUNT}


def _js_op_tables() -> dict[str, set[str]]:
    """Each op table of live.js (``var NAME_OPS = [...]``, ``var REGION_QUIET = {region: [...]}``)
    by name, as the words it lists."""
    text = LIVE_JS.read_text()
    tables = {name: body for name, body in re.findall(r"var (\w+_OPS) = \[([^\]]*)\]", text)}
    quiet = re.search(r"var REGION_QUIET = \{(.*?)\};", text, re.S)
    assert quiet, "live.js has no REGION_QUIET table"
    tables |= {f"REGION_QUIET.{name}": body for name, body in re.findall(r"(\w+): \[([^\]]*)\]", quiet.group(1))}
    return {name: set(re.findall(r'"([^"]*)"', body)) for name, body in tables.items()}


def test_live_js_names_only_ops_the_relay_sends():
    tables = _js_op_tables()
    assert {"NEW_ROW_OPS", "ROWS_OPS", "REGION_QUIET.counts", "REGION_QUIET.charts"} <= set(tables)
    unknown = {name: sorted(words - MESSAGE_OPS) for name, words in tables.items() if words - MESSAGE_OPS}
    assert not unknown, f"live.js names ops no statement writes (todos/core/words.py): {unknown}"


def test_the_pages_op_tables_name_every_op_and_no_other():
    named = set().union(*PAGE_OPS.values())
    assert named <= MESSAGE_OPS, sorted(named - MESSAGE_OPS)
    assert set(ChangeOp) <= named, f"ops no page shows: {sorted(set(ChangeOp) - named)}"
