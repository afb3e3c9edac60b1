-- store.saved_views.rename
-- built by todos.core.store.saved_views.rename()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   view_id = 12
--   name = 'Dead email'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH target AS (
    SELECT id FROM saved_views WHERE id = %(id)s AND user_id = %(user_id)s
),
clash AS (
    SELECT id FROM saved_views WHERE user_id = %(user_id)s AND name = %(name)s AND id <> %(id)s
),
upd AS (
    -- guard: the view is the person's and no other view of theirs has the new name; effect: its
    -- name. No todo or attempt row is touched.
    UPDATE saved_views v SET name = %(name)s
    FROM target
    WHERE v.id = target.id AND NOT EXISTS (SELECT 1 FROM clash)
    RETURNING v.id, v.name, v.query, v.created_at
)
SELECT upd.id, upd.name, upd.query, upd.created_at,
       EXISTS (SELECT 1 FROM target) AS found, EXISTS (SELECT 1 FROM clash) AS clash
FROM (SELECT 1) one LEFT JOIN upd ON true
