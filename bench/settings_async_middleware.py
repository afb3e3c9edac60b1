"""Board's settings with an all-async middleware chain (the proposal in ``bench/proposals.py``).

Used only by the benchmarks, as ``DJANGO_SETTINGS_MODULE`` of a second Board server that runs
side by side with one on ``board.settings``.
"""

from bench.proposals import async_middleware
from board.settings import *  # noqa: F401,F403
from board.settings import MIDDLEWARE as _BOARD_MIDDLEWARE

MIDDLEWARE = async_middleware(_BOARD_MIDDLEWARE)
