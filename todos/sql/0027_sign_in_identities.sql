-- Single sign-on (docs/sign-in.md): who a provider's subject is, which provider groups grant
-- which team roles, and which memberships those groups own.
--
-- ``person_identities`` ties a provider's subject to a person, so a person whose email changed at
-- the provider still signs in as themselves. ``oidc_role_mappings`` is edited by site admins.
-- ``oidc_memberships`` marks the memberships a sign-in granted from the mappings: only those are
-- changed or removed when the provider's groups change; a membership granted by hand has no row
-- here and is left alone. Its foreign key to team_members drops the mark with the membership.
-- New, empty tables: nothing is locked but themselves.

CREATE TABLE IF NOT EXISTS person_identities (
    user_id     integer     NOT NULL REFERENCES auth_user(id) ON DELETE CASCADE,
    issuer      text        NOT NULL CHECK (char_length(issuer) BETWEEN 1 AND 500),
    subject     text        NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 255),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX IF NOT EXISTS person_identities_user ON person_identities (user_id);

CREATE TABLE IF NOT EXISTS oidc_role_mappings (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    group_value  text        NOT NULL CHECK (char_length(group_value) BETWEEN 1 AND 255),
    team_id      uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    role         text        NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT oidc_role_mappings_group_team UNIQUE (group_value, team_id)
);

CREATE TABLE IF NOT EXISTS oidc_memberships (
    team_id  uuid    NOT NULL,
    user_id  integer NOT NULL,
    PRIMARY KEY (team_id, user_id),
    FOREIGN KEY (team_id, user_id) REFERENCES team_members (team_id, user_id) ON DELETE CASCADE
);
