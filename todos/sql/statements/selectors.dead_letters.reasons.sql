-- selectors.dead_letters.reasons
-- the constant todos.core.selectors.dead_letters.REASONS_SQL
-- bound where it runs:
--   %(ids)s = ['td_00000000000000000000000000000001']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

SELECT d.id, coalesce(
        nullif(concat_ws(': ',
        nullif(btrim(a.error->>'type'), ''),
        nullif(btrim(split_part(a.error->>'message', E'\n', 1), E' \t\r'), '')), ''),
        nullif(a.summary, ''), d.result->>'error', '(no reason recorded)') AS reason, a.outcome
FROM todos d LEFT JOIN todo_attempts a ON a.todo_id = d.id AND a.seq = d.attempts_total
WHERE d.id = ANY(%(ids)s::text[])
