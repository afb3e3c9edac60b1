-- What an attempt said, stored once as the search box's document: `todo_attempts.search_doc`.
--
-- The search matches a phrase against an attempt's summary and its error's type (as written, and
-- with its dots as spaces, so `DiskFull` finds `psycopg.errors.DiskFull`: the `simple` parser
-- keeps a dotted name as one word) and message. Parsed at query time, each attempt's error object
-- was decompressed, traceback and all, and four texts parsed per attempt read (~2,900 attempts for
-- 1,000 dead letters); stored, the test is one `@@` over a small column.
--
-- One document, the fields kept apart: `||` shifts its right vector's positions past the left's
-- last, so the fields' vectors are joined with a lexeme between them (`'|'`, at a position of its
-- own) that keeps the end of one field and the start of the next apart. `phraseto_tsquery` never
-- yields it (the parser drops punctuation), so it matches nothing itself.
--
-- NULL for an attempt with no text: a claim opens its attempt with none and an agent's plain
-- complete closes it with none, so the drain computes no vector (one CASE per row written). The
-- expression is built-in functions only: a SQL function in it would be re-parsed (for inlining)
-- each time a statement writing the table starts, the drain's claims and completes included.
--
-- A generated column is written by every statement that writes the row (fail, complete, a human's
-- report, a run-time limit's timeout error) and goes with the row (retention, the attempt cap).
-- Adding it rewrites the table once (an ACCESS EXCLUSIVE lock for the rewrite: minutes at 10M
-- attempts; see bench/README.md).

ALTER TABLE todo_attempts ADD COLUMN IF NOT EXISTS search_doc tsvector GENERATED ALWAYS AS (
    CASE WHEN error IS NULL AND nullif(summary, '') IS NULL THEN NULL
         ELSE to_tsvector('simple'::regconfig, coalesce(error ->> 'type', ''))
              || '|:1'::tsvector
              || to_tsvector('simple'::regconfig, replace(coalesce(error ->> 'type', ''), '.', ' '))
              || '|:1'::tsvector
              || to_tsvector('simple'::regconfig, coalesce(summary, ''))
              || '|:1'::tsvector
              || to_tsvector('simple'::regconfig, coalesce(error ->> 'message', '')) END
) STORED;
