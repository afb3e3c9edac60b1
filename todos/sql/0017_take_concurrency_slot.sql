-- Taking a concurrency key's slot becomes a function beside the trigger that gives it
-- back (0011): the claim calls it for each keyed candidate it is about to take, in (team, key)
-- order, and takes the candidate only when it returns true.
--
-- The claim did the same upsert in a CTE of its own, with three more CTEs to pair keyed
-- candidates with the slots they got. Every claim paid to set those up (a second INSERT … ON
-- CONFLICT target, its indexes, two sorts and a hashed subplan) whether or not a key was in
-- sight: the drain of unkeyed work lost several per cent to them (bench/README.md).
-- A PL/pgSQL function keeps its plan for the session and runs only for keyed candidates.
--
-- The guard is the CTE's: the upsert waits for the key's row and re-checks `claimed <
-- max_claimed` on its newest version, so of concurrent claimers only as many as the limit allows
-- get a slot. A key nobody configured gets its row here, with the default limit of 1.
CREATE FUNCTION take_concurrency_slot(slot_team uuid, slot_key text) RETURNS boolean
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO concurrency_keys AS k (team_id, key, claimed) VALUES (slot_team, slot_key, 1)
    ON CONFLICT (team_id, key) DO UPDATE SET claimed = k.claimed + 1, updated_at = now()
    WHERE k.claimed < k.max_claimed;
    RETURN FOUND;
END
$$;
