"""Migrations on a real PostgreSQL: a fresh database reaches the schema, reruns change nothing, the views and
functions are those of their files (made again when one changes), and a database migrated before the views had
files of their own upgrades to the same definitions."""

import subprocess
import threading
from pathlib import Path

import pytest
from psycopg.types.json import Jsonb

from oriole.core import mazeset
from oriole.core.endings import closing
from oriole.core.maze import Maze, optimal_path_length
from oriole.core.mazeset import MazeEntry
from oriole.provider_registry import PROVIDERS
from oriole.statuses import Ending, EndingCause
from oriole.store import Store, db
from oriole.store.mazes import MazeSetMismatch
from oriole.store.schema import MigrationChanged, migration_files, ordered_views, view_files

ROOT = Path(__file__).resolve().parents[2]

STABLE_COLUMNS = {
    "mazes": {"id", "name", "width", "height", "start_x", "start_y", "goal_x", "goal_y", "shortest_path_length"},
    "experiments": {
        "id",
        "maze_id",
        "llm_provider",
        "model_name",
        "prompt_version",
        "status",
        "goal_found",
        "started_at",
        "completed_at",
        "failure_reason",
        "config",
        "execution_arns",
    },
    "turns": {"experiment_id", "turn_number", "input_tokens", "output_tokens"},
    "actions": {
        "experiment_id",
        "step_number",
        "turn_number",
        "action_type",
        "from_x",
        "from_y",
        "to_x",
        "to_y",
        "success",
    },
}


def schema(store: Store) -> list[tuple]:
    rows = store.conn.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'public' ORDER BY table_name, column_name"
    ).fetchall()
    return [tuple(r.values()) for r in rows]


def primary_key(store: Store, table: str) -> list[str]:
    rows = store.conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY (i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary "
        "ORDER BY array_position(i.indkey, a.attnum)",
        (table,),
    ).fetchall()
    return [r["attname"] for r in rows]


def test_a_fresh_database_reaches_the_schema_from_migrations_alone(empty_database):
    store = Store(db.connect(empty_database))
    applied = store.apply_migrations()
    assert applied == [f.name.removesuffix(".sql") for f in migration_files()]
    columns = {}
    for table, column, *_ in schema(store):
        columns.setdefault(table, set()).add(column)
    for table, stable in STABLE_COLUMNS.items():
        assert stable <= columns[table], table
    assert primary_key(store, "actions") == ["experiment_id", "step_number"]
    assert primary_key(store, "turns") == ["experiment_id", "turn_number"]


def test_running_migrations_and_the_maze_load_twice_changes_nothing(empty_database):
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    assert store.load_mazes(mazeset.maze_set()) == len(mazeset.maze_set())
    before = schema(store)
    assert store.apply_migrations() == []
    assert store.load_mazes(mazeset.maze_set()) == 0
    assert schema(store) == before
    assert store.conn.execute("SELECT count(*) AS n FROM mazes").fetchone()["n"] == len(mazeset.maze_set())


def test_concurrent_runners_apply_each_migration_once(empty_database):
    results, errors = [], []

    def run():
        try:
            results.append(Store(db.connect(empty_database)).apply_migrations())
        except Exception as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(len(r) for r in results) == [0, 0, 0, len(migration_files())]


