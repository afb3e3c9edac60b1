"""After a human's action the session keeps the primary's WAL position (todos/core/replica.py). If the
primary cannot be asked (it went away just after the action committed), the action's answer is
kept, and the human reads the primary until a later request learns a real position."""

from __future__ import annotations

import psycopg
import pytest

from todos.core import replica


def test_a_position_that_cannot_be_read_keeps_the_human_on_the_primary(monkeypatch, caplog):
    answers: list = [psycopg.OperationalError("server closed the connection unexpectedly")]

    def primary_lsn():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(replica, "primary_lsn", primary_lsn)
    session: dict = {}
    replica.remember_write(session)  # no exception: the action already succeeded
    assert session[replica.SESSION_KEY] == replica.UNKNOWN_LSN
    assert "position is unknown" in caplog.text

    answers.append(psycopg.OperationalError("still down"))
    assert replica.read_after_lsn(session) == replica.UNKNOWN_LSN  # still unknown: the primary

    answers.append("0/3000060")
    assert replica.read_after_lsn(session) == "0/3000060"  # learned: wait for the replica to pass it
    assert replica.read_after_lsn(session) == "0/3000060" and answers == []  # asked once


def test_an_error_that_is_not_an_outage_is_not_hidden(monkeypatch):
    def broken():
        raise ValueError("a bug, not an outage")

    monkeypatch.setattr(replica, "primary_lsn", broken)
    with pytest.raises(ValueError):
        replica.remember_write({})
