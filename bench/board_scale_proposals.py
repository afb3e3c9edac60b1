"""Figure 6's findings, measured: proposed index and query changes on the loaded 5M-row database.

    uv run --group bench python -m bench.board_scale_proposals            # after bench.board_scale
    uv run --group bench python -m bench.board_scale_proposals --runs 10

Each experiment times Board's SQL as the selectors build it today against the proposed SQL
and/or with a proposed index present, on the same data (``bench.board_scale``'s kept database),
alternating the two per run, and checks that both answer the same. Indexes a proposal needs are
created for the experiment and dropped after it, so the database stays as ``bench.board_scale``
loaded it. Nothing here changes Board; ``bench/RESULTS-2.md`` describes each change.

1. **Assigned to me.** ``(assignee = me OR owner = me)`` is a row filter on the newest-first walk
   of each endpoint: a human with nothing (or little) assigned makes every branch walk the whole
   endpoint, and every count tab too. Proposed: partial indexes on ``(endpoint_id, assignee,
   created_at, id) WHERE assignee IS NOT NULL`` and the same on ``owner`` (set only while
   claimed); and the list as two ordered branches (assignee, owner) instead of an OR.
2. **Capped counts.** ``capped_count_sql`` wraps the branches in an outer ``ORDER BY … LIMIT
   cap``: the sort needs every branch's ``cap`` rows first, so a count reads up to
   ``cap × endpoints`` index entries (50,050 for a human in five teams). Proposed: no outer ORDER
   BY (a count needs no order): the nested loop stops at ``cap + 1`` rows.
3. **Overview dead letters.** The per-(endpoint, queue) dead-letter count filters
   ``next_retry_at IS NULL`` on the heap: up to 1,001 heap fetches per pair. Proposed: a partial
   index ``(endpoint_id, queue, created_at) WHERE state = 'failed' AND next_retry_at IS NULL``
   (an index-only count).
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time

from bench import board_scale
from bench.common import base_parser, connect, print_table
from bench.serving import load_average, percentile

ASSIGNEE_INDEX = ("bench_todos_assignee",
                  "CREATE INDEX bench_todos_assignee ON todos (endpoint_id, assignee, created_at, id) WHERE assignee IS NOT NULL")
OWNER_INDEX = ("bench_todos_owner",
               "CREATE INDEX bench_todos_owner ON todos (endpoint_id, owner, created_at, id) WHERE owner IS NOT NULL")
DEAD_QUEUE_INDEX = ("bench_todos_dead_queue",
                    "CREATE INDEX bench_todos_dead_queue ON todos (endpoint_id, queue, created_at) "
                    "WHERE state = 'failed' AND next_retry_at IS NULL")

MINE_LIST = """
SELECT x.* FROM unnest(%(eps)s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    (SELECT t.id, t.created_at FROM todos t WHERE t.endpoint_id = e.id AND t.assignee = %(me)s
     ORDER BY t.created_at DESC, t.id DESC LIMIT %(limit)s)
    UNION ALL
    (SELECT t.id, t.created_at FROM todos t WHERE t.endpoint_id = e.id AND t.owner = %(me)s
       AND t.assignee IS DISTINCT FROM %(me)s
     ORDER BY t.created_at DESC, t.id DESC LIMIT %(limit)s)
) x
ORDER BY x.created_at DESC, x.id DESC
LIMIT %(limit)s"""


def _timed(conn, sql: str, params: dict) -> tuple[float, list]:
    started = time.perf_counter()
    rows = conn.execute(sql, params).fetchall()
    return (time.perf_counter() - started) * 1000, rows


@dataclasses.dataclass
class Experiment:
    name: str
    who: str
    current: list[float]
    proposed: list[float]
    same: bool

    def row(self) -> list:
        c, p = statistics.median(self.current), statistics.median(self.proposed)
        return [self.name, self.who, len(self.current), f"{c:,.1f}", f"{percentile(self.current, 95):,.1f}",
                len(self.proposed), f"{p:,.1f}", f"{percentile(self.proposed, 95):,.1f}", f"{c / p:,.0f}x",
                "yes" if self.same else "NO"]


def _indexes(conn, *indexes, create: bool) -> None:
    for name, ddl in indexes:
        conn.execute(f"DROP INDEX IF EXISTS {name}")
        if create:
            conn.execute(ddl)
    conn.execute("ANALYZE todos")


def compare(conn, name: str, who: str, runs: int, current, proposed, *, slow_ms: float = 5_000) -> Experiment:
    """Alternate ``current()`` and ``proposed()`` (each returns (ms, rows)) ``runs`` times; a
    current side slower than ``slow_ms`` is run only once."""
    cur, new, same = [], [], True
    for _ in range(runs):
        if not cur or statistics.median(cur) < slow_ms:
            ms, a = current()
            cur.append(ms)
        ms, b = proposed()
        new.append(ms)
        same &= sorted(map(str, a)) == sorted(map(str, b))
    return Experiment(name, who, cur, new, same)


def mine(conn, viewers: dict, runs: int) -> list[Experiment]:
    """1. Assigned to me: the list query and the page's six capped count tabs."""
    from todos.filters import TodoFilter
    from todos.selectors import todos as sel

    out = []
    for who, viewer in viewers.items():
        f = TodoFilter(mine=True)
        q = sel.build_query(viewer, f)
        q.params["limit"] = sel.PAGE_SIZE + 1
        list_sql = sel._scan_sql(q, columns=("created_at", "id"), direction="DESC", keyset=None, limit_param="limit",
                                 select="t.id, t.created_at")
        counts = []
        for key in ("all", "pending", "retry", "dead", "done", "canceled"):
            qc = sel.build_query(viewer, dataclasses.replace(f, state=key))
            counts.append((sel.capped_count_sql(qc), dict(qc.params, cap=sel.COUNT_CAP + 1)))

        def page_sql(list_text: str, list_params: dict):
            def run():
                total, rows = _timed(conn, list_text, list_params)
                for sql, params in counts:
                    ms, n = _timed(conn, sql, params)
                    total += ms
                    rows = rows + n
                return total, rows
            return run

        # Today: no index. Proposed: the two partial indexes and the two-branch list.
        _indexes(conn, ASSIGNEE_INDEX, OWNER_INDEX, create=False)
        today = page_sql(list_sql, q.params)
        cur_ms, cur_rows = today()
        _indexes(conn, ASSIGNEE_INDEX, OWNER_INDEX, create=True)
        proposed = page_sql(MINE_LIST, {"eps": viewer.endpoint_ids, "me": viewer.owner, "limit": sel.PAGE_SIZE + 1})
        index_only = page_sql(list_sql, q.params)
        exp = compare(conn, "assigned to me: list + 6 count tabs (indexes + two-branch list)", who, runs,
                      lambda: (cur_ms, cur_rows), proposed)
        exp.current = [cur_ms]  # today's side runs once: it is the minutes-long query
        out.append(exp)
        exp2 = compare(conn, "assigned to me: same SQL as today, with the two indexes only", who, runs,
                       lambda: (cur_ms, cur_rows), index_only)
        exp2.current = [cur_ms]
        out.append(exp2)
        _indexes(conn, ASSIGNEE_INDEX, OWNER_INDEX, create=False)
    return out


