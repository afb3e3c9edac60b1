-- store.saved_views.save
-- built by todos.core.store.saved_views.save()
-- with:
--   by = OperatorScope(user_id=7, username='olive')
--   name = 'Dead mail'
--   query = 'state=dead&queue=email'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH mine AS (
    SELECT count(*) AS n,
           coalesce(bool_or(v.name = %(name)s), false) AS taken,
           (SELECT min(s.slot) FROM generate_series(1, %(max_views)s) AS s(slot)
            WHERE s.slot NOT IN (SELECT slot FROM saved_views WHERE user_id = %(user_id)s)) AS free_slot
    FROM saved_views v WHERE v.user_id = %(user_id)s
),
ins AS (
    -- guard: the name is not one of the person's views and a slot of their 100 is free; effect:
    -- one saved_views row. No todo or attempt row is touched. A save racing this one for the same
    -- name or slot makes ON CONFLICT skip the row (reported below, then run again).
    INSERT INTO saved_views (user_id, slot, name, query)
    SELECT %(user_id)s, mine.free_slot, %(name)s, %(query)s FROM mine
    WHERE NOT mine.taken AND mine.free_slot IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING id, name, query, created_at
)
SELECT ins.id, ins.name, ins.query, ins.created_at, mine.n, mine.taken
FROM mine LEFT JOIN ins ON true
