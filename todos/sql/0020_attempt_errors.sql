-- Why an attempt failed: the error object its holder reported with fail or complete
-- (docs/lifecycle.md, "Attempt errors"). NULL: no error reported (or an attempt that ended any
-- other way). Written by the statement that closes the attempt, in the same statement; never
-- changed afterwards, and kept as long as the attempt row is (same retention).
--
-- The store cuts every field before it writes (type 200 bytes, message 4 KB, traceback the last
-- 64 KB, each on a character boundary) and says so in `truncated`; the domain's rule is the
-- backstop: an object of at least one of the three texts (an absent or empty one is left out)
-- and `truncated`, each text within its limit. Large values are TOASTed (compressed, out of
-- line), so the attempt row itself stays small.
--
-- Two steps, so the table is not rewritten: a column whose type is a domain WITH a rule makes
-- ADD COLUMN rewrite the table (PostgreSQL checks the rule against each row's NULL), so the column
-- is added with the domain still rule-free (a catalog change only), and the rule is added to the
-- domain afterwards, which reads the rows to validate them (all NULL) and writes nothing.

CREATE DOMAIN attempt_error AS jsonb;

ALTER TABLE todo_attempts ADD COLUMN IF NOT EXISTS error attempt_error;

ALTER DOMAIN attempt_error ADD CONSTRAINT attempt_error_shape CHECK (
    CASE WHEN VALUE IS NULL THEN true
         WHEN jsonb_typeof(VALUE) = 'object' THEN
        VALUE - ARRAY['type', 'message', 'traceback', 'truncated'] = '{}'::jsonb
        AND VALUE ?| ARRAY['type', 'message', 'traceback']
        AND coalesce(jsonb_typeof(VALUE -> 'truncated') = 'boolean', false)
        AND coalesce(jsonb_typeof(VALUE -> 'type'), 'string') = 'string'
        AND coalesce(jsonb_typeof(VALUE -> 'message'), 'string') = 'string'
        AND coalesce(jsonb_typeof(VALUE -> 'traceback'), 'string') = 'string'
        AND coalesce(octet_length(VALUE ->> 'type'), 0) <= 200
        AND coalesce(octet_length(VALUE ->> 'message'), 0) <= 4096
        AND coalesce(octet_length(VALUE ->> 'traceback'), 0) <= 65536
    ELSE false END
);