def test_an_edited_migration_is_refused(empty_database, tmp_path):
    for file in migration_files():
        (tmp_path / file.name).write_text(file.read_text(encoding="utf-8"), encoding="utf-8")
    store = Store(db.connect(empty_database))
    store.apply_migrations(tmp_path.glob("*.sql"))
    first = sorted(tmp_path.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited\n")
    with pytest.raises(MigrationChanged, match=first.name):
        store.apply_migrations(tmp_path.glob("*.sql"))


def test_a_stored_maze_that_differs_from_the_code_is_reported(empty_database):
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    store.load_mazes(mazeset.maze_set())
    store.conn.execute("UPDATE mazes SET content_hash = 'tampered' WHERE name = 'perfect-7'")
    with pytest.raises(MazeSetMismatch, match="perfect-7"):
        store.load_mazes(mazeset.maze_set())


def test_prepare_generates_the_maze_set_only_when_the_database_does_not_store_it_as_pinned(empty_database):
    """Every CLI command prepares the database: one that holds the shipped set as the code pins it is not made to
    generate it again (a third of a second of each command); one that holds a maze otherwise still is, and says so."""
    store = Store(db.connect(empty_database))
    mazeset.maze_set.cache_clear()
    assert store.prepare()["newMazes"] == len(mazeset.pinned_set())
    assert mazeset.maze_set.cache_info().misses == 1
    mazeset.maze_set.cache_clear()
    assert store.prepare() == {"applied": [], "newMazes": 0}
    assert mazeset.maze_set.cache_info().misses == 0
    store.conn.execute("UPDATE mazes SET content_hash = 'tampered' WHERE name = 'perfect-7'")
    with pytest.raises(MazeSetMismatch, match="perfect-7"):
        store.prepare()


def test_0005_backfills_the_ending_and_the_aggregates_of_rows_stored_before_it(empty_database):
    """Rows closed before the ending existed get it by the rule of 0005 (aborts as errors; 0020 classifies them
    again); their aggregates are recounted from their actions and turns."""
    store = Store(db.connect(empty_database))
    before, after = [f for f in migration_files() if f.name < "0005"], migration_files()
    store.apply_migrations(before, views=())  # the views need the columns of later migrations
    conn = store.conn
    maze = mazeset.get_maze(101)  # stored with the columns of the schema before 0005 (later ones add more)
    conn.execute(
        "INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, "
        "shortest_path_length, generator, seed, content_hash, grid) VALUES "
        "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            maze.id,
            maze.name,
            maze.family,
            maze.maze.width,
            maze.maze.height,
            *maze.maze.start,
            *maze.maze.goal,
            maze.shortest_path_length,
            maze.generator,
            maze.seed,
            maze.content_hash,
            Jsonb(maze.maze.grid),
        ),
    )
    endings = {
        ("running", None): None,
        ("succeeded", None): "success",
        ("timed_out", "max_moves reached"): "agent",
        ("failed", "agent_stalled: 3 turns in a row"): "agent",
        ("failed", "ModelTimeout: slow"): "error",
        ("aborted", "execution ABORTED: stopped"): "error",
    }
    ids = {}
    for n, (status, reason) in enumerate(endings, 1):
        ids[status, reason] = conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, status, current_x, current_y, completed_at, failure_reason, origin_execution_arn, "
            "execution_arns) VALUES (101, 'baseline', 'random', 'v1', 'h', 't', '{}', 1, %s, 0, 0, "
            "CASE WHEN %s <> 'running' THEN now() END, %s, %s, ARRAY[%s]) RETURNING id",
            (status, status, reason, f"arn:{n}", f"arn:{n}"),
        ).fetchone()["id"]
    walked = ids["succeeded", None]
    start = mazeset.get_maze(101).maze.start
    conn.execute(
        "INSERT INTO turns (experiment_id, turn_number, first_step, action_count, model_calls, latency_ms, "
        "end_reason, started_at) VALUES (%s, 1, 1, 3, 2, 70, 'action_budget', now())",
        (walked,),
    )
    for step, to in enumerate([(start[0] + 1, start[1]), start, (start[0] + 1, start[1])], 1):
        conn.execute(
            "INSERT INTO actions (experiment_id, step_number, turn_number, action_type, from_x, from_y, "
            "to_x, to_y, success) VALUES (%s, %s, 1, 'move_east', 0, 0, %s, %s, true)",
            (walked, step, *to),
        )
    until_0020 = [f for f in after if f.name < "0020"]  # 0020 classifies the endings again: its own test
    assert store.apply_migrations(until_0020, views=())[0] == "0005_results_and_progress"
    rows = {r["id"]: r for r in conn.execute("SELECT * FROM experiments").fetchall()}
    assert {key: rows[i]["ending"] for key, i in ids.items()} == endings
    assert (rows[walked]["unique_tiles_visited"], rows[walked]["model_calls"], rows[walked]["latency_ms"]) == (2, 2, 70)
    assert rows[walked]["last_action_at"] is not None and rows[ids["running", None]]["unique_tiles_visited"] == 1


