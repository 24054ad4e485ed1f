"""The schema: the numbered migrations, the analysis views and functions (one file each), the roles' logins,
the registry's providers and the catalog's configuration keys.

The SQL lives in the repository's ``migrations/`` folder (carried into the package as ``oriole.migrations``): the
numbered files hold table changes and are applied once each, in order; ``views/<name>.sql`` says what each view
or function is now and is made again whenever one changes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from importlib import resources
from importlib.resources.abc import Traversable

from psycopg import sql
from psycopg.rows import scalar_row, tuple_row
from psycopg.types.json import Jsonb

from oriole.catalog import Parameter, conditions
from oriole.errors import OrioleError
from oriole.provider_registry import Provider
from oriole.store.base import StoreBase

MIGRATION_LOCK_KEY = 0x0_6F72_696F_6C65  # "oriole": one advisory lock for every migration runner
DATABASE_ROLES = ("oriole_app", "oriole_reader")  # created by migration 0007: the functions', the researchers'


def migration_files() -> list[Traversable]:
    """The SQL migrations (``migrations/NNNN_*.sql`` of the repository, carried into the package), in order."""
    return _sql_files(resources.files("oriole.migrations"))


def view_files() -> list[Traversable]:
    """The analysis views and functions, one file each (``migrations/views/<name>.sql``)."""
    return _sql_files(resources.files("oriole.migrations").joinpath("views"))


def _sql_files(folder: Traversable) -> list[Traversable]:
    return sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)


# The migrations whose views moved into views/ (issue 23): the checksum a database migrated before then recorded for
# each is accepted as well as the file's own.
PREVIOUS_CHECKSUMS = {
    "0003_analysis_views": "38e3ee9a96e07e201c4694936f0cbbab73a282d0e70a5b4af726136f76a6d90e",
    "0005_results_and_progress": "6027b053c4477c92033ea6ad22eee98a73c6db60119dd0c87da262374f029a44",
    "0011_mazes_in_results": "52fa02677dd8a424a35f98b1318461023689171944d51fcb1a154dfc527f9428",
    "0014_totals_fit_their_columns": "2699ac922254ffcbf1432d081f0d9ec3fa5de2933ac87dd97121fe048dfea374",
}
# Views and functions whose file was renamed (issue 34: one name per thing), dropped with the others wherever they
# still exist: a database whose views predate schema_views never recorded them, and they depend on today's.
RENAMED_VIEWS = {"model_comparison": "agent_comparison", "compared_experiments": "comparison_scope"}
# What the roles of migration 0007 may do with a view (its default privileges: views count as tables).
VIEW_RIGHTS = {"oriole_app": "SELECT, INSERT, UPDATE", "oriole_reader": "SELECT"}
_NOT_CODE = re.compile(r"--[^\n]*|'(?:[^']|'')*'")  # comments and string literals: no dependency hides there


@dataclass(frozen=True)
class SqlFile:
    """A migration or a view file: its name (the file's, without ``.sql``), its SQL and the SQL's checksum."""

    name: str
    sql: str
    checksum: str

    @classmethod
    def read(cls, path: Traversable) -> SqlFile:
        text = path.read_text(encoding="utf-8")
        return cls(path.name.removesuffix(".sql"), text, hashlib.sha256(text.encode()).hexdigest())

    def mentions(self, names: Iterable[str]) -> set[str]:
        """The other names among ``names`` that this file's SQL uses (outside comments and string literals)."""
        code = _NOT_CODE.sub(" ", self.sql)
        return {name for name in names if name != self.name and re.search(rf"\b{re.escape(name)}\b", code)}


def ordered_views(files: Iterable[Traversable]) -> list[SqlFile]:
    """The view files in an order that creates every object after those it uses: a file uses another when its
    SQL names the other's object (each file defines the view or function it is named after)."""
    return in_order(map(SqlFile.read, files))


def in_order(files: Iterable[SqlFile]) -> list[SqlFile]:
    """``ordered_views`` of files already read."""
    views = {view.name: view for view in files}
    graph = {name: views[name].mentions(views) for name in sorted(views)}
    try:
        return [views[name] for name in TopologicalSorter(graph).static_order()]
    except CycleError as error:
        raise ValueError(f"the view files use each other in a circle: {' -> '.join(error.args[1])}") from None


class MigrationChanged(OrioleError):
    """An applied migration file was edited afterwards; add a new migration instead."""


class Schema(StoreBase):
    """Migrations, views, logins and the catalog's configuration keys."""

    def apply_migrations(
        self, files: Iterable[Traversable] | None = None, views: Iterable[Traversable] | None = None
    ) -> list[str]:
        """Bring the schema to the code's: apply each pending ``NNNN_*.sql`` file once, in order, and make the
        views and functions of ``views/`` again whenever one of them changed or a migration was pending.

        Everything happens in one transaction under an advisory lock (two deploys at once must not race): the
        views are dropped, the pending migrations applied and recorded, the views created in dependency order
        with their grants and recorded by checksum; a failure anywhere leaves the database as it was. An applied
        migration whose checksum changed is refused (``PREVIOUS_CHECKSUMS`` excepted). ``views`` empty: leave
        the views alone (a test that stops at an early migration). Returns the migrations applied by this call.
        """
        files = migration_files() if files is None else sorted(files, key=lambda f: f.name)
        # read and checksummed on every command; ordered only when they are made (finding the order reads every
        # file for the others' names: 20-30 ms of each command's CPU)
        read = list(map(SqlFile.read, view_files() if views is None else views))
        self.conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, "
                "checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_views (name text PRIMARY KEY, "
                "checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            pending = self._pending_migrations(files)
            recorded = self._pairs("SELECT name, checksum FROM schema_views")
            views_changed = bool(read) and recorded != {view.name: view.checksum for view in read}
            if pending or views_changed:
                ordered = in_order(read)
                with self.conn.transaction():
                    if ordered:
                        self._drop_views({*recorded, *RENAMED_VIEWS, *(view.name for view in ordered)})
                    for migration in pending:
                        self.conn.execute(migration.sql)
                        self.conn.execute(
                            "INSERT INTO schema_migrations (version, checksum) VALUES (%s, %s)",
                            (migration.name, migration.checksum),
                        )
                    if ordered:
                        self._create_views(ordered)
        finally:
            self.conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
        return [migration.name for migration in pending]

    def _pending_migrations(self, files: list[Traversable]) -> list[SqlFile]:
        """The migrations not applied yet, in order; an applied one whose file changed since is refused."""
        done = self._pairs("SELECT version, checksum FROM schema_migrations")
        pending = []
        for migration in map(SqlFile.read, files):
            if migration.name not in done:
                pending.append(migration)
            elif done[migration.name] not in (migration.checksum, PREVIOUS_CHECKSUMS.get(migration.name)):
                raise MigrationChanged(f"migration {migration.name}.sql changed after it was applied")
        return pending

    def _drop_views(self, names: set[str]) -> None:
        """Drop the views and functions of these names (those that exist): the views in one statement, so that
        one depending on another is no obstacle, the triggers that call one of the functions (its file makes them
        again), then the functions (every signature of each name). A view of someone else's built on one of them
        stops the migration, with PostgreSQL's message naming it."""
        views, triggers, functions = self.conn.cursor(row_factory=tuple_row).execute(
            "SELECT (SELECT array_agg(c.oid::regclass::text) FROM pg_class c WHERE c.relkind = 'v' "
            "          AND c.relname = ANY (%(names)s) AND c.relnamespace = 'public'::regnamespace) AS views, "
            "       (SELECT array_agg(format('%%I ON %%s', t.tgname, t.tgrelid::regclass)) FROM pg_trigger t "
            "          JOIN pg_proc p ON p.oid = t.tgfoid WHERE NOT t.tgisinternal "
            "           AND p.proname = ANY (%(names)s) AND p.pronamespace = 'public'::regnamespace) AS triggers, "
            "       (SELECT array_agg(p.oid::regprocedure::text) FROM pg_proc p "
            "         WHERE p.proname = ANY (%(names)s) AND p.pronamespace = 'public'::regnamespace) AS functions",
            {"names": sorted(names)},
        ).fetchone() or (None, None, None)
        if views:
            self.conn.execute("DROP VIEW " + ", ".join(views))
        for trigger in triggers or ():
            self.conn.execute("DROP TRIGGER " + trigger)
        if functions:
            self.conn.execute("DROP FUNCTION " + ", ".join(functions))

    def _create_views(self, ordered: list[SqlFile]) -> None:
        """Create the views and functions in dependency order, give the roles of migration 0007 their rights on
        the views as its default privileges do, and record each file's checksum."""
        for view in ordered:
            self.conn.execute(view.sql)
        views = (
            self.conn.cursor(row_factory=scalar_row)
            .execute(
                "SELECT c.relname AS name FROM pg_class c WHERE c.relkind = 'v' AND c.relname = ANY (%s) "
                "AND c.relnamespace = 'public'::regnamespace ORDER BY 1",
                ([view.name for view in ordered],),
            )
            .fetchall()
        )
        roles = set(
            self.conn.cursor(row_factory=scalar_row).execute(
                "SELECT rolname FROM pg_roles WHERE rolname = ANY (%s)", (list(DATABASE_ROLES),)
            )
        )
        for role, rights in VIEW_RIGHTS.items():
            if role in roles and views:
                self.conn.execute(
                    sql.SQL("GRANT {} ON {} TO {}").format(
                        sql.SQL(rights), sql.SQL(", ").join(map(sql.Identifier, views)), sql.Identifier(role)
                    )
                )
        self.conn.execute("DELETE FROM schema_views")
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO schema_views (name, checksum) VALUES (%s, %s)",
                [(view.name, view.checksum) for view in ordered],
            )

    def _pairs(self, query: str) -> dict[str, str]:
        """A two-column read (name, checksum) as a dict; on the migration's own connection, never sent again."""
        return dict(self.conn.cursor(row_factory=tuple_row).execute(query))

    def enable_login(self, role: str, password: str) -> None:
        """Give a role of migration 0007 its login and password (run again, it sets the password again)."""
        if role not in DATABASE_ROLES:
            raise ValueError(f"{role!r} is not one of the roles the migrations create: {', '.join(DATABASE_ROLES)}")
        self.conn.execute(
            sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password))
        )

    def load_providers(self, providers: Iterable[Provider]) -> None:
        """Write the registry's providers into ``providers`` (which ``experiments.llm_provider`` references): a new
        one is added, a label follows the registry; none is removed, since its experiments keep it."""
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO providers (name, label) VALUES (%s, %s) "
                "ON CONFLICT (name) DO UPDATE SET label = EXCLUDED.label",
                [(provider.name, provider.label) for provider in providers],
            )

    def load_catalog(self, parameters: Iterable[Parameter]) -> None:
        """Write the catalog's view of each configuration key into ``config_keys`` (which providers it applies
        to, whether it is an experimental variable, its default, the settings it depends on: ``catalog.conditions``),
        replacing what was there.

        The analysis views compare experiments on these keys only, so the catalog stays the one place that
        says what a setting is; a new catalog entry needs nothing else. Every local command loads it, and a change
        recounts the kinds of experiment (migration 0036's triggers): so the table is written only when it
        differs, and in one statement.
        """
        wanted = sorted((p for p in parameters if p.overridable), key=lambda p: p.key)
        rows = [
            {
                "key": p.key,
                "providers": list(p.providers),
                "experimental": p.experimental,
                "default_value": p.default,
                "applies_when": {key: list(values) for key, values in conditions(p).items()} or None,
            }
            for p in wanted
        ]
        stored = self.conn.execute(
            'SELECT key, providers, experimental, default_value, applies_when FROM config_keys ORDER BY key COLLATE "C"'
        ).fetchall()
        if stored == rows:
            return
        self.conn.execute(  # one statement: its triggers see the new keys whole, never a table half written
            """
            WITH wanted AS (
                SELECT r.key, r.providers, r.experimental, r.default_value, r.applies_when
                  FROM jsonb_to_recordset(%(rows)s) AS r (key text, providers text[], experimental boolean,
                                                          default_value jsonb, applies_when jsonb)
            ), gone AS (
                DELETE FROM config_keys k WHERE k.key NOT IN (SELECT w.key FROM wanted w)
            )
            INSERT INTO config_keys (key, providers, experimental, default_value, applies_when) SELECT * FROM wanted
                ON CONFLICT (key) DO UPDATE SET providers = excluded.providers, experimental = excluded.experimental,
                                                default_value = excluded.default_value,
                                                applies_when = excluded.applies_when
            """,
            {"rows": Jsonb(rows)},
        )
