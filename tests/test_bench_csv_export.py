"""bench/csv_export.py in smoke mode: a few thousand todos through the real export view, so the
harness (loading, the ASGI request, counting rows, sampling RSS) cannot rot between full runs."""

from __future__ import annotations

import pytest

from bench import csv_export

pytestmark = pytest.mark.usefixtures("store_db")


def test_export_bench_streams_every_row(capsys):
    run = csv_export.run_export(6_100)  # two pages of 5,000 rows, then the rest
    assert run.rows == 6_100
    assert run.seconds > 0 and run.rows_per_second > 0
    assert run.rss_peak >= run.rss_before > 0
    csv_export.report(6_100, run)
    assert "rows/s" in capsys.readouterr().out
