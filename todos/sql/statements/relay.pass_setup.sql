-- relay.pass_setup
-- the constant todos.live.relay.PASS_SETUP_SQL
-- bound where it runs:
--   %(lock)s = 108230515778562
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT pg_advisory_xact_lock(%(lock)s), set_config('enable_seqscan', 'off', true)
