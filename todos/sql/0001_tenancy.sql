-- Tenancy: teams of humans own endpoints (agent credentials); humans are Django's auth_user rows.

CREATE TABLE teams (
    id          uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    slug        text        NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE team_members (
    team_id     uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id     integer     NOT NULL REFERENCES auth_user(id) ON DELETE CASCADE,
    role        text        NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);
-- operatorOwns(human) starts from the human: "which teams am I in?"
CREATE INDEX team_members_user ON team_members (user_id, team_id);

CREATE TABLE endpoints (
    id                         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    team_id                    uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    slug                       text        NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
    name                       text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    credential_hash            bytea       NOT NULL UNIQUE CHECK (octet_length(credential_hash) = 32),
    credential_prefix          text        NOT NULL,
    scope_verbs                text[]      NOT NULL DEFAULT '{}',
    scope_queues               text[]      NOT NULL DEFAULT '{}',
    default_lease_ttl_seconds  integer     CHECK (default_lease_ttl_seconds BETWEEN 60 AND 86400),
    state                      text        NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'revoked')),
    created_at                 timestamptz NOT NULL DEFAULT now(),
    created_by                 integer     REFERENCES auth_user(id) ON DELETE SET NULL,
    revoked_at                 timestamptz,
    expires_at                 timestamptz,
    last_seen_at               timestamptz,
    CHECK ((state = 'revoked') = (revoked_at IS NOT NULL))
);
CREATE INDEX endpoints_team ON endpoints (team_id);
-- The expiry sweep looks for active endpoints whose lifetime has ended.
CREATE INDEX endpoints_expiring ON endpoints (expires_at) WHERE state = 'active' AND expires_at IS NOT NULL;

-- A paused queue is skipped by agents' claims (per team; the queue itself is free text).
CREATE TABLE queue_pauses (
    team_id    uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    queue      text        NOT NULL,
    paused_by  integer     REFERENCES auth_user(id) ON DELETE SET NULL,
    paused_at  timestamptz NOT NULL DEFAULT now(),
    note       text        CHECK (char_length(note) <= 500),
    PRIMARY KEY (team_id, queue)
);
