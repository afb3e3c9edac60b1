-- People: site admins create, deactivate and reactivate people and reset their passwords. Such a
-- change is about a person, not a team, so its audit row has no team (team_id NULL): only site
-- admins read these rows (the People page). The same statement also writes one row into each of
-- the person's teams, so a team's Activity shows that a member was deactivated.
ALTER TABLE audit_log ALTER COLUMN team_id DROP NOT NULL;
-- The People page's "recent changes": the newest site-level rows.
CREATE INDEX audit_log_site_at ON audit_log (at DESC, id DESC) WHERE team_id IS NULL;
