"""Board's ASGI application with the agent API fast path (``bench.proposals.AgentApiFastPath``).

Served by the benchmarks only (``daphne bench.asgi_fast_api:application``), side by side with
``board.asgi:application``, to measure the proposal without editing Board.
"""

from board.asgi import application as board_application

from bench.proposals import AgentApiFastPath

application = AgentApiFastPath(board_application)
