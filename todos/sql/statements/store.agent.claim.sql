-- store.agent.claim
-- built by todos.store.agent.claim()
-- with:
--   agent = AgentScope(endpoint_id=UUID('00000000-0000-4000-8000-00000000e001'),
--       team_id=UUID('00000000-0000-4000-8000-00000000a001'), queues=('default', 'other'),
--       default_lease_ttl_seconds=None, session=None, verbs=frozenset())
--   todo_id = 'td_00000000000000000000000000000001'
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH
target AS (SELECT t.id, t.queue FROM todos t WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s),
cand AS (
    SELECT t.id, t.state AS prior_state, 1 AS ord FROM todos t
    WHERE t.id = %(id)s AND t.endpoint_id = %(endpoint_id)s AND t.queue = ANY(%(queues)s::text[])
      AND (
        t.state = 'pending'
     OR (t.state = 'claimed' AND t.lease_expires_at < now() AND t.attempt < t.max_attempts)
     OR (t.state = 'failed' AND t.next_retry_at <= now() AND t.attempt < t.max_attempts))
      AND (t.assignee IS NULL OR t.assignee = %(owner)s)
      AND NOT EXISTS (
        SELECT 1 FROM queue_pauses qp JOIN endpoints pe ON pe.team_id = qp.team_id
        WHERE pe.id = t.endpoint_id AND qp.queue = t.queue)
    FOR UPDATE
),
closed AS (
    -- takeover of a lapsed lease: the dead holder's attempt ends lease_expired / requeued
    UPDATE todo_attempts a
    SET ended_at = now(), outcome = 'lease_expired', disposition = 'requeued'
    FROM cand c
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
        attempts_pruned = t.attempts_pruned + CASE
            WHEN t.attempts_total + 1 > %(cap)s THEN (
                SELECT count(*) FROM todo_attempts pa
                WHERE pa.todo_id = t.id AND pa.ended_at IS NOT NULL
                  AND pa.seq <= t.attempts_total + 1 - %(cap)s)
            ELSE 0 END,
        claimed_at = now(),
        next_retry_at = NULL,
        updated_at = now()
    FROM cand c
    WHERE t.id = c.id
    RETURNING t.*, c.prior_state, c.ord
),
pruned AS (
    -- the attempt cap: keep the newest %(cap)s attempts (the same predicate as the count above)
    DELETE FROM todo_attempts a USING upd u
    WHERE a.todo_id = u.id AND u.attempts_total > %(cap)s
      AND a.ended_at IS NOT NULL AND a.seq <= u.attempts_total - %(cap)s
),
logged AS (
    -- a claimable failed todo is a due retry: its Board state was 'retry'
    INSERT INTO change_log (team_id, endpoint_id, todo_id, queue, op, state_before, state_after, user_id,
                        waited, ran)
    SELECT le.team_id, r.endpoint_id, r.id, r.queue, 'claim', CASE r.prior_state WHEN 'failed' THEN 'retry' ELSE r.prior_state END, 'claimed', NULL, CASE WHEN r.attempts_total = 1 THEN extract(epoch FROM now() - r.created_at)::double precision END, CASE WHEN r.prior_state = 'claimed' THEN (
        SELECT extract(epoch FROM now() - ra.claimed_at)::double precision FROM todo_attempts ra
        WHERE ra.todo_id = r.id AND ra.ended_at IS NULL) END
    FROM upd r JOIN endpoints le ON le.id = r.endpoint_id
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
    SELECT id, endpoint_id, queue, source, kind, title, payload, idempotency_key, assignee, priority, state, owner, lease_expires_at, attempt, max_attempts, attempts_total, attempts_pruned, next_retry_at, result, created_at, updated_at, claimed_at, completed_at, u.prior_state, u.ord, (SELECT coalesce(json_agg(p ORDER BY p.seq DESC), '[]'::json) FROM (
                SELECT seq, attempt, claimer_kind, claimant, owner, claimed_at, last_heartbeat_at, lease_expires_at, ended_at, outcome, disposition, summary, summary_truncated, artifact FROM (
                    SELECT * FROM closed c WHERE c.todo_id = u.id
                    UNION ALL
                    SELECT * FROM todo_attempts pa WHERE pa.todo_id = u.id AND pa.ended_at IS NOT NULL
                ) x
                -- the statement's snapshot still holds the attempts ``pruned`` deletes: leave them out
                WHERE x.seq > u.attempts_total - %(cap)s
                ORDER BY seq DESC LIMIT 5) p) AS prior_attempts,
           (SELECT count(*) FROM opened) AS opened
    FROM upd u
)
SELECT r.*, CASE
        WHEN r.id IS NOT NULL THEN NULL
        WHEN NOT EXISTS (SELECT 1 FROM target) THEN 'not_found'
        WHEN NOT (SELECT queue FROM target) = ANY(%(queues)s::text[]) THEN 'forbidden'
        ELSE 'conflict' END AS miss FROM (SELECT 1) one LEFT JOIN result r ON true
