-- Who ended an attempt when it was not its holder: a human's force release takes a
-- lease away, and the attempt it closes reads `released` like a holder's voluntary release; this
-- column says it was forced, and by whom. NULL: the attempt ended by its holder's own report, or
-- by the lease lapsing (reaper, takeover), as before. Set by the statement that closes the
-- attempt (todos/core/store/human.py, force_release), in the same statement; never changed
-- afterwards.
ALTER TABLE todo_attempts ADD COLUMN ended_by text
    CHECK (ended_by IS NULL OR ended_by ~ '^(human:[0-9]+|endpoint:[0-9a-f-]{36})$');
