-- Dependencies: todos that wait for other todos (docs/lifecycle.md, "Dependencies").
--
-- A child names its parents at creation; `todo_dependencies` holds one row per (child, parent).
-- `settled` says the parent no longer counts for the child although it is not done: it died or
-- was canceled and the child's rule is `run` (or it was already done when the child was created).
-- A parent that an operator retries after it died is then never counted off twice. A completion
-- writes no dependency row: `done` is terminal, so it counts each child off once.
--
-- A child with parents still to finish is *blocked*: `pending` with `next_retry_at = 'infinity'`,
-- scheduled for never. The claims stay as they were: fresh work needs `next_retry_at IS NULL`,
-- due work `next_retry_at <= now()`, so the `todos_retry_due` range scan stops before infinity
-- and never walks a blocked row, and the requeue loop never clears it. `parents_left` counts
-- the parents not yet settled; the statement that settles the last one moves the child's own
-- run-at time (`run_at_after_block`, NULL for none) into `next_retry_at`.
--
-- On todos: three columns with no default or a constant one (catalog-only, no table rewrite). A
-- column's own rule is its domain (0018), added to the domain once the column exists (one read of
-- `todos` to validate it). The dependency table is new and empty.
CREATE DOMAIN parents_left AS integer;
CREATE DOMAIN parent_failure_rule AS text;
ALTER TABLE todos ADD COLUMN IF NOT EXISTS parents_left parents_left NOT NULL DEFAULT 0;
ALTER TABLE todos ADD COLUMN IF NOT EXISTS on_parent_failure parent_failure_rule;
ALTER TABLE todos ADD COLUMN IF NOT EXISTS run_at_after_block timestamptz;
ALTER DOMAIN parents_left ADD CONSTRAINT parents_left_not_negative CHECK (VALUE >= 0);
ALTER DOMAIN parent_failure_rule ADD CONSTRAINT parent_failure_rule_word CHECK (VALUE IN ('cancel', 'run'));

CREATE TABLE IF NOT EXISTS todo_dependencies (
    child_id   text    NOT NULL REFERENCES todos(id) ON DELETE CASCADE,
    parent_id  text    NOT NULL REFERENCES todos(id) ON DELETE CASCADE,
    settled    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (child_id, parent_id),
    CHECK (child_id <> parent_id)
);
-- What waits for a todo: probed by every statement that finishes one (one probe when nothing does).
CREATE INDEX IF NOT EXISTS todo_dependencies_parent ON todo_dependencies (parent_id);

-- The Board's states gain `blocked`: pending, scheduled for never until its parents are done.
CREATE OR REPLACE FUNCTION todo_board_state(state text, next_retry_at timestamptz) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN state = 'pending' AND next_retry_at = 'infinity' THEN 'blocked'
                WHEN state = 'pending' AND next_retry_at IS NOT NULL THEN 'scheduled'
                WHEN state <> 'failed' THEN state
                WHEN next_retry_at IS NULL THEN 'dead'
                ELSE 'retry' END
$$;
ALTER TABLE todo_counts DROP CONSTRAINT todo_counts_state_check;
ALTER TABLE todo_counts ADD CONSTRAINT todo_counts_state_check
    CHECK (state IN ('pending', 'blocked', 'scheduled', 'claimed', 'retry', 'dead', 'done', 'canceled'));

-- The two steps every statement that finishes a todo runs on its children, as functions so that
-- they read the dependency rows with a snapshot of their own. A create locks its parents FOR SHARE
-- before it reads their states, so a parent's completion that started earlier waits for the
-- create to commit; its own snapshot is older than the create's dependency rows, but these
-- functions (VOLATILE: each query takes a new snapshot) run after the parent's row is written
-- and see them. Without that, the child would stay blocked for ever: a lost wake-up.

