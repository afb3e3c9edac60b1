"""Why a todo failed, as one line of SQL: the words identical failures share.

An attempt that reported an error object reads ``type: first line of message`` (either alone when
the other is absent): the class and the headline of an exception, not its traceback, which differs
by line numbers and frames. Without one, its summary, else the todo's ``result.error``. The dead
letters group by this (``dead_letters.py``), and a filter on what todos failed with can match the
same fragment. Each fragment reads the attempt as ``a`` and the todo as ``d``.
"""

from __future__ import annotations

from typing import LiteralString

# NULL without an error object (or one whose type and first line are empty).
ERROR_HEADLINE: LiteralString = """nullif(concat_ws(': ',
        nullif(btrim(a.error->>'type'), ''),
        nullif(btrim(split_part(a.error->>'message', E'\\n', 1), E' \\t\\r'), '')), '')"""

REASON: LiteralString = f"""coalesce(
        {ERROR_HEADLINE},
        nullif(a.summary, ''), d.result->>'error', '(no reason recorded)')"""

# Normalised so "timeout after 30s on 10.0.0.7" and "timeout after 45s on 10.0.0.9" land together:
# lower case, UUIDs, hex runs and digits replaced, whitespace collapsed. The one definition is the
# SQL function ``board_reason_group`` (0029), which the statements that fail a todo also use to
# store it in ``todos.failure_reason_group`` (what the "failed with" filter reads).
FINGERPRINT: LiteralString = "board_reason_group(a.error, a.summary, d.result->>'error')"