REASONS = [
    ("succeeded", None),
    ("timed_out", "max_moves reached: 200 actions of 200 allowed"),
    ("timed_out", "max_duration_minutes reached: ran 120.3 of 120 minutes"),
    ("timed_out", "execution TIMED_OUT: exp-3 reached its execution timeout"),
    ("timed_out", "a reason no rule names"),
    ("failed", "agent_stalled: 3 turns in a row without a valid action"),
    ("failed", "agent_gave_up: too hard"),
    ("failed", "ModelThrottled: throttled 13 times"),
    ("failed", "Lambda.TooManyRequestsException: Rate Exceeded."),
    ("failed", "ModelUnavailable: down"),
    ("failed", "ModelTimeout:no space after the colon"),
    ("failed", "InvalidApiKey: the key holds a control character"),
    ("failed", "InvalidModelResponse: not JSON"),
    ("failed", "ModelRequestRejected: unknown model"),
    ("failed", "OperationalError: dropped"),
    ("failed", "execution FAILED: exp-4 failed (ModelUnavailable: down)"),
    ("failed", "no colon at all"),
    ("failed", ""),
    ("aborted", "execution ABORTED: exp-5 was stopped (stopped from the command line (Ctrl-C))"),
    ("aborted", "something else"),
]


def test_0020_classifies_every_closed_row_again_by_the_rules_the_code_closes_with(empty_database):
    """Before 0020 a run the wall clock or the execution timeout ended scored as the agent's failure and a stopped
    one as an error; after it every closed row has the ending and cause ``endings.closing`` gives its status and
    reason, and a running one neither."""
    store = Store(db.connect(empty_database))
    files = migration_files()
    store.apply_migrations([f for f in files if f.name < "0020"], views=())
    conn = store.conn
    store.load_providers(PROVIDERS.values())
    store.load_mazes(mazeset.maze_set()[:1])
    maze_id = mazeset.maze_set()[0].id
    ids = {}
    for n, (status, reason) in enumerate([("running", None), *REASONS], 1):
        old = "success" if status == "succeeded" else None if status == "running" else "error"
        ids[status, reason] = conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, status, ending, current_x, current_y, completed_at, failure_reason, origin_execution_arn, "
            "execution_arns) VALUES (%s, 'baseline', 'random', 'v1', 'h', 't', '{}', 1, %s, %s, 0, 0, "
            "CASE WHEN %s <> 'running' THEN now() END, %s, %s, ARRAY[%s]) RETURNING id",
            (maze_id, status, old, status, reason, f"arn:{n}", f"arn:{n}"),
        ).fetchone()["id"]
    assert store.apply_migrations([f for f in files if f.name < "0021"], views=()) == ["0020_run_endings"]
    rows = {
        r["id"]: r for r in conn.execute("SELECT id, status, failure_reason, ending, ending_cause FROM experiments")
    }
    for key, i in ids.items():
        row = rows[i]
        expected = closing(row["status"], row["failure_reason"])
        assert (row["ending"], row["ending_cause"]) == (
            (expected.ending, expected.cause) if expected else (None, None)
        ), key
    assert {rows[i]["ending"] for i in ids.values()} == {None, "success", "agent", "censored", "error"}


