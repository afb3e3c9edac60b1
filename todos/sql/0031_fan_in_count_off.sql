-- Counting children off in bulk (docs/lifecycle.md, "Dependencies"): the same rule as 0024's
-- `todo_count_off`, cheaper when one parent unblocks thousands of children.
--
-- An unblocked child's new row version cannot be a HOT update (its `next_retry_at` leaves
-- infinity, and `todos_pending` must gain it), so it enters every index whose predicate it meets:
-- the key, the three `todos_endpoint_*` listing indexes and `todos_pending`. Measured on 10,000
-- children, those index insertions are most of the statement. What this changes:
--
-- * Order. The children are written in the order their ids arrive (the dependency rows' order,
--   which is their creation order: their heap order, and the listing indexes' order within a
--   batch), not in a hash table's order; consecutive insertions then land on the same index
--   and heap pages.
-- * `created_at = c.created_at`. A SET list that leaves an index's key columns out tells the
--   btree the new entry is a duplicate of a version about to die, and a full leaf page is first
--   searched for dead versions to delete (bottom-up deletion), visiting heap pages. Here it never
--   finds any: the old versions die only when this transaction commits. Naming `created_at`
--   (every listing index's key column; its value unchanged) skips that search for them.
-- * No grouping when each child is named once, as when one parent is done (a dependency row is
--   one per child and parent): the ids are written as they come, without a hash table and a sort
--   to restore their order.
--
-- Adds `todo_count_off(children, each_once)`; 0024's one-argument form (the failure path's) and
-- `todo_parents_done` call it. Functions only: no lock beyond their catalog rows, nothing to
-- rewrite.

-- `each_once`: no id occurs twice in `children`. Of the two branches of `k`, the one the flag
-- rules out is never run (a one-time filter on the parameter).
CREATE OR REPLACE FUNCTION todo_count_off(children text[], each_once boolean)
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
        created_at = c.created_at,
        updated_at = now()
    FROM (SELECT u.child_id, 1 AS n, u.at
          FROM unnest(children) WITH ORDINALITY AS u(child_id, at)
          WHERE each_once
          UNION ALL
          (SELECT u.child_id, count(*)::integer AS n, min(u.at) AS at
           FROM unnest(children) WITH ORDINALITY AS u(child_id, at)
           WHERE NOT each_once
           GROUP BY 1 ORDER BY 3)) k
    WHERE c.id = k.child_id
      AND c.state = 'pending' AND c.next_retry_at = 'infinity' AND c.parents_left > 0
    RETURNING c.id, c.endpoint_id, c.queue, c.state, c.next_retry_at
    )
    SELECT * FROM counted;
END
$$;

-- 0024's form: a child may be named once per parent that settled.
CREATE OR REPLACE FUNCTION todo_count_off(children text[])
    RETURNS TABLE (id text, endpoint_id uuid, queue text, state text, next_retry_at timestamptz)
    LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT * FROM todo_count_off(children, false);
END
$$;

-- Parents are done: count their children off (those they still count for). One parent names each
-- child once.
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
    RETURN QUERY SELECT * FROM todo_count_off(children, cardinality(parents) = 1);
END
$$;
