-- "Assigned to me": the todo list's `mine` filter (assignee = the human, or a lease the human
-- holds). Without it the filter walked each endpoint's whole history looking for the few rows
-- assigned to the human: 11 s for one team at 5M todos (bench/board_scale.py). Per state, newest
-- first, like the endpoint indexes of 0002, so each state is one ordered index scan that stops
-- after a page. Partial: most todos are never assigned. assignee is written by `assign` only, never
-- by a heartbeat, so heartbeats stay HOT updates.
CREATE INDEX todos_assignee_state_created ON todos (assignee, state, created_at, id)
    WHERE assignee IS NOT NULL;
