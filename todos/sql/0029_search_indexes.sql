-- The operator's filters at scale: what a failed todo failed with, stored; indexes for the
-- finished time and for an exact priority.
--
-- ``board_reason_group`` is the one definition of a failure's reason group (the Dead letters
-- page's grouping, docs/board.md): the last attempt's error object as "type: first line of
-- message", else its summary, else the todo's ``result.error``; lower case, UUIDs, hex runs and
-- digits replaced, whitespace collapsed, at most 300 characters. The statements that fail a todo
-- store it in ``todos.failure_reason_group``; the "failed with" filter reads the column through
-- ``todos_failed_reason``, which only failed rows enter. The column of a todo that left ``failed``
-- is stale and never read (every read of it also requires ``state = 'failed'``).

CREATE OR REPLACE FUNCTION board_reason_group(error jsonb, summary text, result_error text)
RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT left(btrim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
    lower(coalesce(
        nullif(concat_ws(': ',
            nullif(btrim(error->>'type'), ''),
            nullif(btrim(split_part(error->>'message', E'\n', 1), E' \t\r'), '')), ''),
        nullif(summary, ''), result_error, '(no reason recorded)')),
    '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g'),
    '(0x)?(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{6,}', '<hex>', 'g'),
    '[0-9]+', '#', 'g'),
    '\s+', ' ', 'g')), 300)
$$;

ALTER TABLE todos ADD COLUMN IF NOT EXISTS failure_reason_group text;

UPDATE todos t SET failure_reason_group = (
    SELECT board_reason_group(a.error, a.summary, t.result->>'error')
    FROM (SELECT 1) one LEFT JOIN todo_attempts a ON a.todo_id = t.id AND a.seq = t.attempts_total)
WHERE t.state = 'failed' AND t.failure_reason_group IS NULL;

-- The state and retry time ride along, so the tabs' counts under the filter read the index alone.
CREATE INDEX IF NOT EXISTS todos_failed_reason ON todos (endpoint_id, failure_reason_group, created_at, id)
    INCLUDE (state, next_retry_at) WHERE state = 'failed';

-- The finished filter: each endpoint's finished todos by finished time (the tabs' counts walk it).
CREATE INDEX IF NOT EXISTS todos_endpoint_finished ON todos (endpoint_id, completed_at, id)
    WHERE completed_at IS NOT NULL;

-- An exact priority (the default 0 stays out: the claim path's rows mostly never enter it).
CREATE INDEX IF NOT EXISTS todos_endpoint_priority ON todos (endpoint_id, priority, created_at, id)
    INCLUDE (state, next_retry_at) WHERE priority <> 0;
