-- MCP sessions (todos/core/store/mcp_sessions.py): the handshake's outcome, so that any Board process can
-- serve a session another process opened. Behind a round-robin balancer the requests of one
-- session land on every process; each process that meets a session id it does not hold reads
-- this row and re-creates the session (initialized, bound to the same endpoint and token).
-- A row is written at `initialize`, before its answer leaves the server; it is deleted by the
-- client's DELETE, and by the expiry sweep once no process has seen the session for the idle
-- timeout (last_seen_at is stamped at most once a minute by requests, and by the process that
-- holds the session's notification stream while it is open).
CREATE TABLE mcp_sessions (
    id               text        PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
    endpoint_id      uuid        NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
    -- SHA-256 of the token that opened the session: a rotated token does not inherit it.
    token_digest     bytea       NOT NULL CHECK (octet_length(token_digest) = 32),
    protocol_version text        NOT NULL CHECK (char_length(protocol_version) BETWEEN 1 AND 32),
    -- The client's `initialize` params (clientInfo, capabilities), restored with the session.
    client_params    jsonb       NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    last_seen_at     timestamptz NOT NULL DEFAULT now()
);
-- The expiry sweep.
CREATE INDEX mcp_sessions_last_seen ON mcp_sessions (last_seen_at);
CREATE INDEX mcp_sessions_endpoint ON mcp_sessions (endpoint_id);
