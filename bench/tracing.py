"""The HTTP drain (bench.http_drain) with OpenTelemetry tracing on, beside off.

    uv run --group bench python -m bench.tracing                 # N=4,000, K=8, 4 rounds
    uv run --group bench python -m bench.tracing --smoke

One database, four Board servers (daphne, as ``bench.http_drain`` starts them), drained in turn,
the order mirrored between rounds (A B C, C B A, …):

* ``off``: no ``OTEL_EXPORTER_OTLP_ENDPOINT``, as Board runs by default: no provider, no span;
* ``off, again``: the same server a second time, so the table shows how far two identical
  servers differ on this machine now (the noise the ``off`` figure is read against);
* ``on, no export``: tracing on with ``OTEL_TRACES_EXPORTER=none`` (docs/telemetry.md): the SDK's
  tracer provider makes every verb and statement span and its batch span processor takes them;
  nothing is encoded or sent. The target's own definition (on ≥ 0.90× of off);
* ``on, OTLP``: ``OTEL_EXPORTER_OTLP_ENDPOINT`` on a sink in this process that reads each export and
  answers 200 (no parsing): the SDK's tracer provider, its batch span processor and the OTLP/HTTP
  protobuf exporter all run in the Board process, as in production; only the collector is free.
  Every call makes its verb span and its statement spans (docs/telemetry.md).

Each drain is ``bench.http_drain.drain_http_in``: N todos pre-created (not timed), K worker
processes each with a keep-alive HTTP connection, claim_next → complete until empty, the time from
the release to the last ``completed_at``, verified in SQL afterwards. Printed: each round, the
medians, and the ratios (targets: on, no export ≥ 0.90× of off; off, again within noise of off;
on, OTLP is reported: what a deployment that exports pays).
"""

from __future__ import annotations

import statistics
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bench.common import base_parser, bench_server, connect, print_table, setup_django, store_database
from bench.http_drain import QUEUE, K, Run, drain_http_in
from bench.serving import LoadSampler, clear_todos, load_average, start_board, vend_agent

OFF = "off"
OFF_AGAIN = "off, again"
ON = "on, no export"
ON_OTLP = "on, OTLP"


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that keeps nothing: an empty protobuf answer is a valid success."""

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


def start_sink() -> ThreadingHTTPServer:
    sink = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    return sink


def main(argv: list[str] | None = None) -> int:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = base_parser((__doc__ or "").split("\n")[0], 4_000)
    parser.add_argument("--k", type=int, default=K, help="workers (default 8)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds, mirroring the order (default 4)")
    args = parser.parse_args(argv)
    n = 200 if args.smoke else args.n
    rounds = 1 if args.smoke else args.rounds
    setup_django()
    print(f"load average before: {load_average()}", flush=True)
    results: dict[str, list[Run]] = {}
    sink = start_sink()
    endpoint = f"http://127.0.0.1:{sink.server_address[1]}"
    with bench_server() as admin, store_database(admin) as conninfo, LoadSampler():
        with connect(conninfo) as conn:
            scope, token, _ = vend_agent(conn, (QUEUE,))
        servers = {}
        try:
            servers[OFF] = start_board(conninfo, label=OFF)
            servers[OFF_AGAIN] = start_board(conninfo, label=OFF_AGAIN)
            servers[ON] = start_board(
                conninfo,
                label=ON,
                OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
                OTEL_TRACES_EXPORTER="none",
                OTEL_SERVICE_NAME="board-bench",
            )
            servers[ON_OTLP] = start_board(
                conninfo,
                label=ON_OTLP,
                OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
                OTEL_TRACES_EXPORTER="otlp",
                OTEL_SERVICE_NAME="board-bench",
            )
            for server in servers.values():  # untimed: the first requests fill the server's pools
                drain_http_in(conninfo, server, scope, token, 16 * args.k, args.k, label="warm-up")
                clear_todos(conninfo)
            names = list(servers)
            for r in range(rounds):
                for name in names if r % 2 == 0 else list(reversed(names)):
                    run = drain_http_in(conninfo, servers[name], scope, token, n, args.k, label=name)
                    clear_todos(conninfo)
                    results.setdefault(name, []).append(run)
                    print(
                        f"round {r + 1}: {name:<12} {run.rate:>7,.0f} jobs/s ({run.seconds:.2f} s); "
                        f"load {load_average()}",
                        flush=True,
                    )
        finally:
            for server in servers.values():
                server.stop()
            sink.shutdown()

    rate = {name: statistics.median(r.rate for r in runs) for name, runs in results.items()}
    rows = [
        [
            name,
            n,
            len(runs),
            rate[name],
            " ".join(f"{r.rate:,.0f}" for r in runs),
            f"{rate[name] / rate[OFF]:.2f}×",
            f"{statistics.median(r.board_cpu or 0 for r in runs) / n * 1000:.2f}",
            f"{statistics.median(r.db_cpu or 0 for r in runs) / n * 1000:.2f}",
        ]
        for name, runs in results.items()
    ]
    print_table(
        [
            "tracing",
            "N",
            "rounds",
            "jobs/s (median)",
            "jobs/s per round",
            "vs off",
            "Board CPU ms/job",
            "PG CPU ms/job",
        ],
        rows,
        title=f"HTTP drain with OpenTelemetry tracing on (no export; OTLP/HTTP to a sink) beside off: N={n:,}, K={args.k}",
    )
    print(f"on, no export / off = {rate[ON] / rate[OFF]:.2f}× (target ≥ 0.90×)")
    print(f"on, OTLP / off = {rate[ON_OTLP] / rate[OFF]:.2f}× (reported: the exporter's encoding and sending too)")
    print(f"off, again / off = {rate[OFF_AGAIN] / rate[OFF]:.2f}× (the noise between two identical servers)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
