-- selectors.rate_limits.team_limits
-- built by todos.core.selectors.rate_limits.team_limits(), the statement #1 it runs
-- with:
--   team_id = UUID('00000000-0000-4000-8000-00000000a001')
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT r.team_id, r.key, r.allowance, r.per, r.refills_at, coalesce(r.refills_at > now(), false) AS throttled,
       0 AS waiting
FROM rate_limits r WHERE r.team_id = %(team)s ORDER BY r.key