def counts(conn, viewers: dict, runs: int) -> list[Experiment]:
    """2. The state tabs' capped counts without the outer ORDER BY."""
    from todos.filters import TodoFilter
    from todos.selectors import todos as sel

    out = []
    for who, viewer in viewers.items():
        pairs = []
        for key in ("all", "pending", "retry", "dead", "done", "canceled"):
            q = sel.build_query(viewer, TodoFilter(state=key))
            sql = sel.capped_count_sql(q)
            head, sep, tail = sql.rpartition("\nORDER BY x.created_at ASC, x.id ASC\n")
            assert sep, "capped_count_sql changed shape: update this experiment"
            pairs.append((sql, head + "\n" + tail, dict(q.params, cap=sel.COUNT_CAP + 1)))

        def total(which: int):
            def run():
                ms, rows = 0.0, []
                for pair in pairs:
                    t, r = _timed(conn, pair[which], pair[2])
                    ms += t
                    rows += r
                return ms, rows
            return run

        out.append(compare(conn, "state tabs: 6 capped counts, no outer ORDER BY", who, runs, total(0), total(1)))
    return out


def overview(conn, viewers: dict, runs: int) -> list[Experiment]:
    """3. The overview's per-(endpoint, queue) counts with a dead-letter index that has the queue."""
    from todos.selectors import overview as ov

    out = []
    for who, viewer in viewers.items():
        eps = viewer.endpoint_ids
        pairs = sorted({(e.id, q) for e in viewer.endpoints for q in e.scope_queues}, key=lambda p: (str(p[0]), p[1]))
        params = {"eps": eps, "cap": ov.COUNT_CAP + 1, "pair_eps": [p[0] for p in pairs], "pair_queues": [p[1] for p in pairs]}
        _indexes(conn, DEAD_QUEUE_INDEX, create=False)
        before = [_timed(conn, ov.PAIR_SQL, params) for _ in range(runs)]
        _indexes(conn, DEAD_QUEUE_INDEX, create=True)
        after = [_timed(conn, ov.PAIR_SQL, params) for _ in range(runs)]
        _indexes(conn, DEAD_QUEUE_INDEX, create=False)
        out.append(Experiment("overview: per-queue counts (PAIR_SQL), dead-letter index with the queue", who,
                              [b[0] for b in before], [a[0] for a in after],
                              sorted(map(str, before[0][1])) == sorted(map(str, after[0][1]))))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = base_parser(__doc__.split("\n")[0], 5_000_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--data-dir", default=board_scale.DEFAULT_DIR)
    args = parser.parse_args(argv)
    print(f"load average before: {load_average()}", flush=True)
    if args.smoke:
        from bench.common import bench_server, store_database

        with bench_server() as admin, store_database(admin) as conninfo:
            board_scale.run_scale_in(conninfo, 3_000, runs=0, reload=True)
            rows = run_proposals_in(conninfo, 2)
    else:
        conninfo = board_scale.use_database(args.data_dir)
        rows = run_proposals_in(conninfo, args.runs)
    print_table(["proposal", "signed in as operator of", "runs", "today p50 ms", "today p95 ms", "runs",
                 "proposed p50 ms", "proposed p95 ms", "speed-up (p50)", "same answer"],
                [e.row() for e in rows], title=f"Figure 6 proposals, SQL only (no rendering); load average now {load_average()}")
    return 0


def run_proposals_in(conninfo: str, runs: int) -> list[Experiment]:
    from todos.selectors.access import viewer_for

    with connect(conninfo) as conn:
        tenancy = board_scale.make_tenancy(conn)
        viewers = {("one team" if name == board_scale.ME else "all 5 teams"): viewer_for(user)
                   for name, user in tenancy["users"].items()}
        try:
            return counts(conn, viewers, runs) + overview(conn, viewers, runs) + mine(conn, viewers, runs)
        finally:
            _indexes(conn, ASSIGNEE_INDEX, OWNER_INDEX, DEAD_QUEUE_INDEX, create=False)


if __name__ == "__main__":
    sys.exit(main())
