"""Several loop processes (``manage.py reaper --once``, the loops of a Board process) sweep the
same due schedules at once: every tick fires exactly once."""

from __future__ import annotations

import subprocess
import sys

from tests.store.helpers import one
from tests.support.live_server import ROOT, server_environment

SCHEDULES = 3000
PROCESSES = 4


def test_loop_processes_fire_each_tick_once(world):
    # Seeded in SQL (the store's create is tested elsewhere): every schedule due at this minute.
    one(
        """WITH made AS (
               INSERT INTO schedules (team_id, name, cron, timezone, endpoint_id, queue, title, next_fire_at)
               SELECT %(team)s, 's' || g, '* * * * *', 'UTC', %(ep)s, 'default', 'tick ' || g,
                      date_trunc('minute', now())
               FROM generate_series(1, %(n)s) g RETURNING 1)
           SELECT count(*) AS n FROM made""",
        {"team": world.team.id, "ep": world.agent.endpoint_id, "n": SCHEDULES},
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "manage.py", "reaper", "--once"],
            cwd=ROOT,
            env=server_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for _ in range(PROCESSES)
    ]
    outputs = [p.communicate(timeout=180)[0].decode() for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    fired = [
        int(line.split(":")[1].split()[0])
        for out in outputs
        for line in out.splitlines()
        if line.startswith("schedules:")
    ]
    assert sum(fired) == SCHEDULES, outputs  # the processes' own tallies add up to one per tick
    assert one("SELECT count(*) AS n FROM schedule_fires")["n"] == SCHEDULES
    assert one("SELECT count(*) AS n, count(DISTINCT idempotency_key) AS k FROM todos") == {
        "n": SCHEDULES,
        "k": SCHEDULES,
    }
    assert one("SELECT count(*) AS n FROM schedules WHERE next_fire_at <= now()")["n"] == 0
