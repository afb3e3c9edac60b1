-- A column's own rule lives in its type (a domain), not in a table CHECK.
--
-- PostgreSQL checks every CHECK constraint of a table on every row an INSERT or UPDATE writes,
-- whichever columns it changed, and it reads each one back from its stored text for every
-- statement (ExecRelCheck: stringToNode, then planning the expression). A claim and a complete
-- write todos, todo_attempts and change_log, whose CHECKs were 19 expressions re-read per
-- statement: 8 % of the backend's CPU per claim and complete (bench/README.md, "checks as
-- domains"), most of them on columns those statements never write (a todo's title, its key, its
-- requirements). Five remain there.
--
-- A domain's rule is checked only where a value is stored into the column, and its expression is
-- read once per session (the type cache). So the rules that concern one column become that
-- column's type; the rules that relate two columns (a claimed todo has an owner and a lease; an
-- ended attempt has an outcome) stay table CHECKs, where they must be. So does the todo's state:
-- every transition writes it (a domain would check it on each write all the same), and the
-- partial indexes' predicates name it.
--
-- The same rule keeps the same name wherever it applies: a schedule's title, attempt limit and
-- requirements are a todo's. Constraint violations are still CheckViolation (23514), and the
-- store still checks every field first with an error naming it; these are the backstop.
--
-- Each column is moved in two steps so no table is rewritten: changing a column to a domain with
-- no rule is binary-coercible (no rewrite, indexes kept), and ALTER DOMAIN … ADD CONSTRAINT then
-- scans the columns that use it once to validate what is already stored.

CREATE DOMAIN todo_title AS text;
CREATE DOMAIN idempotency_key AS text;
CREATE DOMAIN attempt_limit AS integer;
CREATE DOMAIN concurrency_key AS text;
CREATE DOMAIN capability_labels AS text[];
CREATE DOMAIN claimer_kind AS text;
CREATE DOMAIN claimant AS text;
CREATE DOMAIN attempt_outcome AS text;
CREATE DOMAIN attempt_disposition AS text;
CREATE DOMAIN attempt_summary AS text;
CREATE DOMAIN attempt_artifact AS text;
CREATE DOMAIN lease_token_hash AS bytea;
CREATE DOMAIN ended_by AS text;
CREATE DOMAIN change_op AS text;

-- The slot triggers name concurrency_key in their WHEN clause (0011): they are set up again after.
DROP TRIGGER todos_concurrency_slot_freed ON todos;
DROP TRIGGER todos_concurrency_slot_deleted ON todos;

ALTER TABLE todos
    DROP CONSTRAINT todos_title_check,
    DROP CONSTRAINT todos_idempotency_key_check,
    DROP CONSTRAINT todos_max_attempts_check,
    DROP CONSTRAINT todos_concurrency_key_check,
    DROP CONSTRAINT todos_requires_labels,
    ALTER COLUMN title TYPE todo_title,
    ALTER COLUMN idempotency_key TYPE idempotency_key,
    ALTER COLUMN max_attempts TYPE attempt_limit,
    ALTER COLUMN concurrency_key TYPE concurrency_key,
    ALTER COLUMN requires TYPE capability_labels;

