-- The audit trail of human actions: on todos, endpoints, queues and team members.
-- Written by the store in the same statement as the change it records.

CREATE TABLE audit_log (
    id          bigserial   PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    team_id     uuid        NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
    user_id     integer     REFERENCES auth_user(id) ON DELETE SET NULL,
    actor       text        NOT NULL,           -- username at the time, kept if the user is deleted
    action      text        NOT NULL CHECK (action ~ '^[a-z_.]{1,64}$'),
    todo_id     text,                           -- no FK: the trail outlives retention
    endpoint_id uuid,
    queue       text,
    note        text        CHECK (char_length(note) <= 2000),
    detail      jsonb
);
CREATE INDEX audit_log_team_at ON audit_log (team_id, at DESC, id DESC);
CREATE INDEX audit_log_todo ON audit_log (todo_id, at DESC) WHERE todo_id IS NOT NULL;
