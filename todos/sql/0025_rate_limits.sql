-- Rate limits per key: at most N claims of a team's todos carrying one rate key in any window of
-- a second, a minute or an hour (docs/lifecycle.md, "Rate limits").
--
-- A key's row keeps the times of its last N claims as a ring: ``taken`` (N entries, NULL until
-- used) and ``next``, the entry the next claim overwrites, which is the oldest. A claim may take
-- the key when that entry is NULL or older than the interval; it then writes its own time there and
-- advances ``next``. So of any N + 1 claims, the last came at least one interval after the first:
-- no window of the interval's length ever holds more than N (a fixed-window counter lets 2N through
-- across a boundary; a bucket of capacity N does too). ``refills_at`` is when the entry ``next``
-- points at leaves the window (NULL: it is free now): the key is *throttled* while it is in the
-- future. It is kept by every write, so the claims' scans and the Board read one column.
--
-- A key with no row is unlimited. New column without a default and new objects only: no table
-- is rewritten; the index is built with a short lock on ``todos`` (docs/deployment.md, "Upgrading").

CREATE DOMAIN rate_key AS text CONSTRAINT rate_key_length CHECK (char_length(VALUE) BETWEEN 1 AND 200);
CREATE DOMAIN rate_interval AS text CONSTRAINT rate_interval_known CHECK (VALUE IN ('second', 'minute', 'hour'));

ALTER TABLE todos ADD COLUMN IF NOT EXISTS rate_key rate_key;
CREATE INDEX IF NOT EXISTS todos_rate_key ON todos (rate_key, state) WHERE rate_key IS NOT NULL;

CREATE TABLE IF NOT EXISTS rate_limits (
    team_id      uuid          NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    key          rate_key      NOT NULL,
    allowance    integer       NOT NULL CHECK (allowance BETWEEN 1 AND 10000),
    per          rate_interval NOT NULL,
    taken        timestamptz[] NOT NULL,
    next         integer       NOT NULL DEFAULT 1,
    refills_at   timestamptz,
    updated_at   timestamptz   NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, key),
    CONSTRAINT rate_limits_ring CHECK (cardinality(taken) = allowance AND next BETWEEN 1 AND allowance)
);

-- The length of an interval word.
CREATE FUNCTION rate_period(per text) RETURNS interval LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ('1 ' || per)::interval
$$;

-- A ring resized to ``size`` entries, oldest first (so its ``next`` is 1): the newest entries are
-- kept, and a grown ring gets free (NULL) entries, which the next claims take first.
CREATE FUNCTION rate_ring_resized(taken timestamptz[], next integer, size integer) RETURNS timestamptz[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_fill(NULL::timestamptz, ARRAY[greatest(size - cardinality(o.ring), 0)])
           || o.ring[greatest(cardinality(o.ring) - size, 0) + 1:]
    FROM (SELECT coalesce(taken[next:], '{}') || coalesce(taken[:next - 1], '{}') AS ring) o
$$;

-- Taking one allowance of a key for a claim, beside take_concurrency_slot (0017): the claim calls
-- it for each keyed candidate it is about to take, and takes the candidate only when it returns
-- true. The key's row is locked first (FOR UPDATE waits for a concurrent claim's lock and reads
-- the newest version), and the clock is read only after: the ring's entries are written in lock
-- order, so each claim sees its predecessors' times.
CREATE FUNCTION take_rate_allowance(rate_team uuid, rate_name text) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    ring rate_limits%ROWTYPE;
    stamp timestamptz;
    following integer;
BEGIN
    SELECT * INTO ring FROM rate_limits r WHERE r.team_id = rate_team AND r.key = rate_name FOR UPDATE;
    IF NOT FOUND THEN
        RETURN true;  -- no limit set: unlimited
    END IF;
    stamp := clock_timestamp();
    IF ring.taken[ring.next] > stamp - rate_period(ring.per) THEN
        RETURN false;  -- N claims within the last interval already
    END IF;
    ring.taken[ring.next] := stamp;
    following := ring.next % ring.allowance + 1;
    UPDATE rate_limits r
    SET taken[ring.next] = stamp, next = following,
        refills_at = ring.taken[following] + rate_period(ring.per)
    WHERE r.team_id = rate_team AND r.key = rate_name;
    RETURN true;
END
$$;
