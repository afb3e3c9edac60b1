-- store.bulk_jobs.create
-- built by todos.core.store.bulk_jobs.create()
-- with:
--   op = OperatorScope(user_id=7, username='olive')
--   action = 'retry'
--   scope = 'selected'
--   description = 'Retry 2 selected todos'
--   selected_ids = ['td_00000000000000000000000000000001',
--       'td_00000000000000000000000000000002']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH acting AS (
    SELECT array_agg(team_id ORDER BY team_id) AS team_ids FROM team_members
    WHERE user_id = %(user_id)s AND role IN ('operator', 'admin')
)
INSERT INTO bulk_jobs (user_id, username, action, scope, filter, group_reason, selected_ids, team_ids,
                       description, note)
SELECT %(user_id)s, %(username)s, %(action)s, %(scope)s, %(filter)s, %(group_reason)s, %(selected_ids)s::text[],
       a.team_ids, %(description)s, %(note)s
FROM acting a WHERE a.team_ids IS NOT NULL
RETURNING id
