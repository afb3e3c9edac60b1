-- Required capabilities on schedule templates: the todo a tick fires carries
-- the schedule's `requires`, as a todo made by an agent or a person may. Same shape and backstop
-- as todos.requires (0014): an empty array when it needs nothing, never NULL, at most 16 labels.
-- A NOT NULL column with a constant default rewrites nothing (PostgreSQL ≥ 11).
ALTER TABLE schedules ADD COLUMN requires text[] NOT NULL DEFAULT '{}'
    CONSTRAINT schedules_requires_labels CHECK (cardinality(requires) <= 16 AND array_position(requires, NULL) IS NULL);
