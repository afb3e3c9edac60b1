-- The kind filter, alone or under a search: each endpoint's todos of one kind, newest first.
--
-- A search under row filters chooses its window of keys (the newest rows of the filter) before it
-- reads any row; with the kind only in the table, each endpoint's branch read every row of the
-- created range to test the kind and priority (5,005 rows per endpoint, 40,335 buffers for one
-- team at 5M todos). Here the window is an index-only walk: the kind in the key, the priority in
-- the payload for a priority range, the state and retry time for the tabs' counts.
--
-- Partial: a todo without a kind is never found by a kind (`kind = …` implies `kind IS NOT NULL`),
-- so it never enters the index, and its claim and completion write no entry here (each is a
-- non-HOT update: every index the row is in gains one).
CREATE INDEX IF NOT EXISTS todos_endpoint_kind ON todos (endpoint_id, kind, created_at, id)
    INCLUDE (priority, state, next_retry_at) WHERE kind IS NOT NULL;
