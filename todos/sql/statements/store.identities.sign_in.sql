-- store.identities.sign_in
-- built by todos.core.store.identities.sign_in()
-- with:
--   issuer = 'https://id.example.com'
--   subject = 'abc123'
--   email = 'Pat@Example.com'
--   email_verified = True
-- Generated: edit the code, then run `uv run manage.py render_sql`.

WITH known AS (
    SELECT u.id FROM person_identities pi JOIN auth_user u ON u.id = pi.user_id
    WHERE pi.issuer = %(issuer)s AND pi.subject = %(subject)s
),
by_email AS (
    -- only a verified email matches an existing person, and only when one person has it
    SELECT id FROM auth_user
    WHERE %(verified)s AND lower(email) = lower(%(email)s) AND NOT EXISTS (SELECT 1 FROM known)
    LIMIT 2
),
free AS (
    SELECT c.name FROM unnest(%(candidates)s::text[]) WITH ORDINALITY AS c(name, n)
    WHERE NOT EXISTS (SELECT 1 FROM auth_user WHERE username = c.name)
    ORDER BY c.n LIMIT 1
),
created AS (
    -- guard: no known identity, no person with this verified email; a free username
    INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,
                           is_active, date_joined)
    SELECT '!', false, free.name, '', '', %(email)s, false, true, now() FROM free
    WHERE NOT EXISTS (SELECT 1 FROM known) AND NOT EXISTS (SELECT 1 FROM by_email)
    ON CONFLICT (username) DO NOTHING
    RETURNING id, username, is_active
),
matched AS (
    SELECT id FROM known
    UNION ALL
    SELECT id FROM by_email WHERE (SELECT count(*) FROM by_email) = 1
),
refreshed AS (
    -- an existing person's email follows the provider's
    UPDATE auth_user u SET email = %(email)s FROM matched m WHERE u.id = m.id AND u.email <> %(email)s
    RETURNING u.id
),
person AS (
    SELECT u.id, u.username, u.is_active, false AS created FROM auth_user u JOIN matched m ON m.id = u.id
    UNION ALL
    SELECT id, username, is_active, true FROM created
),
linked AS (
    INSERT INTO person_identities (user_id, issuer, subject)
    SELECT id, %(issuer)s, %(subject)s FROM person
    ON CONFLICT (issuer, subject) DO NOTHING
),
audit AS (INSERT INTO audit_log (team_id, user_id, actor, action, todo_id, endpoint_id, queue, note, detail)
    SELECT NULL, NULL, %(actor)s, 'person.create', NULL, NULL, NULL, NULL,
           jsonb_build_object('user', ch.username, 'site_admin', false, 'via', 'single sign-on')
    FROM created ch)
SELECT person.*, (SELECT count(*) FROM by_email) AS email_matches FROM person
UNION ALL
SELECT NULL, NULL, NULL, NULL, (SELECT count(*) FROM by_email) WHERE NOT EXISTS (SELECT 1 FROM person)
