-- What an attempt said, stored once as the search box's document: `todo_attempts.search_doc`.
--
-- The search matches a phrase against an attempt's summary and its error's type (as written, and
-- with its dots as spaces, so `DiskFull` finds `psycopg.errors.DiskFull`: the `simple` parser
-- keeps a dotted name as one word) and message. Parsed at query time, each attempt's error object
-- was decompressed, traceback and all, and four texts parsed per attempt read (~2,900 attempts for
-- 1,000 dead letters); stored, the test is one `@@` over a small column.
--
-- One document, the fields kept apart: `to_tsvector` over a JSON array leaves a position free
-- between two strings, so a phrase never matches the end of one field and the start of the next
-- (a `||` of the fields' vectors would let it). `jsonb_build_array` is STABLE in general (it takes
-- any type) and a generated column needs IMMUTABLE: over texts its result depends on nothing else,
-- hence the wrapper.
--
-- NULL for an attempt with no text: a claim opens its attempt with none and an agent's plain
-- complete closes it with none, so the drain computes no vector (one CASE per row written).
--
-- A generated column is written by every statement that writes the row (fail, complete, a human's
-- report, a run-time limit's timeout error) and goes with the row (retention, the attempt cap).
-- Adding it rewrites the table once (an ACCESS EXCLUSIVE lock for the rewrite: minutes at 10M
-- attempts; see bench/README.md).

CREATE OR REPLACE FUNCTION attempt_search_document(error_type text, message text, summary text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT to_tsvector('simple'::regconfig,
    jsonb_build_array(error_type, replace(error_type, '.', ' '), summary, message))
$$;

ALTER TABLE todo_attempts ADD COLUMN IF NOT EXISTS search_doc tsvector GENERATED ALWAYS AS (
    CASE WHEN error IS NULL AND nullif(summary, '') IS NULL THEN NULL
         ELSE attempt_search_document(error ->> 'type', error ->> 'message', summary) END
) STORED;
