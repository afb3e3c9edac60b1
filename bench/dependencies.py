"""Work with a shape: todos that wait for other todos (docs/lifecycle.md, "Dependencies").

    uv run --group bench python -m bench.dependencies
    uv run --group bench python -m bench.dependencies --smoke

(a) **Fan-in**: one parent with ``--children`` (10,000) blocked children; the parent's
``complete`` is timed (it counts off and unblocks every child in its one statement; target
≤ 200 ms), then every child must be claimable at its commit.

(b) **A graph**: ``--layers`` (10) layers of ``--width`` (100) todos, each todo after two of the
layer before (its own position and the next, wrapping), 1,000 todos in ONE ``create_batch``;
drained by ``--k`` (8) worker threads (claim_next, complete, and a short sleep while what is left
is blocked). Its wall time is set against the same number of todos without dependencies.
"""

from __future__ import annotations

import sys
import threading
import time

from bench.common import (
    base_parser,
    bench_server,
    check,
    connect,
    make_agent,
    one_row,
    print_table,
    store_database,
)

QUEUE = "bench"


def fan_in_in(conninfo: str, children: int) -> dict:
    """Time the completion of a parent that ``children`` todos wait for."""
    from todos.core.db import execute
    from todos.core.store import agent

    with connect(conninfo) as conn:
        scope = make_agent(conn, QUEUE)
        parent = execute(agent.create(scope, queue=QUEUE, title="parent"), conn).todo
        for start in range(0, children, 1000):
            items = [
                {"queue": QUEUE, "title": f"child {i}", "after": [parent.id]}
                for i in range(start, min(children, start + 1000))
            ]
            execute(agent.create_batch(scope, items), conn)
        conn.execute("VACUUM (ANALYZE) todos")
        conn.execute("VACUUM (ANALYZE) todo_dependencies")
        execute(agent.claim(scope, parent.id), conn)
        started = time.perf_counter()
        execute(agent.complete(scope, parent.id), conn)
        seconds = time.perf_counter() - started
        ready = one_row(
            conn.execute(
                """SELECT count(*) AS n FROM todo_dependencies d JOIN todos c ON c.id = d.child_id
               WHERE d.parent_id = %s AND c.state = 'pending' AND c.next_retry_at IS NULL AND c.parents_left = 0""",
                (parent.id,),
            )
        )["n"]
    check(ready == children, f"{ready} of {children} children claimable after the parent's completion")
    return {"children": children, "complete_ms": seconds * 1000}


def graph_items(layers: int, width: int, *, shaped: bool) -> list[dict]:
    """``layers`` × ``width`` items; shaped: each after two items of the layer before."""
    items = []
    for layer in range(layers):
        for i in range(width):
            item: dict = {"queue": QUEUE, "title": f"L{layer} #{i}"}
            if shaped and layer:
                base = (layer - 1) * width
                item["after_items"] = sorted({base + i, base + (i + 1) % width})
            items.append(item)
    return items


def drain_in(conninfo: str, layers: int, width: int, k: int, *, shaped: bool) -> dict:
    """Create the graph (or the same todos unshaped) in one create_batch, then drain it with ``k``
    threads; returns the drain's wall time and the order check."""
    from todos.core.db import execute
    from todos.core.store import agent

    total = layers * width
    with connect(conninfo) as conn:
        scope = make_agent(conn, QUEUE)
        results = execute(agent.create_batch(scope, graph_items(layers, width, shaped=shaped)), conn)
    check(all(r.todo is not None for r in results), "every item created")
    layer_of = {r.todo.id: n // width for n, r in enumerate(results) if r.todo is not None}
    finished: list[int] = []  # the layer of each todo, in completion order
    lock = threading.Lock()
    barrier = threading.Barrier(k)

    def work() -> None:
        with connect(conninfo) as conn:
            barrier.wait()
            while True:
                claim = execute(agent.claim_next(scope), conn)
                if claim is None:
                    with lock:
                        if len(finished) >= total:
                            return
                    time.sleep(0.002)
                    continue
                execute(agent.complete(scope, claim.todo.id), conn)
                with lock:
                    finished.append(layer_of[claim.todo.id])

    threads = [threading.Thread(target=work) for _ in range(k)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    check(len(finished) == total, f"{len(finished)} of {total} todos done")
    with connect(conninfo) as conn:
        early = one_row(
            conn.execute(
                """SELECT count(*) AS n FROM todo_dependencies d
               JOIN todos c ON c.id = d.child_id JOIN todos p ON p.id = d.parent_id
               WHERE c.endpoint_id = %s AND (c.claimed_at < p.completed_at OR c.state <> 'done')""",
                (scope.endpoint_id,),
            )
        )["n"]
    check(early == 0, f"{early} todos claimed before a parent was done")
    return {"todos": total, "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    parser = base_parser((__doc__ or "").split("\n")[0], 1_000)
    parser.add_argument("--children", type=int, default=10_000, help="blocked children of one parent (10,000)")
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--k", type=int, default=8, help="worker threads draining the graph (8)")
    args = parser.parse_args(argv)
    children, layers, width, k = (50, 3, 4, 2) if args.smoke else (args.children, args.layers, args.width, args.k)
    with bench_server() as admin:
        with store_database(admin) as conninfo:
            fan = fan_in_in(conninfo, children)
        with store_database(admin) as conninfo:
            flat = drain_in(conninfo, layers, width, k, shaped=False)
        with store_database(admin) as conninfo:
            shaped = drain_in(conninfo, layers, width, k, shaped=True)
    print_table(
        ["measure", "figure"],
        [
            [f"complete of a parent with {fan['children']:,} children", f"{fan['complete_ms']:.1f} ms"],
            [f"drain {flat['todos']:,} todos, no dependencies, K={k}", f"{flat['seconds']:.2f} s"],
            [f"drain {layers} layers × {width}, each after 2, K={k}", f"{shaped['seconds']:.2f} s"],
            ["graph / flat", f"{shaped['seconds'] / flat['seconds']:.2f}×"],
        ],
        title="Work with a shape",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
