-- store.agent.claim_batch.capabilities
-- built by todos.core.store.agent.claim_batch()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset(), capabilities=())
--   max = 10
--   capabilities = ['gpu']
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH
queue_order AS (
    SELECT q.name, head.priority, head.created_at
    FROM (SELECT DISTINCT name FROM unnest(%(queues)s::text[]) AS u(name)) q
    CROSS JOIN LATERAL (
        SELECT t.priority, t.created_at FROM todos t
        WHERE t.endpoint_id = %(endpoint_id)s AND t.queue = q.name AND t.state = 'pending' AND t.next_retry_at IS NULL
          AND (t.assignee IS NULL OR t.assignee = %(owner)s)
          AND t.requires <@ %(capabilities)s::text[]
        ORDER BY t.priority, t.created_at
        LIMIT 1
    ) head
    WHERE NOT EXISTS (
        SELECT 1 FROM queue_pauses qp WHERE qp.team_id = %(team_id)s AND qp.queue = q.name)
),
fresh AS (
    SELECT f.id, f.state, f.next_retry_at, f.claimed_at, f.concurrency_key, f.rate_key, f.priority, f.created_at
    FROM (SELECT name FROM queue_order ORDER BY priority, created_at) q
    CROSS JOIN LATERAL (
    SELECT t.id, t.state, t.next_retry_at, t.claimed_at, t.concurrency_key, t.rate_key,
           t.priority, t.created_at
    FROM todos t
    WHERE t.endpoint_id = %(endpoint_id)s AND t.queue = q.name AND t.state = 'pending' AND t.next_retry_at IS NULL
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND t.requires <@ %(capabilities)s::text[]
      AND (t.concurrency_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM concurrency_keys ck
        WHERE ck.team_id = %(team_id)s AND ck.key = t.concurrency_key AND ck.claimed >= ck.max_claimed))
      AND (t.rate_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM rate_limits rl
        WHERE rl.team_id = %(team_id)s AND rl.key = t.rate_key AND rl.refills_at > now()))
    ORDER BY t.priority, t.created_at
    LIMIT 10
    FOR UPDATE SKIP LOCKED
    ) f
    LIMIT 10
),
lapsed AS (
    -- a lapsed lease under the attempt cap: a plain walk of ``todos_claimed`` (a bitmap scan of
    -- it could not mark the entries of finished todos dead, and revisited them all on every claim)
    SELECT t.id, t.state, t.next_retry_at, t.claimed_at, t.concurrency_key, t.rate_key,
           t.priority, t.created_at FROM todos t
    WHERE t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND t.state = 'claimed' AND t.lease_expires_at < now() AND t.attempt < t.max_attempts
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND t.requires <@ %(capabilities)s::text[]
      AND (t.rate_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM rate_limits rl
        WHERE rl.team_id = %(team_id)s AND rl.key = t.rate_key AND rl.refills_at > now()))
      AND NOT EXISTS (
        SELECT 1 FROM queue_pauses qp WHERE qp.team_id = %(team_id)s AND qp.queue = t.queue)
    ORDER BY t.priority, t.created_at
    LIMIT 10
    FOR UPDATE SKIP LOCKED
),
due AS (
    -- a due retry or a scheduled todo whose time has come (``todos_retry_due``)
    SELECT t.id, t.state, t.next_retry_at, t.claimed_at, t.concurrency_key, t.rate_key,
           t.priority, t.created_at FROM todos t
    WHERE t.next_retry_at <= now() AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND (t.state = 'pending' OR (t.state = 'failed' AND t.attempt < t.max_attempts))
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND t.requires <@ %(capabilities)s::text[]
      AND (t.concurrency_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM concurrency_keys ck
        WHERE ck.team_id = %(team_id)s AND ck.key = t.concurrency_key AND ck.claimed >= ck.max_claimed))
      AND (t.rate_key IS NULL OR NOT EXISTS (
        SELECT 1 FROM rate_limits rl
        WHERE rl.team_id = %(team_id)s AND rl.key = t.rate_key AND rl.refills_at > now()))
      AND NOT EXISTS (
        SELECT 1 FROM queue_pauses qp WHERE qp.team_id = %(team_id)s AND qp.queue = t.queue)
    ORDER BY t.priority, t.created_at
    LIMIT 10
    FOR UPDATE SKIP LOCKED
),
cand AS (
    SELECT id, state AS prior_state, next_retry_at AS prior_not_before, claimed_at AS prior_claimed_at,
           concurrency_key, rate_key, row_number() OVER (ORDER BY priority, created_at, id)::int AS ord,
           %(team_id)s::uuid AS team_id
    FROM (SELECT * FROM fresh UNION ALL SELECT * FROM lapsed UNION ALL SELECT * FROM due) c
    -- the endpoint's claims are not paused: read once, before any of the scans locks a row
    WHERE NOT EXISTS (
        SELECT 1 FROM endpoints pe WHERE pe.id = %(endpoint_id)s AND pe.claims_paused_at IS NOT NULL)
    ORDER BY priority, created_at, id
    LIMIT 10
),
taken AS MATERIALIZED (
    -- the candidates this claim takes: unkeyed ones, takeovers (the lapsed holder's slot passes
    -- to them), and keyed ones whose key gave a slot (take_concurrency_slot, 0017: it waits for
    -- the key's row and re-checks the limit on its newest version). Keys are tried in (team, key)
    -- order, so two claims never wait on each other's key rows in opposite orders (a batch
    -- completion giving slots back can: todos.core.db.execute runs a deadlock's victim again);
    -- MATERIALIZED, so each candidate asks once. A rate-keyed candidate (a takeover too: it runs
    -- the work again) first takes an allowance of its key (take_rate_allowance, 0025), in the
    -- CASE so that one without an allowance never takes a concurrency slot it would not use.
    SELECT c.id, c.prior_state, c.prior_claimed_at, c.ord, c.team_id,
           CASE WHEN c.prior_state = 'failed' THEN 'retry'
                WHEN c.prior_state = 'pending' AND c.prior_not_before IS NOT NULL
                THEN 'scheduled'
                ELSE c.prior_state END AS prior_board_state
    FROM (SELECT * FROM cand ORDER BY team_id, rate_key, concurrency_key, ord) c
    WHERE CASE WHEN c.rate_key IS NOT NULL AND NOT take_rate_allowance(c.team_id, c.rate_key) THEN false
               ELSE c.concurrency_key IS NULL OR c.prior_state = 'claimed'
                    OR take_concurrency_slot(c.team_id, c.concurrency_key) END
),
closed AS (
    -- takeover of a lapsed lease: the dead holder's attempt ends lease_expired / requeued
    UPDATE todo_attempts a
    SET ended_at = now(), outcome = 'lease_expired', disposition = 'requeued'
    FROM taken c
    WHERE a.todo_id = c.id AND c.prior_state = 'claimed' AND a.ended_at IS NULL
    RETURNING a.*
),
upd AS (
    UPDATE todos t SET
        state = 'claimed',
        owner = %(owner)s,
        lease_expires_at = now() + make_interval(secs => %(ttl)s),
        attempt = t.attempt + 1,
        attempts_total = t.attempts_total + 1,
        -- the attempt cap: keep the newest %(cap)s attempts, deleting the older ended ones
        -- (todo_prune_attempts, 0039: called only past the cap)
        attempts_pruned = t.attempts_pruned + CASE
            WHEN t.attempts_total + 1 > %(cap)s THEN todo_prune_attempts(t.id, t.attempts_total + 1 - %(cap)s)
            ELSE 0 END,
        claimed_at = now(),
        next_retry_at = NULL,
        updated_at = now()
    FROM taken c
    WHERE t.id = c.id
    RETURNING t.*, c.prior_state, c.prior_board_state, c.prior_claimed_at, c.ord, c.team_id AS claim_team
),
logged AS (
    -- a claimable failed todo is a due retry ('retry'); a pending one with a time, 'scheduled'
    INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT r.claim_team, r.endpoint_id, r.id, r.queue, 'claim',
           r.prior_board_state,
           'claimed',
           NULL,
           CASE WHEN r.attempts_total = 1 THEN extract(epoch FROM now() - r.created_at)::double precision END,
           CASE WHEN r.prior_state = 'claimed'
                THEN extract(epoch FROM now() - r.prior_claimed_at)::double precision END
    FROM upd r
),
opened AS (
    -- the new attempt: seq = attempts_total after the increment (no sequence, no max(seq) scan)
    INSERT INTO todo_attempts (todo_id, seq, attempt, claimer_kind, claimer_endpoint_id,
                               claimer_session, owner, claimant, claimed_at, lease_expires_at,
                               lease_token_hash)
    SELECT u.id, u.attempts_total, u.attempt, %(claimer_kind)s, %(claimer_endpoint_id)s,
           %(session)s, u.owner, %(claimant)s, now(), u.lease_expires_at,
           (%(token_hashes)s::bytea[])[u.ord]
    FROM upd u
    RETURNING todo_id
),
result AS (
    SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key,
           assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total,
           attempts_pruned, nullif(next_retry_at, 'infinity') AS next_retry_at, result, created_at,
           updated_at, claimed_at, completed_at, concurrency_key, requires, parents_left,
           on_parent_failure, timeout_seconds, rate_key,
           (state = 'pending' AND next_retry_at IS NOT DISTINCT FROM 'infinity') AS blocked,
           traceparent,
           u.prior_state, u.ord, '[]'::json AS prior_attempts,
           -- the attempt's run-time limit: the todo's own, else its team's default for its queue
           -- (docs/lifecycle.md, "Run-time limits"); one primary-key probe per claimed todo
           coalesce(u.timeout_seconds, (SELECT qs.timeout_seconds FROM queue_settings qs
                                        WHERE qs.team_id = u.claim_team AND qs.queue = u.queue)) AS run_time_limit,
           (SELECT count(*) FROM opened) AS opened
    FROM upd u
)
SELECT r.*,
       CASE WHEN r.id IS NULL THEN endpoint_claims_paused(%(endpoint_id)s) END AS paused,
       CASE WHEN r.id IS NULL THEN endpoint_rate_refill_in(%(endpoint_id)s, %(team_id)s) END AS refill_in
FROM (SELECT 1) one LEFT JOIN result r ON true
ORDER BY r.ord
