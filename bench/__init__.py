"""The in-process benchmarks: drain throughput, HOT updates, crash recovery.

Each module runs with one command (``uv run --group bench python -m bench.drain``) and has a
``--smoke`` mode that ``tests/test_bench_smoke.py`` runs against the test database. See
``bench/README.md`` for the figures and how to reproduce them.
"""
