-- Issue 37: the read-only role can neither hold up the runners nor pass for one.
--
-- oriole_reader (researchers' psql, `oriole report --aws`, `oriole view`) waited for a lock as long as the lock was
-- held, could take advisory locks in the local runners' lock space (`oriole doctor` reads a held lock as a live
-- run: a reader's lock masked an abandoned run, or kept a runner from holding its own) and could create temporary
-- tables. Now, in this database: a lock wait of the reader's ends after 5 seconds; the advisory-lock functions are
-- the owner's and the application role's (EXECUTE revoked from PUBLIC, granted back to them); temporary tables are
-- the owner's alone. Where the owner may not change a privilege (the functions belong to the server's bootstrap
-- superuser, which on RDS is not the master user), PostgreSQL keeps it and says so in a warning; `oriole doctor`
-- counts only locks held by a role that may run experiments, whoever else holds one.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_reader') THEN
        EXECUTE format('ALTER ROLE oriole_reader IN DATABASE %I SET lock_timeout = %L', current_database(), '5s');
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'oriole_reader keeps the server''s lock_timeout: % may not alter the role', current_user;
END
$$;

DO $$
DECLARE
    lock_function regprocedure;
    holders text := quote_ident(current_user)
        || CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_app') THEN ', oriole_app' ELSE '' END;
BEGIN
    FOR lock_function IN
        SELECT p.oid::regprocedure FROM pg_proc p
         WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.proname ~ '^pg_(try_)?advisory(_xact)?_lock(_shared)?$'
    LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', lock_function);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', lock_function, holders);
    END LOOP;
    EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'advisory locks and temporary tables keep their privileges: % may not change them', current_user;
END
$$;
