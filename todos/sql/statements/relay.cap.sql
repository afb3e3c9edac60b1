-- relay.cap
-- the constant todos.live.relay.CAP_SQL
-- bound where it runs:
--   %(age)s = 3600.0
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH dropped AS (
    DELETE FROM change_log
    WHERE at < now() - make_interval(secs => %(age)s)
      AND (SELECT alive_at IS NULL OR alive_at < now() - make_interval(secs => %(age)s) FROM relay_state)
    RETURNING id
),
marked AS (UPDATE relay_state SET counts_stale = true WHERE EXISTS (SELECT 1 FROM dropped))
SELECT count(*) AS dropped FROM dropped
