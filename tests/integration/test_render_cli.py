"""`oriole render` on a run that went through the local state machine: a scripted model bumps into a wall,
walks two tiles and says things that must stay text in the HTML animation."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest
from PIL import Image
from typer.testing import CliRunner

from oriole.store import db
from oriole_workstation import render
from oriole_workstation.cli import app
from oriole_workstation.results import Results
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls
from tests.pictures import Page, svg_path

EVIL = "<script>alert('pwned')</script>"
PATH = [(1, 1), (1, 1), (1, 2), (1, 3)]  # perfect-7 from the start: north is a wall, then south twice


@pytest.fixture(scope="module")
def scripted_run(local) -> int:
    script = [
        tool_calls(
            ("move_north", {"reasoning": "<b>up</b> & away"}),
            ("move_south", {"reasoning": "down"}),
            content=EVIL + " heading south",
        ),
        text_reply("Turn over </script><img src=x onerror=alert(1)>"),
        tool_calls(("move_south", {})),
    ]
    with ScriptedOllama(*script) as server:
        result = local.run(
            {
                "mazeId": "perfect-7",
                "llmProvider": "ollama",
                "modelName": "scripted",
                "config": {"endpoint": server.url, "maxMoves": 3},
            }
        )
    assert result.summary.status == "timed_out" and result.summary.failed_moves == 1
    return result.summary.experiment_id


@pytest.fixture
def cli(database_url, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    return lambda *args: CliRunner().invoke(app, ["render", *map(str, args)])


def centres(database_url: str, experiment_id: int) -> list[tuple[float, float]]:
    """Where the path's points are drawn: the tile centres of PATH under the picture's header."""
    with db.connect(database_url) as conn:
        at = render.layout(render.Run.from_record(Results(conn).experiment_run(experiment_id)))
    assert at.cell * 7 >= 480  # a 7x7 maze is drawn large
    return [at.centre(p) for p in PATH]


def test_render_writes_a_png_and_an_svg_with_the_path(cli, scripted_run, database_url, tmp_path):
    outcome = cli(scripted_run, "--dir", tmp_path)
    assert outcome.exit_code == 0, outcome.output
    image = Image.open(tmp_path / f"experiment-{scripted_run}.png")
    image.load()
    tiles = {render.OPEN_SEEN, render.OPEN_UNSEEN, render.WALL_SEEN, render.WALL_UNSEEN}
    drawn = centres(database_url, scripted_run)
    for x, y in drawn[2:]:  # the start (and the bump back onto it) is under its badge
        assert "#{:02x}{:02x}{:02x}".format(*image.getpixel((int(x), int(y)))) not in tiles
    root = ET.parse(tmp_path / f"experiment-{scripted_run}.svg").getroot()
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert svg_path(root) == drawn
    assert [b.get("data-step") for b in root.findall(".//s:path[@class='bump']", ns)] == ["1"]


def test_render_animate_writes_a_gif_and_an_html_page_that_keeps_model_text_as_text(cli, scripted_run, tmp_path):
    outcome = cli(scripted_run, "--animate", "-o", tmp_path / "run.gif", "-o", tmp_path / "run.html")
    assert outcome.exit_code == 0, outcome.output
    assert Image.open(io.BytesIO((tmp_path / "run.gif").read_bytes())).n_frames == len(PATH)
    page_text = (tmp_path / "run.html").read_text()
    assert EVIL not in page_text and "<img src=x" not in page_text and "<b>up</b>" not in page_text
    page = Page()
    page.feed(page_text)
    data = json.loads(page.scripts[0][1])
    assert data["modelText"]["1"] == EVIL + " heading south\nTurn over </script><img src=x onerror=alert(1)>"
    assert data["steps"][0]["reasoning"] == "<b>up</b> & away" and data["steps"][0]["success"] is False


def test_the_old_spelling_replay_still_animates_and_names_the_new_one(cli, scripted_run, tmp_path):
    outcome = cli(scripted_run, "--replay", "--dir", tmp_path)
    assert outcome.exit_code == 0, outcome.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"experiment-{scripted_run}.gif",
        f"experiment-{scripted_run}.html",
    ]
    assert "--replay is now --animate" in outcome.stderr
    assert "--replay" not in CliRunner().invoke(app, ["render", "--help"]).output  # hidden: one name in help


def test_render_refuses_unknown_formats_and_experiments(cli, scripted_run, tmp_path):
    bad = cli(scripted_run, "-o", tmp_path / "run.bmp")
    assert bad.exit_code == 2 and "cannot write .bmp" in bad.output
    missing = cli(987654, "--dir", tmp_path)
    assert missing.exit_code == 2 and "no experiment 987654 (nearest: " in missing.output