def test_0021_gives_every_stored_experiment_the_optimum_of_its_goal_condition(empty_database):
    """Rows stored before 0021 get the optimum the code computes (``maze.optimal_path_length``): the shortest path
    under reach, a search of the maze under sight with the experiment's vision range, the start-sees-goal cases
    included."""
    store = Store(db.connect(empty_database))
    store.apply_migrations([f for f in migration_files() if f.name < "0021"], views=())
    store.load_providers(PROVIDERS.values())
    store.load_mazes(mazeset.maze_set())
    handmade = {  # the goal in sight from the start: a wall beside it (0 moves), or open all round (1 move)
        "walled": Maze.from_rows([[0, 0, 2], [1, 1, 1]], (0, 0), (2, 0)),
        "open": Maze.from_rows([[0] * 5, [0] * 5, [0, 0, 0, 2, 0], [0] * 5, [0] * 5], (1, 2), (3, 2)),
    }
    for name, maze in handmade.items():
        store.add_maze(
            MazeEntry(None, name, "handmade", "test", 0, maze, maze.validate(), maze.content_hash()), "imported"
        )
    cases = [
        (entry, condition, vision)
        for entry in [*mazeset.maze_set(), *(store.find_maze(name) for name in handmade)]
        for condition, vision in (("reach", 3), ("sight", 0), ("sight", 3), ("sight", 7))
    ]
    for n, (entry, condition, vision) in enumerate(cases, 1):
        store.conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, current_x, current_y, origin_execution_arn, execution_arns) "
            "VALUES (%s, 'baseline', 'oracle', 'v1', 'h', 't', %s, 1, 0, 0, %s, ARRAY[%s])",
            (entry.id, Jsonb({"goalCondition": condition, "visionRange": vision}), f"arn:{n}", f"arn:{n}"),
        )
    assert store.apply_migrations([f for f in migration_files() if f.name < "0022"], views=()) == [
        "0021_optimal_path_length"
    ]
    stored = store.conn.execute("SELECT optimal_path_length FROM experiments ORDER BY id").fetchall()
    assert [r["optimal_path_length"] for r in stored] == [
        optimal_path_length(condition, entry.maze, vision) for entry, condition, vision in cases
    ]
    assert {r["optimal_path_length"] for r in stored[-8:]} >= {0, 1}  # both start-sees-goal cases met


def test_0033_records_that_ollama_experiments_before_num_predict_sent_no_cap(empty_database):
    """An Ollama snapshot taken before numPredict existed ran without options.num_predict: it gets numPredict 0 (no
    cap sent), as does its replay's copy; a snapshot holding the key and another provider's are left as they are."""
    store = Store(db.connect(empty_database))
    store.apply_migrations([f for f in migration_files() if f.name < "0033"], views=())
    store.load_providers(PROVIDERS.values())
    store.load_mazes(mazeset.maze_set())
    maze = mazeset.maze_set()[0]
    rows = [("ollama", {"numCtx": 8}), ("ollama", {"numPredict": 64}), ("openai", {"maxOutputTokens": 9})]
    for n, (provider, config) in enumerate(rows, 1):
        store.conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, current_x, current_y, origin_execution_arn, execution_arns, optimal_path_length) "
            "VALUES (%s, %s, 'm', 'v1', 'h', 't', %s, 1, 0, 0, %s, ARRAY[%s], 1)",
            (maze.id, provider, Jsonb(config), f"arn:{n}", f"arn:{n}"),
        )
    store.conn.execute(
        "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
        "config, seed, current_x, current_y, origin_execution_arn, execution_arns, replay_of, optimal_path_length) "
        "SELECT maze_id, 'replay', model_name, 'v1', 'h', 't', config, 1, 0, 0, 'arn:r', ARRAY['arn:r'], id, 1 "
        "FROM experiments WHERE id = 1"
    )
    assert "0033_ollama_output_cap" in store.apply_migrations(
        [f for f in migration_files() if f.name < "0034"], views=()
    )
    configs = [r["config"] for r in store.conn.execute("SELECT config FROM experiments ORDER BY id")]
    assert configs == [
        {"numCtx": 8, "numPredict": 0},
        {"numPredict": 64},
        {"maxOutputTokens": 9},
        {"numCtx": 8, "numPredict": 0},
    ]


def test_the_catalog_is_written_as_config_keys_on_every_load(empty_database):
    from oriole import catalog

    store = Store(db.connect(empty_database))
    store.apply_migrations()
    store.conn.execute("INSERT INTO config_keys VALUES ('retired', '{ollama}', true, '1')")
    store.load_catalog(catalog.CATALOG)
    store.load_catalog(catalog.CATALOG)
    keys = {r["key"]: r for r in store.conn.execute("SELECT * FROM config_keys").fetchall()}
    assert set(keys) == {p.key for p in catalog.CATALOG if p.overridable}
    assert (keys["endpoint"]["providers"], keys["endpoint"]["experimental"]) == (["ollama"], False)
    assert keys["temperature"]["providers"] == ["bedrock", "ollama", "openai"]
    assert keys["maxMoves"]["default_value"] == 10000
    assert (keys["baseUrl"]["providers"], keys["baseUrl"]["experimental"]) == (["openai"], False)
    assert keys["historyTurns"]["applies_when"] == {"historyMode": ["conversation", "summary"]}
    assert keys["parallelToolCalls"]["applies_when"] == {"textToolCalls": [False]}
    assert keys["historyMode"]["applies_when"] is None


