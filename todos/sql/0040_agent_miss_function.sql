-- Why an agent's transition on one todo changed nothing (docs/api.md, "Errors"), as a function
-- the statement calls only then: `not_found` (no such todo of the endpoint), `forbidden` (its
-- queue is outside the credential's queues) or `conflict` (the todo is not in a state, or not
-- held by this agent, for the transition).
--
-- Written as a part of each statement (a CTE reading the todo, and two subqueries over it), the
-- classification was set up by PostgreSQL's executor at the start of every complete, fail,
-- heartbeat and release, and planned with them, though a transition that changes its todo never
-- reads it. STABLE: it reads with the calling statement's snapshot, as the CTE did, so the
-- classification is of the same todo the statement missed. It reads through a FROM clause, so
-- PostgreSQL never inlines it back into the statement (as 0037's functions).

CREATE OR REPLACE FUNCTION agent_todo_miss(todo text, endpoint uuid, queues text[]) RETURNS text
    LANGUAGE sql STABLE AS $$
SELECT CASE WHEN t.id IS NULL THEN 'not_found'
            WHEN NOT t.queue = ANY(queues) THEN 'forbidden'
            ELSE 'conflict' END
FROM (SELECT 1) one LEFT JOIN todos t ON t.id = todo AND t.endpoint_id = endpoint
$$;
