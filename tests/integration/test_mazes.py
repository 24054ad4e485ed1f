"""Mazes in the database: seeded names drawn and stored on first use, imported files, through the real state
machine and the CLI."""

from __future__ import annotations

import json

from tests.integration.conftest import baseline
from tests.integration.test_local_state_machine import assert_invariants
from tests.unit.test_mazes_seeded_and_files import PUBLIC_STYLE, bfs_length


def maze_rows(store, **where) -> list[dict]:
    column, value = next(iter(where.items()))
    return store.conn.execute(f"SELECT * FROM mazes WHERE {column} = %s", (value,)).fetchall()


def count(store, table: str) -> int:
    return store.conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()["n"]


def test_a_seeded_maze_is_drawn_stored_once_and_played_on_its_shortest_path(local):
    first = local.run(baseline("oracle", "perfect-13@5")).as_json()
    again = local.run(baseline("oracle", "perfect-13@5")).as_json()
    [row] = maze_rows(local.store, name="perfect-13@5")
    assert row["source"] == "generated" and row["generator_version"] == "1" and row["seed"] == 5 and row["id"] >= 1000
    assert first["status"] == again["status"] == "succeeded"
    assert first["actions"] == again["actions"] == row["shortest_path_length"] == first["shortest_path_length"]
    assert first["maze"] == "perfect-13@5"
    assert_invariants(local.store, first["experiment_id"])


def test_a_bad_seeded_name_is_refused_without_a_row(local):
    before = count(local.store, "experiments"), count(local.store, "mazes")
    result = local.run(baseline("oracle", "perfect-12@5"))
    assert result.summary is None and result.execution["error"] == "UnknownMaze"
    assert (count(local.store, "experiments"), count(local.store, "mazes")) == before


def test_an_imported_maze_is_stored_once_and_played_on_its_shortest_path(cli, local, tmp_path):
    path = tmp_path / "public.json"
    path.write_text(json.dumps({**PUBLIC_STYLE, "name": "public-small"}))
    imported = cli("mazes", "import", str(path), "--start", "1,1")
    assert imported.exit_code == 0, imported.output
    assert "imported public-small" in imported.stdout
    again = cli("mazes", "import", str(path), "--start", "1,1", "--name", "other-name")
    assert again.exit_code == 0 and "already stored as public-small" in again.stdout
    [row] = maze_rows(local.store, name="public-small")
    assert row["source"] == "imported" and row["seed"] is None and row["shortest_path_length"] == 4
    run = local.run(baseline("oracle", "public-small")).as_json()
    assert run["status"] == "succeeded" and run["actions"] == 4 == bfs_length_of(row)
    listing = cli("mazes", "list")
    assert "imported" in listing.stdout and "public-small" in listing.stdout


def test_a_maze_file_that_cannot_be_played_is_refused_without_a_row(cli, local, tmp_path):
    before = count(local.store, "mazes")
    path = tmp_path / "walled.json"
    path.write_text(json.dumps(PUBLIC_STYLE))
    for option, message in (("0,0", "is a wall"), ("7,7", "outside")):
        refused = cli("mazes", "import", str(path), "--start", option)
        assert refused.exit_code == 2 and message in refused.stderr
    unreachable = tmp_path / "cut.txt"
    unreachable.write_text("#####\n#S#G#\n#####\n")
    refused = cli("mazes", "import", str(unreachable))
    assert refused.exit_code == 2 and "not reachable" in refused.stderr
    assert count(local.store, "mazes") == before


def test_mazes_show_draws_a_seeded_maze_before_it_is_stored(cli):
    shown = cli("mazes", "show", "dense-15@3")
    assert shown.exit_code == 0 and "not stored yet" in shown.stdout and "S" in shown.stdout


def bfs_length_of(row: dict) -> int | None:
    from dataclasses import fields

    from oriole.store.mazes import MazeRow

    return bfs_length(MazeRow(**{field.name: row[field.name] for field in fields(MazeRow)}).stored().maze)


def test_every_stored_maze_has_the_shortest_path_an_independent_search_finds(local):
    local.run(baseline("oracle", "dense-21@11"))
    rows = local.store.conn.execute("SELECT * FROM mazes").fetchall()
    assert len(rows) >= 19 and {r["source"] for r in rows} >= {"shipped", "generated"}
    for row in rows:
        assert bfs_length_of(row) == row["shortest_path_length"], row["name"]


def test_the_comparison_groups_by_family_and_size_and_says_how_many_mazes_a_rate_rests_on(cli, local):
    tag = "samples-view"
    for name in ("perfect-9@1", "perfect-9@2", "perfect-9@3"):
        for _ in range(2):
            local.run({**baseline("explorer", name), "comment": tag})
    local.run({**baseline("explorer", "perfect-11@1"), "comment": tag})
    rows = json.loads(cli("report", "--tag", tag, "--format", "json").stdout)
    by_size = {row["maze_size"]: row for row in rows}
    assert set(by_size) == {"9x9", "11x11"} and {row["maze_family"] for row in rows} == {"perfect"}
    nine = by_size["9x9"]
    assert (nine["runs"], nine["mazes"]) == (6, 3)
    assert nine["maze_ci_low"] is not None and nine["maze_ci_low"] <= nine["success_rate"] <= nine["maze_ci_high"]
    assert by_size["11x11"]["mazes"] == 1 and by_size["11x11"]["maze_ci_low"] is None  # one maze: nothing to resample
    table = cli("report", "--tag", tag, "--wide").stdout
    assert "maze CI" in table and "9x9" in table
