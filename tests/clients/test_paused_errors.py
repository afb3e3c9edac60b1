"""The Python client knows ``paused``: a 423 answer, or one inside a report's ``next``."""

from __future__ import annotations

from board_client import Paused
from board_client.errors import STATUS, error_for


def test_a_423_paused_answer_is_a_paused_error():
    body = {"error": {"code": "paused", "message": "this endpoint's claims are paused (by adam)"}}
    error = error_for("claim_next", 423, body, "req-1", None)
    assert isinstance(error, Paused) and error.code == "paused" and error.status == 423
    assert str(error) == "paused: this endpoint's claims are paused (by adam)"
    assert STATUS["paused"] == 423
