"""What a researcher reads fits where it is read: on a terminal of 80, 100 or 120 columns the tables fit, shortened
by their rule (never an id or a count), and piped every cell is whole, no line wrapped or padded."""

from __future__ import annotations

import re
import uuid

import pytest

LABEL = "a random walker with a long label @ gpu-box-7"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def sweep_id(database_url, tmp_path_factory):
    """A sweep with a long agent label and a seeded maze, run once for the module."""
    from typer.testing import CliRunner

    from oriole_workstation.cli import app

    sweep = f"widths-{uuid.uuid4().hex[:6]}"
    folder = tmp_path_factory.mktemp("widths")
    file = folder / "widths.toml"
    file.write_text(
        f'id = "{sweep}"\nmazes = ["perfect-7", "perfect-11@1234567890"]\nrepetitions = 1\n'
        f'configs = [{{ maxMoves = 40 }}]\n[[agents]]\nlabel = "{LABEL}"\nprovider = "baseline"\nmodel = "random"\n'
        '[[agents]]\nprovider = "baseline"\nmodel = "explorer"\n'
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DATABASE_URL", database_url)
        patch.setenv("ORIOLE_HOME", str(folder))
        ran = CliRunner().invoke(app, ["sweep", str(file), "--quiet"])
    assert ran.exit_code == 0, ran.output
    return sweep


def shown(cli, monkeypatch, columns: int | None, *args: str) -> list[str]:
    """The command's lines on a terminal of ``columns`` (None: piped), escapes taken out."""
    if columns is None:
        monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    else:
        monkeypatch.setenv("TTY_COMPATIBLE", "1")
        monkeypatch.setenv("COLUMNS", str(columns))
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return ANSI.sub("", result.stdout).splitlines()


@pytest.mark.parametrize("columns", [80, 100, 120])
@pytest.mark.parametrize("command", [("ls",), ("report",), ("report", "--pivot"), ("report", "--pairs")])
def test_on_a_terminal_every_table_fits_and_keeps_its_ids_and_counts(sweep_id, cli, monkeypatch, columns, command):
    lines = shown(cli, monkeypatch, columns, *command, "--sweep", sweep_id)
    assert max(map(len, lines)) <= columns, "\n".join(lines)
    if command == ("ls",):
        ids = [line.split()[0] for line in lines[1:]]
        assert len(ids) == 4 and all(i.isdigit() for i in ids)  # every id, whole
        assert all(re.search(r"\b\d+/40\b", line) for line in lines[1:])  # every count of the action budget
    elif command == ("report", "--pairs"):
        assert any(re.search(r"\b1 on 1\b.*\(-\)", line) for line in lines[1:]), "\n".join(lines)  # counts, a-b
    else:
        assert any("/1" in line or " 1  " in line for line in lines[1:])  # the runs


@pytest.mark.parametrize(
    "command", [("ls",), ("report",), ("report", "--pivot"), ("report", "--pairs"), ("mazes", "show", "perfect-11")]
)
def test_piped_every_cell_is_whole_and_no_line_padded(sweep_id, cli, monkeypatch, command):
    lines = shown(cli, monkeypatch, None, *command, *(("--sweep", sweep_id) if command[0] != "mazes" else ()))
    assert not [line for line in lines if line != line.rstrip()], "a line ends with spaces"
    assert "…" not in "\n".join(lines)
    if command[0] == "mazes":
        assert re.search(r"hash [0-9a-f]{12}$", lines[0])  # one line, the hash whole
    else:
        assert any(LABEL in line for line in lines)
    if command == ("ls",):
        assert any("perfect-11@1234567890" in line for line in lines)


def test_a_run_prints_no_padded_line(cli):
    result = cli("run", "--maze", "perfect-7", "--agent", "oracle")
    assert result.exit_code == 0, result.output
    assert not [line for line in result.stdout.splitlines() if line != line.rstrip()]
    assert result.stdout.splitlines()[0].startswith("experiment ")
