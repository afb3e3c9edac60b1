-- Saved views: a person's named filter sets of the todo list (docs/board.md, "Saved views").
--
-- A view is the list's querystring, kept as the list itself wrote it; opening it is opening the
-- list at that URL, so a view never outlives the filters it names in a form the list cannot read.
-- ``slot`` (1 to 100) is what holds a person to at most 100 views even when two saves race: each
-- view takes a free slot, and two saves that pick the same one collide on the unique key instead
-- of both counting 99 views first. A new, empty table: nothing is locked but itself.

CREATE TABLE IF NOT EXISTS saved_views (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     integer     NOT NULL REFERENCES auth_user(id) ON DELETE CASCADE,
    slot        smallint    NOT NULL CHECK (slot BETWEEN 1 AND 100),
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
    query       text        NOT NULL CHECK (octet_length(query) <= 4096),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT saved_views_user_name UNIQUE (user_id, name),
    CONSTRAINT saved_views_user_slot UNIQUE (user_id, slot)
);
