"""An open-loop load: sends issued on a fixed schedule, whatever the answers do.

Why open loop: a closed loop (send, wait for the answer, send again) slows down with the system it
measures, so it can never offer more than the system takes and never sees a queue build up. Here
the i-th send of a step leaves at ``t0 + step start + i / rate`` whether the earlier ones have been
answered or not. Sends in flight are bounded by a generous cap; a send due while the cap is full is
not issued and counts as *shed*, one issued more than ``LATE_AFTER`` behind its time counts as
*late* (the generator could not keep up: the step's offered rate is then not what it says).

The counters live in shared memory (one writer per array: the process that owns it), so the
orchestrating process reads them at the edges of each measured window while the load runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

LATE_AFTER = 0.05  # seconds behind schedule before a send counts as late

# What a producer counts. Each send ends as exactly one of accepted, refused (a 4xx), s503, s5xx
# (another 5xx) or errors (no answer); scheduled = sent + shed.
PRODUCER_COUNTERS = ("scheduled", "sent", "accepted", "refused", "s503", "s5xx", "errors", "shed", "late")
# What the workers count: requests of each verb, claims that returned work or nothing, completes
# answered 200, and the same refusals as the producer's.
WORKER_COUNTERS = (
    "claim_requests",
    "claims",
    "empty",
    "complete_requests",
    "completes",
    "refused",
    "s503",
    "s5xx",
    "errors",
)


@dataclass(frozen=True)
class Plan:
    """Steps of offered rates, each a warm-up (sent, not measured) then a measured window."""

    rates: tuple[float, ...]
    warmup: float
    step: float

    @property
    def seconds(self) -> float:
        return len(self.rates) * (self.warmup + self.step)

    def window(self, s: int) -> tuple[float, float]:
        """Step ``s``'s measured window, in seconds after t0."""
        start = s * (self.warmup + self.step) + self.warmup
        return start, start + self.step

    def sends(self) -> Iterator[tuple[float, int, bool]]:
        """(seconds after t0, step, in the measured window) of every send, in order."""
        for s, rate in enumerate(self.rates):
            start = s * (self.warmup + self.step)
            for i in range(round(rate * (self.warmup + self.step))):
                at = i / rate
                yield start + at, s, at >= self.warmup


class Counters:
    """Named float counters in shared memory; pass to a spawned process as an argument."""

    def __init__(self, ctx: Any, names: tuple[str, ...]):
        self.names = names
        self.index = {name: i for i, name in enumerate(names)}
        self.values = ctx.RawArray("d", len(names))

    def add(self, name: str, n: float = 1) -> None:
        self.values[self.index[name]] += n

    def snapshot(self) -> dict[str, float]:
        return {name: self.values[i] for i, name in enumerate(self.names)}


def outcome(status: int) -> str:
    """The counter an answer's status lands in."""
    if 200 <= status < 300:
        return "accepted"
    if status == 503:
        return "s503"
    return "s5xx" if status >= 500 else "refused"


def retry_delay(retry_after: float | None) -> float:
    """How long a worker waits after a 5xx: the server's Retry-After, at least 0.1 s and at most
    2 s (``board_client.Worker`` honours Retry-After the same way, under its own ceiling)."""
    return min(2.0, max(0.1, retry_after or 0.0))


async def open_loop(
    plan: Plan, t0: float, send: Callable[[int, bool], Awaitable[str]], cap: int, counters: Counters
) -> None:
    """Issue every send of ``plan`` on time (``t0`` on ``time.monotonic()``'s clock, which is the
    event loop's); ``send(step, measured)`` returns the counter its answer lands in."""
    loop = asyncio.get_running_loop()
    in_flight = 0
    tasks: set[asyncio.Task] = set()

    async def one(step: int, measured: bool) -> None:
        nonlocal in_flight
        try:
            counters.add(await send(step, measured))
        except Exception:  # noqa: BLE001 - a send that raised got no answer
            counters.add("errors")
        finally:
            in_flight -= 1

    for at, step, measured in plan.sends():
        due = t0 + at
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        counters.add("scheduled")
        if loop.time() - due > LATE_AFTER:
            counters.add("late")
        if in_flight >= cap:
            counters.add("shed")
            continue
        in_flight += 1
        counters.add("sent")
        task = loop.create_task(one(step, measured))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(tasks, timeout=40)
