-- Least rights, and the code each experiment ran.
--
-- Three roles: the owner (whoever runs the migrations: it owns every table, view and function), the
-- application role oriole_app (what the functions connect as: read, insert and update rows; no DELETE, no
-- TRUNCATE, no DDL) and the read-only role oriole_reader (researchers' SQL and `oriole report --aws`: read
-- only, in read-only transactions). Both are created here without a login; on AWS the Migrations function
-- gives each its login and the password of its Secrets Manager secret. Roles belong to the whole server, so
-- they are created only when missing (and only when the owner may create roles); the grants are this
-- database's. Default privileges extend the grants to every table and view later migrations create.

DO $$
DECLARE
    may_create boolean := (SELECT rolcreaterole OR rolsuper FROM pg_roles WHERE rolname = current_user);
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_app') AND may_create THEN
        CREATE ROLE oriole_app NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_reader') AND may_create THEN
        CREATE ROLE oriole_reader NOLOGIN;
        ALTER ROLE oriole_reader SET default_transaction_read_only = on;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_app') THEN
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO oriole_app', current_database());
        GRANT USAGE ON SCHEMA public TO oriole_app;
        GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO oriole_app;
        GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO oriole_app;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE ON TABLES TO oriole_app;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO oriole_app;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'oriole_reader') THEN
        EXECUTE format('GRANT CONNECT ON DATABASE %I TO oriole_reader', current_database());
        GRANT USAGE ON SCHEMA public TO oriole_reader;
        GRANT SELECT ON ALL TABLES IN SCHEMA public TO oriole_reader;
        ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO oriole_reader;
    END IF;
END
$$;

-- The deployed code an experiment started with: the runtime package's version and the Lambda asset's hash
-- (``<version>+<hash>``), or ``<version>+local`` for a local run. A successor execution of a deploy made
-- meanwhile runs the new code on the same experiment: ``code_version`` is the version that started it.
ALTER TABLE experiments ADD COLUMN code_version text;