CREATE TRIGGER todos_concurrency_slot_freed AFTER UPDATE OF state ON todos FOR EACH ROW
    WHEN (OLD.state = 'claimed' AND NEW.state <> 'claimed' AND OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION todos_free_concurrency_slot();
CREATE TRIGGER todos_concurrency_slot_deleted AFTER DELETE ON todos FOR EACH ROW
    WHEN (OLD.state = 'claimed' AND OLD.concurrency_key IS NOT NULL)
    EXECUTE FUNCTION todos_free_concurrency_slot();

ALTER TABLE todo_attempts
    DROP CONSTRAINT todo_attempts_claimer_kind_check,
    DROP CONSTRAINT todo_attempts_claimant_check,
    DROP CONSTRAINT todo_attempts_outcome_check,
    DROP CONSTRAINT todo_attempts_disposition_check,
    DROP CONSTRAINT todo_attempts_summary_check,
    DROP CONSTRAINT todo_attempts_artifact_check,
    DROP CONSTRAINT todo_attempts_lease_token_hash_check,
    DROP CONSTRAINT todo_attempts_ended_by_check,
    ALTER COLUMN claimer_kind TYPE claimer_kind,
    ALTER COLUMN claimant TYPE claimant,
    ALTER COLUMN outcome TYPE attempt_outcome,
    ALTER COLUMN disposition TYPE attempt_disposition,
    ALTER COLUMN summary TYPE attempt_summary,
    ALTER COLUMN artifact TYPE attempt_artifact,
    ALTER COLUMN lease_token_hash TYPE lease_token_hash,
    ALTER COLUMN ended_by TYPE ended_by;

ALTER TABLE change_log
    DROP CONSTRAINT change_log_op_check,
    ALTER COLUMN op TYPE change_op;

ALTER TABLE concurrency_keys
    DROP CONSTRAINT concurrency_keys_key_check,
    ALTER COLUMN key TYPE concurrency_key;

ALTER TABLE endpoints
    DROP CONSTRAINT endpoints_capabilities_labels,
    ALTER COLUMN capabilities TYPE capability_labels;

ALTER TABLE schedules
    DROP CONSTRAINT schedules_title_check,
    DROP CONSTRAINT schedules_max_attempts_check,
    DROP CONSTRAINT schedules_requires_labels,
    ALTER COLUMN title TYPE todo_title,
    ALTER COLUMN max_attempts TYPE attempt_limit,
    ALTER COLUMN requires TYPE capability_labels;

-- The rules, as they were (0002, 0006, 0009, 0011, 0013, 0014, 0015).
ALTER DOMAIN todo_title ADD CONSTRAINT todo_title_length CHECK (char_length(VALUE) BETWEEN 1 AND 500);
ALTER DOMAIN idempotency_key ADD CONSTRAINT idempotency_key_not_empty CHECK (VALUE <> '');
ALTER DOMAIN attempt_limit ADD CONSTRAINT attempt_limit_range CHECK (VALUE BETWEEN 1 AND 100);
ALTER DOMAIN concurrency_key ADD CONSTRAINT concurrency_key_length CHECK (char_length(VALUE) BETWEEN 1 AND 200);
ALTER DOMAIN capability_labels ADD CONSTRAINT capability_labels_bounded
    CHECK (cardinality(VALUE) <= 16 AND array_position(VALUE, NULL) IS NULL);
ALTER DOMAIN claimer_kind ADD CONSTRAINT claimer_kind_known CHECK (VALUE IN ('endpoint', 'owner'));
ALTER DOMAIN claimant ADD CONSTRAINT claimant_length CHECK (octet_length(VALUE) <= 128);
ALTER DOMAIN attempt_outcome ADD CONSTRAINT attempt_outcome_known
    CHECK (VALUE IN ('completed', 'failed', 'released', 'lease_expired', 'reaped', 'canceled', 'revoked'));
ALTER DOMAIN attempt_disposition ADD CONSTRAINT attempt_disposition_known
    CHECK (VALUE IN ('done', 'retry_scheduled', 'requeued', 'dead_lettered', 'canceled'));
ALTER DOMAIN attempt_summary ADD CONSTRAINT attempt_summary_length CHECK (octet_length(VALUE) <= 2048);
ALTER DOMAIN attempt_artifact ADD CONSTRAINT attempt_artifact_length CHECK (octet_length(VALUE) <= 512);
ALTER DOMAIN lease_token_hash ADD CONSTRAINT lease_token_hash_length CHECK (octet_length(VALUE) = 32);
ALTER DOMAIN ended_by ADD CONSTRAINT ended_by_actor
    CHECK (VALUE ~ '^(human:[0-9]+|endpoint:[0-9a-f-]{36})$');
ALTER DOMAIN change_op ADD CONSTRAINT change_op_word CHECK (VALUE ~ '^[a-z_]{1,32}$');
