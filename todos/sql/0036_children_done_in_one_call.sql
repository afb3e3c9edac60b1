-- The children of todos finished as done are settled by one function call, `todo_children_done`,
-- instead of three parts of every statement that completes a todo.
--
-- A statement that completes todos counts off their children (`todo_parents_done`, 0024), logs
-- the ones it unblocks as `requeue`s and wakes the queues they are claimable on. Written as
-- parts of the statement, those three were set up by PostgreSQL's executor at the start of every
-- complete (a materialized scan, an INSERT into the change log and an aggregate behind the
-- NOTIFY), though a todo with no child needs none of them: 15-20 % of a plain complete's backend
-- CPU. Here they are one function, which the statement calls once with the ids it completed; its
-- statements are planned once per connection and run only for parents that have a child waiting.
--
-- What it does is unchanged: it probes the dependency index with a snapshot newer than the
-- calling statement's (a child whose create waited for the parent's row lock is seen) and
-- returns unless a child waits; else `todo_parents_done` counts each child off once per parent,
-- and each one unblocked is logged (`blocked` -> `pending` or `scheduled`, with its team read
-- through its endpoint) and wakes agents waiting on its queue (one `board_ready` per endpoint and
-- queue, with how many). It returns how many queues it woke.

CREATE OR REPLACE FUNCTION todo_children_done(parents text[]) RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    requeue change_op := 'requeue';  -- checked against its domain once, not on every row logged
    woken integer;
BEGIN
    -- the common case: no child waits on these parents (the probe `todo_parents_failed` makes too)
    IF NOT EXISTS (SELECT 1 FROM todo_dependencies d WHERE d.parent_id = ANY(parents) AND NOT d.settled) THEN
        RETURN 0;
    END IF;
    WITH kids AS MATERIALIZED (
        SELECT k.* FROM todo_parents_done(parents) k
        WHERE k.next_retry_at IS DISTINCT FROM 'infinity'
    ),
    -- the change log's row and the wake-up are the ones the store's statements write
    -- (todos/core/store/fragments.py: log_todos, ready_message); a change to those changes these
    logged AS (
        INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after)
        SELECT le.team_id, k.endpoint_id, k.id, k.queue, requeue, 'blocked', todo_board_state(k.state, k.next_retry_at)
        FROM kids k JOIN endpoints le ON le.id = k.endpoint_id
        WHERE k.state = 'pending'
    )
    SELECT count(pg_notify('board_ready',
                 json_build_object('endpoint', w.endpoint_id, 'queue', w.queue, 'n', w.n)::text))
    INTO woken
    FROM (SELECT k.endpoint_id, k.queue, count(*) AS n FROM kids k
          WHERE k.state = 'pending' AND k.next_retry_at IS NULL
          GROUP BY 1, 2) w;
    RETURN woken;
END
$$;
