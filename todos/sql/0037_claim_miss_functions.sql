-- What an endpoint's claim that took nothing says (docs/api.md, `paused`; docs/lifecycle.md,
-- "Rate limits"), read by two functions the claim calls only on a miss.
--
-- `endpoint_claims_paused`: who paused the endpoint's claims and when (`{by, at}`), NULL unless
-- they are paused. `endpoint_rate_refill_in`: in how many seconds the soonest rate key with
-- pending work of the endpoint gets an allowance back (NULL: no limited key holds its work; 0 or
-- less: the statement's snapshot shows the key with room, so the claim lost the allowance or the
-- rows to a concurrent one).
--
-- Written as subqueries of the claim, both were set up by PostgreSQL's executor at the start of
-- every claim, the ones that took a todo included (their relations locked and opened, their nodes
-- built). As functions, the claim's plan holds two calls that a hit never makes. They are STABLE:
-- each reads with the claim's own snapshot, so what they say agrees with what the claim saw
-- (`endpoint_rate_refill_in` reads `clock_timestamp()`, as the subquery did: the label is for the
-- snapshot, and nothing caches its answer).
-- Each reads through a FROM clause, so PostgreSQL never inlines it back into the claim.

CREATE OR REPLACE FUNCTION endpoint_claims_paused(endpoint uuid) RETURNS json
    LANGUAGE sql STABLE AS $$
SELECT json_build_object('by', coalesce(pe.claims_paused_by, 'a team admin'), 'at', pe.claims_paused_at)
FROM endpoints pe
WHERE pe.id = endpoint AND pe.claims_paused_at IS NOT NULL
$$;

CREATE OR REPLACE FUNCTION endpoint_rate_refill_in(endpoint uuid, team uuid) RETURNS float8
    LANGUAGE sql STABLE AS $$
SELECT extract(epoch FROM min(coalesce(rl.refills_at, clock_timestamp())) - clock_timestamp())::float8
FROM rate_limits rl
WHERE rl.team_id = team
  AND EXISTS (SELECT 1 FROM todos rt
              WHERE rt.rate_key = rl.key AND rt.state = 'pending' AND rt.endpoint_id = endpoint)
$$;
