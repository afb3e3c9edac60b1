-- Counting children off in bulk (docs/lifecycle.md, "Dependencies"): the same rule as 0024's
-- `todo_count_off`, cheaper when one parent unblocks thousands of children.
--
-- An unblocked child's new row version cannot be a HOT update (its `next_retry_at` leaves
-- infinity, and `todos_pending` must gain it), so it enters every index whose predicate it meets:
-- the key, the three `todos_endpoint_*` listing indexes and `todos_pending`. Measured on 10,000
-- children, those index insertions are most of the statement. Two things make them cheaper:
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
--
-- Replaces a function only: no lock beyond the catalog row, nothing to rewrite.
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
        created_at = c.created_at,
        updated_at = now()
    FROM (SELECT u.child_id, count(*)::integer AS n, min(u.at) AS at
          FROM unnest(children) WITH ORDINALITY AS u(child_id, at)
          GROUP BY 1 ORDER BY 3) k
    WHERE c.id = k.child_id
      AND c.state = 'pending' AND c.next_retry_at = 'infinity' AND c.parents_left > 0
    RETURNING c.id, c.endpoint_id, c.queue, c.state, c.next_retry_at
    )
    SELECT * FROM counted;
END
$$;
