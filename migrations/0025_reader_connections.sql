-- Issue 32: the researchers' read-only role cannot crowd out the functions or run a statement for ever.
--
-- oriole_reader (psql through the port forward, notebooks, `oriole report --aws`) may hold at most 10 sessions at
-- once: the standard profile's db.t4g.small accepts about 180 connections, three quarters of them the proxy's for
-- the functions, the rest shared by the owner, the readers and RDS itself; the lean profile's functions connect
-- without a proxy, one connection per warm container. A statement of the reader's is cancelled after 5 minutes
-- (a report over 40,000 experiments takes seconds; a query that runs longer is a mistake that holds a connection and,
-- in the lean profile, keeps the database awake). Both are the role's own: the functions (oriole_app) and the
-- owner (the migrations) keep the server's. Like migration 0012, only a role this owner may alter is changed.

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_reader') THEN
        ALTER ROLE oriole_reader CONNECTION LIMIT 10;
        ALTER ROLE oriole_reader SET statement_timeout = '5min';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'oriole_reader keeps the server''s limits: % may not alter the role', current_user;
END
$$;
