"""Migrations on a real PostgreSQL: a fresh database reaches the schema, reruns change nothing."""

import threading

import pytest

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