-- Count parents off: `children` holds a child id once per parent just settled. Only a blocked
-- child is touched (one run anyway has unblocked is left alone); the newest row version is
-- re-checked under its lock, so of two parents settling at once exactly one sees the count reach
-- zero. Each child row is written once. Returns the children written (blocked or not any more).
CREATE OR REPLACE FUNCTION todo_count_off(children text[])
    RETURNS TABLE (id text, endpoint_id uuid, queue text, state text, next_retry_at timestamptz)
    LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH counted AS (
    UPDATE todos c
    SET parents_left = c.parents_left - k.n,
        next_retry_at = CASE WHEN c.parents_left > k.n THEN c.next_retry_at
                             WHEN c.run_at_after_block > now() THEN c.run_at_after_block END,
        run_at_after_block = CASE WHEN c.parents_left > k.n THEN c.run_at_after_block END,
        updated_at = now()
    FROM (SELECT u.child_id, count(*)::integer AS n FROM unnest(children) AS u(child_id) GROUP BY 1) k
    WHERE c.id = k.child_id
      AND c.state = 'pending' AND c.next_retry_at = 'infinity' AND c.parents_left > 0
    RETURNING c.id, c.endpoint_id, c.queue, c.state, c.next_retry_at
    )
    SELECT * FROM counted;
END
$$;

-- Parents are done: count their children off (those they still count for).
CREATE OR REPLACE FUNCTION todo_parents_done(parents text[])
    RETURNS TABLE (id text, endpoint_id uuid, queue text, state text, next_retry_at timestamptz)
    LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    children text[];
BEGIN
    SELECT array_agg(d.child_id) INTO children
    FROM todo_dependencies d
    WHERE d.parent_id = ANY(parents) AND NOT d.settled;
    IF children IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM todo_count_off(children);
END
$$;

-- Parents died (a dead letter) or were canceled: each blocked child follows its rule. `cancel`:
-- the child is canceled, its result naming the parent, and its own `cancel` children follow, to
-- any depth; `run`: the parent stops counting (its row is settled) and the child is counted off.
-- A `run` child of a child canceled here is counted off too. Todos in `parents` are never
-- touched again (the statement that calls this has already written them).
CREATE OR REPLACE FUNCTION todo_parents_failed(parents text[])
    RETURNS TABLE (id text, endpoint_id uuid, queue text, state text, next_retry_at timestamptz)
    LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    canceled text[];
    children text[];
BEGIN
    IF NOT EXISTS (SELECT 1 FROM todo_dependencies d WHERE d.parent_id = ANY(parents) AND NOT d.settled) THEN
        RETURN;
    END IF;
    WITH RECURSIVE doomed(child_id, parent_id) AS (
        SELECT d.child_id, d.parent_id
        FROM todo_dependencies d JOIN todos c ON c.id = d.child_id
        WHERE d.parent_id = ANY(parents) AND NOT d.settled AND c.id <> ALL(parents)
          AND c.on_parent_failure = 'cancel' AND c.state = 'pending' AND c.next_retry_at = 'infinity'
        UNION
        SELECT d.child_id, d.parent_id
        FROM doomed x JOIN todo_dependencies d ON d.parent_id = x.child_id JOIN todos c ON c.id = d.child_id
        WHERE NOT d.settled AND c.id <> ALL(parents)
          AND c.on_parent_failure = 'cancel' AND c.state = 'pending' AND c.next_retry_at = 'infinity'
    ),
    reason AS (
        SELECT DISTINCT ON (x.child_id) x.child_id, x.parent_id FROM doomed x ORDER BY x.child_id, x.parent_id
    ),
    gone AS (
        UPDATE todos c
        SET state = 'canceled', next_retry_at = NULL, run_at_after_block = NULL, completed_at = now(),
            updated_at = now(), result = jsonb_build_object('error', 'parent_failed', 'parent', r.parent_id)
        FROM reason r
        WHERE c.id = r.child_id AND c.state = 'pending' AND c.next_retry_at = 'infinity'
        RETURNING c.id
    )
    SELECT coalesce(array_agg(g.id), '{}') INTO canceled FROM gone g;

    WITH s AS (
        UPDATE todo_dependencies d SET settled = true
        FROM todos c
        WHERE (d.parent_id = ANY(parents) OR d.parent_id = ANY(canceled)) AND NOT d.settled
          AND c.id = d.child_id AND c.on_parent_failure = 'run' AND c.id <> ALL(parents)
        RETURNING d.child_id
    )
    SELECT array_agg(s.child_id) INTO children FROM s;

    RETURN QUERY SELECT t.id, t.endpoint_id, t.queue, t.state, t.next_retry_at FROM todos t WHERE t.id = ANY(canceled);
    IF children IS NOT NULL THEN
        RETURN QUERY SELECT * FROM todo_count_off(children);
    END IF;
END
$$;
