-- Required capabilities.
--
-- A todo may name the capabilities it needs (`requires`, labels); a claim presents capabilities
-- (or, presenting none, its endpoint's defaults: `endpoints.capabilities`) and takes only todos
-- whose requirements are a subset of them (`requires <@ capabilities`). Most todos need nothing:
-- `requires` is an empty array then, never NULL, so a claim that presents nothing filters on
-- `requires = '{}'` while it walks the same claim index as before (todos_pending is unchanged).
-- Adding a NOT NULL column with a constant default rewrites nothing (PostgreSQL ≥ 11).
--
-- Limits (the store checks them with errors naming the field; these are the backstop): at most 16
-- labels, none NULL. Label length and characters are the store's (inputs.capability_labels).
ALTER TABLE todos ADD COLUMN requires text[] NOT NULL DEFAULT '{}'
    CONSTRAINT todos_requires_labels CHECK (cardinality(requires) <= 16 AND array_position(requires, NULL) IS NULL);
ALTER TABLE endpoints ADD COLUMN capabilities text[] NOT NULL DEFAULT '{}'
    CONSTRAINT endpoints_capabilities_labels
    CHECK (cardinality(capabilities) <= 16 AND array_position(capabilities, NULL) IS NULL);

-- The Board's claimability warning reads waiting capability-bound work per (owner, queue): only
-- the rows that need something are in this index, so the warning costs the number of such
-- waiting todos, never the number of todos.
CREATE INDEX todos_requires_waiting ON todos (endpoint_id, queue)
    WHERE requires <> '{}' AND state IN ('pending', 'failed');
