-- selectors.concurrency.team_keys
-- built by todos.core.selectors.concurrency.team_keys(), the statement #1 it runs
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT k.team_id, k.key, k.claimed, k.max_claimed FROM concurrency_keys k
WHERE k.team_id = %(team)s ORDER BY k.key