def definitions(store: Store) -> dict[str, str]:
    """What the database holds for each view and function of views/: a view's definition and column comments, a
    function's whole definition (every signature), as PostgreSQL prints them."""
    names = [view.name for view in ordered_views(view_files())]
    rows = store.conn.execute(
        "SELECT c.relname AS name, pg_get_viewdef(c.oid, true) || coalesce((SELECT string_agg("
        "           a.attname || ': ' || d.description, E'\\n' ORDER BY a.attnum) FROM pg_description d "
        "           JOIN pg_attribute a ON a.attrelid = d.objoid AND a.attnum = d.objsubid WHERE d.objoid = c.oid), '')"
        "       AS definition "
        "  FROM pg_class c WHERE c.relkind = 'v' AND c.relname = ANY (%(names)s) "
        "   AND c.relnamespace = 'public'::regnamespace "
        "UNION ALL "
        "SELECT p.proname, string_agg(pg_get_functiondef(p.oid), E'\\n' ORDER BY p.oid::regprocedure::text) "
        "  FROM pg_proc p WHERE p.proname = ANY (%(names)s) AND p.pronamespace = 'public'::regnamespace "
        " GROUP BY p.proname",
        {"names": names},
    ).fetchall()
    return {r["name"]: r["definition"] for r in rows}


def rights(store: Store) -> dict[str, str]:
    """Who may do what with each view (its ACL)."""
    return {
        r["relname"]: r["acl"]
        for r in store.conn.execute(
            "SELECT relname, relacl::text AS acl FROM pg_class WHERE relkind = 'v' "
            "AND relnamespace = 'public'::regnamespace"
        ).fetchall()
    }


def test_the_views_and_functions_in_the_database_are_their_files(empty_database):
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    held = definitions(store)
    assert set(held) == {view.name for view in ordered_views(view_files())}  # one file each, every one made
    with store.conn.transaction(force_rollback=True):  # the files alone, once more, give the same definitions
        store._drop_views(set(held))  # every view and function the files make
        for view in ordered_views(view_files()):
            store.conn.execute(view.sql)
        assert definitions(store) == held
    recorded = {r["name"] for r in store.conn.execute("SELECT name FROM schema_views")}
    assert recorded == set(held)


def test_a_renamed_view_is_dropped_by_its_old_name_and_made_by_its_new_one():
    from oriole.store.schema import RENAMED_VIEWS

    names = {view.name for view in ordered_views(view_files())}
    assert set(RENAMED_VIEWS.values()) <= names and not set(RENAMED_VIEWS) & names


def test_numbered_migrations_hold_table_changes_only_and_the_sql_lives_under_migrations():
    import re

    for file in migration_files():
        assert not re.search(
            r"CREATE\s+(OR\s+REPLACE\s+)?(VIEW|FUNCTION)", file.read_text(encoding="utf-8"), re.IGNORECASE
        ), f"{file.name}: a view or function belongs in migrations/views/"
    assert not list((ROOT / "lambdas").rglob("*.sql")) and not list((ROOT / "workstation").rglob("*.sql"))


def test_a_changed_view_file_is_made_again_and_a_removed_one_dropped(empty_database, tmp_path):
    views = tmp_path / "views"
    views.mkdir()
    for file in view_files():
        (views / file.name).write_text(file.read_text(encoding="utf-8"), encoding="utf-8")
    store = Store(db.connect(empty_database))
    store.apply_migrations(views=views.glob("*.sql"))
    assert store.apply_migrations(views=views.glob("*.sql")) == []
    unchanged = store.conn.execute("SELECT max(applied_at) AS at FROM schema_views").fetchone()["at"]
    status = views / "experiment_status.sql"
    status.write_text(status.read_text().replace("stale_after_minutes", "stale_minutes"))
    (views / "agent_comparison.sql").unlink()
    assert store.apply_migrations(views=views.glob("*.sql")) == []  # no migration, only the views
    columns = {
        r["column_name"]
        for r in store.conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'experiment_status'"
        )
    }
    assert "stale_minutes" in columns and "stale_after_minutes" not in columns
    assert "agent_comparison" not in definitions(store)
    assert store.conn.execute("SELECT min(applied_at) AS at FROM schema_views").fetchone()["at"] > unchanged


