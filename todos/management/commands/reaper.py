"""``manage.py reaper``: run the background loops (reaper, run-time limits, requeue, retention,
expiry, the change log's cap) alone, and stand as a change-log relay candidate.

For deployments that keep them out of the web processes; ``manage.py up`` runs them too, and
running both (or several of either) is safe.
"""

import signal
import threading

from django.core.management.base import BaseCommand

from todos.live.relay import start_relay
from todos.ops.loops import SWEEPS, run_sweep_once, start_loops


class Command(BaseCommand):
    help = (
        "Run the background loops (reaper, run-time limits, due-retry requeue, retention, endpoint expiry) "
        "until stopped."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="Run every sweep once and exit.")

    def handle(self, *args, once: bool = False, **options):
        if once:
            for sweep in SWEEPS:
                changed = run_sweep_once(sweep)
                self.stdout.write(f"{sweep.name}: {changed} changed")
            return
        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        threads = start_loops(stop)
        relay = start_relay()
        self.stdout.write("background loops running (Ctrl-C to stop)")
        stop.wait()
        if relay is not None:
            relay.stop()
        for thread in threads:
            thread.join(timeout=5)
        self.stdout.write("background loops stopped")
