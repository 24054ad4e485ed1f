-- Issue 19: a forgotten session of the functions ends after 10 idle minutes; a researcher's does not.
--
-- idle_session_timeout was set for the whole server (the RDS parameter group), so it also cut the read-only
-- role's psql sessions and the owner's. It now belongs to the application role alone, what the functions
-- connect as: a container frozen with its connection open frees its server session after 10 idle minutes.
-- A role's setting applies to the sessions that log in as it. Like migration 0007, only a role this owner
-- may alter is changed (an existing database's roles may belong to someone else).

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_app') THEN
        ALTER ROLE oriole_app SET idle_session_timeout = '10min';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'oriole_app keeps the server''s idle_session_timeout: % may not alter the role', current_user;
END
$$;
