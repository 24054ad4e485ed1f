"""Migrations on a real PostgreSQL: a fresh database reaches the schema, reruns change nothing."""

import threading

import pytest
from psycopg.types.json import Jsonb

from oriole import db, mazeset
from oriole.store import MazeSetMismatch, MigrationChanged, Store, migration_files

STABLE_COLUMNS = {
    "mazes": {"id", "name", "width", "height", "start_x", "start_y", "goal_x", "goal_y", "shortest_path_length"},
    "experiments": {"id", "maze_id", "llm_provider", "model_name", "prompt_version", "status", "goal_found",
                    "started_at", "completed_at", "failure_reason", "config", "execution_arns"},
    "turns": {"experiment_id", "turn_number", "input_tokens", "output_tokens"},
    "actions": {"experiment_id", "step_number", "turn_number", "action_type", "from_x", "from_y", "to_x", "to_y",
                "success"},
}


def schema(store: Store) -> list[tuple]:
    rows = store.conn.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_schema = 'public' ORDER BY table_name, column_name").fetchall()
    return [tuple(r.values()) for r in rows]


def primary_key(store: Store, table: str) -> list[str]:
    rows = store.conn.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY (i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary "
        "ORDER BY array_position(i.indkey, a.attnum)", (table,)).fetchall()
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


def test_0005_backfills_the_ending_and_the_aggregates_of_rows_stored_before_it(empty_database):
    """Rows closed before the ending existed get it by the same rule as progress.ending_category; their
    aggregates are recounted from their actions and turns."""
    store = Store(db.connect(empty_database))
    before, after = [f for f in migration_files() if f.name < "0005"], migration_files()
    store.apply_migrations(before)
    conn = store.conn
    maze = mazeset.get_maze(101)  # stored with the columns of the schema before 0005 (later ones add more)
    conn.execute("INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, "
                 "shortest_path_length, generator, seed, content_hash, grid) VALUES "
                 "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                 (maze.id, maze.name, maze.family, maze.maze.width, maze.maze.height, *maze.maze.start,
                  *maze.maze.goal, maze.shortest_path_length, maze.generator, maze.seed, maze.content_hash,
                  Jsonb(maze.maze.grid)))
    endings = {("running", None): None, ("succeeded", None): "success", ("timed_out", "max_moves reached"): "agent",
               ("failed", "agent_stalled: 3 turns in a row"): "agent", ("failed", "ModelTimeout: slow"): "error",
               ("aborted", "execution ABORTED: stopped"): "error"}
    ids = {}
    for n, (status, reason) in enumerate(endings, 1):
        ids[status, reason] = conn.execute(
            "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, prompt_text, "
            "config, seed, status, current_x, current_y, completed_at, failure_reason, origin_execution_arn, "
            "execution_arns) VALUES (101, 'baseline', 'random', 'v1', 'h', 't', '{}', 1, %s, 0, 0, "
            "CASE WHEN %s <> 'running' THEN now() END, %s, %s, ARRAY[%s]) RETURNING id",
            (status, status, reason, f"arn:{n}", f"arn:{n}")).fetchone()["id"]
    walked = ids["succeeded", None]
    start = mazeset.get_maze(101).maze.start
    conn.execute("INSERT INTO turns (experiment_id, turn_number, first_step, action_count, model_calls, latency_ms, "
                 "end_reason, started_at) VALUES (%s, 1, 1, 3, 2, 70, 'action_budget', now())", (walked,))
    for step, to in enumerate([(start[0] + 1, start[1]), start, (start[0] + 1, start[1])], 1):
        conn.execute("INSERT INTO actions (experiment_id, step_number, turn_number, action_type, from_x, from_y, "
                     "to_x, to_y, success) VALUES (%s, %s, 1, 'move_east', 0, 0, %s, %s, true)", (walked, step, *to))
    assert store.apply_migrations(after)[0] == "0005_results_and_progress"
    rows = {r["id"]: r for r in conn.execute("SELECT * FROM experiments").fetchall()}
    assert {key: rows[i]["ending"] for key, i in ids.items()} == endings
    assert (rows[walked]["unique_tiles_visited"], rows[walked]["model_calls"], rows[walked]["latency_ms"]) == (2, 2, 70)
    assert rows[walked]["last_action_at"] is not None and rows[ids["running", None]]["unique_tiles_visited"] == 1


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
