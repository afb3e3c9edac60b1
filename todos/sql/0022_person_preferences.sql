-- A person's own settings for the Board: for now the zone every time is shown (and every time
-- input is read) in. One row per person, written only when they choose; a person without a row
-- gets BOARD_DEFAULT_TIME_ZONE (docs/board.md, "Times and zones").
--
-- time_zone is 'browser' (the zone their browser reports, sent with each request) or an IANA
-- name ('UTC', 'Europe/Paris'); the store checks the name against the IANA database first, the
-- CHECK only keeps the column sane. A new, empty table: no lock on anything that exists.

CREATE TABLE IF NOT EXISTS person_preferences (
    user_id    integer     PRIMARY KEY REFERENCES auth_user(id) ON DELETE CASCADE,
    time_zone  text        NOT NULL CHECK (length(time_zone) BETWEEN 1 AND 64),
    updated_at timestamptz NOT NULL DEFAULT now()
);
