-- `todos.has_children`: whether a create ever made this todo a parent that a child waits for (it
-- is named in a child's `after`, or a batch item's `after_items`, while it is not finished).
--
-- A statement that completes todos settles their children by calling `todo_children_done`
-- (0036). The call, and the probe of the dependency index inside it, was made for every todo
-- completed, though most todos have no child: about a tenth of a plain complete's backend CPU.
-- With the flag on the row the statement has just updated, it calls the function only for the
-- todos that have it.
--
-- No lost child: a create locks its open parents (`FOR NO KEY UPDATE`) and sets the flag in the
-- same statement that writes the dependency rows. A complete of one of those parents either
-- commits first (the create then sees the parent done and does not wait for it) or waits for the
-- create's row lock, and then updates the newest version of the row, the flag set, and calls the
-- function, whose probe takes a snapshot newer than the create's commit.
--
-- The flag is never cleared: a parent whose children have all settled keeps it and pays the
-- probe. The column has a constant default, so adding it rewrites nothing; the UPDATE below marks
-- the parents of the dependency rows not yet settled.

ALTER TABLE todos ADD COLUMN IF NOT EXISTS has_children boolean NOT NULL DEFAULT false;

UPDATE todos t SET has_children = true
WHERE t.id IN (SELECT d.parent_id FROM todo_dependencies d WHERE NOT d.settled) AND NOT t.has_children;