def migrations_before_views(folder: Path) -> list[Path]:
    """The migrations as main held them before the views had files of their own (their SQL made the views), from
    the repository's history."""
    commit, path = "ec51c2b", "lambdas/oriole/migrations"
    try:
        names = subprocess.run(
            ["git", "ls-tree", "--name-only", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"the upgrade test reads the migrations of commit {commit} from the repository's history")
    for name in names:
        (folder / name).write_bytes(
            subprocess.run(["git", "show", f"{commit}:{path}/{name}"], cwd=ROOT, check=True, capture_output=True).stdout
        )
    return sorted(folder.glob("*.sql"))


def test_a_database_migrated_before_the_views_had_files_upgrades_to_the_same_definitions(
    empty_database, server_url, tmp_path
):
    from tests.conftest import scratch_database

    old = Store(db.connect(empty_database))
    before = migrations_before_views(tmp_path)
    assert old.apply_migrations(before, views=()) == [path.stem for path in before]  # as deployed: views included
    changed = {r["version"]: r["checksum"] for r in old.conn.execute("SELECT * FROM schema_migrations")}
    assert old.apply_migrations() == [
        f.name.removesuffix(".sql") for f in migration_files() if f.name.removesuffix(".sql") not in changed
    ]
    assert {
        r["version"]: r["checksum"]
        for r in old.conn.execute("SELECT * FROM schema_migrations WHERE version = ANY (%s)", (list(changed),))
    } == changed  # kept as recorded
    assert old.apply_migrations() == []
    with scratch_database(server_url) as url:
        fresh = Store(db.connect(url))
        fresh.apply_migrations()
        assert definitions(old) == definitions(fresh) and rights(old) == rights(fresh)
        assert schema(old) == schema(fresh)
        fresh.conn.close()


def test_the_providers_table_is_the_registry_and_every_experiment_names_one(empty_database):
    """A new provider needs no migration: every migrate writes the registry into ``providers``, which
    ``experiments.llm_provider`` references (the CHECK that 0010 widened for openai is gone)."""
    import psycopg

    from oriole.provider_registry import PROVIDERS, Provider

    store = Store(db.connect(empty_database))
    store.prepare()
    assert {r["name"]: r["label"] for r in store.conn.execute("SELECT * FROM providers")} == {
        name: provider.label for name, provider in PROVIDERS.items()
    }

    def experiment(provider: str) -> None:
        store.conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, current_x, current_y, origin_execution_arn, execution_arns, optimal_path_length) "
            "VALUES (101, %s, 'm', 'v1', 'h', 't', '{}', 1, 0, 0, %s, ARRAY[%s], 8)",
            (provider, provider, provider),
        )

    with pytest.raises(psycopg.errors.ForeignKeyViolation, match="llm_provider"):
        experiment("acme")
    store.load_providers([Provider("acme", "Acme", "oriole.providers.openai", sweep_cap=1)])
    experiment("acme")
    store.prepare()  # the registry again: the provider with an experiment stays
    assert "acme" in {r["name"] for r in store.conn.execute("SELECT name FROM providers")}


def test_0022_records_the_sweeps_of_earlier_experiments_and_no_comment_makes_one(empty_database):
    """Before 0022 membership was read from the comment; after it, a planned sweep's experiment (its agent id and its
    tag both name the sweep) is recorded as the sweep's, and a free comment naming a sweep records nothing."""
    store = Store(db.connect(empty_database))
    store.apply_migrations([f for f in migration_files() if f.name < "0022"], views=())
    conn = store.conn
    store.load_providers(PROVIDERS.values())
    store.load_mazes(mazeset.maze_set()[:1])
    conn.execute("INSERT INTO sweeps (id, planned, run_input) VALUES ('lad_der', 2, '{}')")
    rows = {
        "member": ("lad_der/0123456789ab/r1", "sweep:lad_der pilot"),
        "free comment": (None, "sweep:lad_der"),
        "agent id only": ("lad_der/0123456789ab/r2", "pilot"),
        "like pattern": ("ladXder/0123456789ab/r1", "sweep:ladXder"),  # _ is no wildcard here
        "unplanned sweep": ("other/0123456789ab/r1", "sweep:other"),
    }
    ids = {
        name: conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, current_x, current_y, origin_execution_arn, execution_arns, agent_id, comment, "
            "optimal_path_length) "
            "VALUES (%s, 'baseline', 'random', 'v1', 'h', 't', '{}', 1, 0, 0, %s, ARRAY[%s], %s, %s, 1) RETURNING id",
            (mazeset.maze_set()[0].id, f"arn:{name}", f"arn:{name}", agent, comment),
        ).fetchone()["id"]
        for name, (agent, comment) in rows.items()
    }
    store.apply_migrations()
    recorded = {r["id"]: r["sweep_id"] for r in conn.execute("SELECT id, sweep_id FROM experiments")}
    assert {name: recorded[i] for name, i in ids.items()} == {
        "member": "lad_der",
        "free comment": None,
        "agent id only": None,
        "like pattern": None,
        "unplanned sweep": None,
    }


def test_0030_live_status_reads_only_the_running_experiments(empty_database):
    """experiment_status WHERE status = 'running' (oriole ls --running, oriole watch) reaches the partial index of
    the running experiments, not a scan of every experiment (bench/bench_views.py times it at 40,000)."""
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    store.conn.execute("SET enable_seqscan = off")  # an empty table: the planner would scan it whatever the indexes
    plan = store.conn.execute("EXPLAIN SELECT * FROM experiment_status WHERE status = 'running'").fetchall()
    assert "experiments_running_idx" in "\n".join(row["QUERY PLAN"] for row in plan)


def test_0038_a_selection_by_tag_reads_the_tagged_experiments_through_the_index_of_the_comments_words(empty_database):
    """compare_experiments(tag => ...) and every selection by tag reach experiments_tags_idx, in the plan made for
    any tag (what comparison_scope's body gets) as well as with the tag written out: the index's expression is
    comment_tags' own, and this fails when views/comment_tags.sql and migration 0038 part (bench/bench_views.py times
    it at 40,000)."""
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    # an empty table: the planner would scan it, or walk any index whole, whatever the indexes; a bitmap scan needs
    # an index the condition reaches
    store.conn.execute("SET enable_seqscan = off")
    store.conn.execute("SET enable_indexscan = off")
    store.conn.execute("SET plan_cache_mode = force_generic_plan")
    store.conn.execute("PREPARE tagged (text[]) AS SELECT * FROM chosen_experiments(tags => $1)")
    for query in (
        "EXPLAIN SELECT * FROM chosen_experiments(tags => ARRAY['sweep:a'])",
        "EXPLAIN EXECUTE tagged('{a}')",
    ):
        plan = "\n".join(row["QUERY PLAN"] for row in store.conn.execute(query).fetchall())
        assert "experiments_tags_idx" in plan, plan


def test_0039_deleting_an_experiment_looks_for_its_replays_through_an_index(empty_database):
    """The reference check of experiments.replay_of, run for every experiment deleted (a sweep's 1,000 in one
    statement), reaches the partial index of the replays instead of scanning every experiment."""
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    store.conn.execute("SET enable_seqscan = off")  # an empty table: the planner would scan it whatever the indexes
    store.conn.execute("SET enable_indexscan = off")  # nor walk another index whole
    plan = store.conn.execute("EXPLAIN SELECT 1 FROM experiments WHERE replay_of = 42").fetchall()
    assert "experiments_replay_of_idx" in "\n".join(row["QUERY PLAN"] for row in plan)


def test_the_ending_columns_comments_name_every_ending_and_cause(empty_database):
    """Two migrations rewrote these comments from their own sides; the last one applied must still name them all."""
    store = Store(db.connect(empty_database))
    store.apply_migrations()
    comments = {
        row["column"]: row["comment"]
        for row in store.conn.execute(
            "SELECT attname AS column, col_description(attrelid, attnum) AS comment FROM pg_attribute "
            "WHERE attrelid = 'experiments'::regclass AND attname IN ('ending', 'ending_cause')"
        ).fetchall()
    }
    assert [e for e in Ending if e.value not in comments["ending"]] == []
    assert [c for c in EndingCause if c.value not in comments["ending_cause"]] == []
