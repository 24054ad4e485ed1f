"""`oriole report --format markdown|latex` over real runs: the cells agree with the database, the LaTeX compiles
with pdflatex (Debian's TeX Live, installed by the Makefile) whatever an agent is called."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from markdown_it import MarkdownIt
from psycopg.rows import tuple_row

from tests.integration.conftest import baseline
from tests.unit.test_paper_tables import read_back

TAG = "paper-tables"
HOSTILE = "Ünï 中文 50% $x^2$ & #1 {a}_b ~ \\end{document} <b>"


@pytest.fixture(scope="module")
def runs(local) -> list[int]:
    """The oracle and a short random walk, twice on each of two mazes with the same two seeds (so they pair); the
    random walk labelled with every character LaTeX or Markdown would read as syntax, and some beyond ASCII."""
    ids = [
        local.run(baseline(agent, maze, maxMoves=12, seed=seed) | {"comment": TAG}).as_json()["experiment_id"]
        for agent in ("oracle", "random")
        for maze in ("perfect-7", "perfect-9")
        for seed in (1, 2)
    ]
    local.store.conn.execute(
        "UPDATE experiments SET agent_label = %s WHERE id = ANY(%s) AND model_name = 'random'", (HOSTILE, ids)
    )
    return ids


def test_markdown_cells_are_the_databases_counts(runs, cli, local):
    outcome = cli("report", "--tag", TAG, "--format", "markdown")
    assert outcome.exit_code == 0, outcome.output
    comparison = read_back(MarkdownIt("commonmark").enable("table").render(outcome.stdout)).tables[1]
    header, rows = comparison[0], [dict(zip(comparison[0], row, strict=True)) for row in comparison[1:]]
    expected = local.store.conn.cursor(row_factory=tuple_row).execute(
        "SELECT coalesce(agent_label, llm_provider || '/' || model_name), maze_size, count(*), "
        "count(*) FILTER (WHERE ending = 'success') FROM experiment_results WHERE experiment_id = ANY(%s) "
        "GROUP BY 1, 2",
        (runs,),
    )
    assert "n" in header and "95% CI mazes" in header
    assert sorted((r["agent"], r["size"], int(r["n"]), int(r["successes"])) for r in rows) == sorted(expected)
    oracle = next(r for r in rows if r["agent"] == "baseline/oracle")
    assert (oracle["success (%)"], oracle["95% CI Wilson"]) == ("100.0", "34.2\N{EN DASH}100.0")  # 2 of 2
    assert oracle["95% CI mazes"] == "-"  # one maze per family and size: nothing to resample


def test_the_paired_comparisons_are_the_tables_third_and_say_what_pairs_does(runs, cli):
    as_json = json.loads(cli("report", "--tag", TAG, "--pairs", "--format", "json").stdout)
    everything, alone = (
        read_back(MarkdownIt("commonmark").enable("table").render(cli(*command).stdout)).tables
        for command in (
            ("report", "--tag", TAG, "--format", "markdown"),
            ("report", "--tag", TAG, "--pairs", "--format", "markdown"),
        )
    )
    assert len(everything) == 3 and alone == everything[2:]
    header, *rows = alone[0]
    assert header[:4] == ["mazes", "a", "b", "pairs"]
    markdown = cli("report", "--tag", TAG, "--pairs", "--format", "markdown").stdout
    assert "SELECT \\* FROM paired\\_comparison(" in markdown  # the caption names the pairs' own query
    shown = sorted((row[3], round(float(row[7]), 4)) for row in rows)  # "pairs on mazes", McNemar
    assert shown and shown == sorted((f"{p['pairs']} on {p['mazes']}", round(p["mcnemar_p"], 4)) for p in as_json)


def test_latex_compiles_with_pdflatex_and_booktabs(runs, cli, tmp_path):
    outcome = cli("report", "--tag", TAG, "--format", "latex")
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stdout.count(r"\toprule") == 3  # the leaderboard, the comparison, the paired comparisons
    document = tmp_path / "tables.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n\\begin{document}\n"
        + outcome.stdout
        + "\\end{document}\n",
        encoding="utf-8",
    )
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is installed by the Makefile (make test): TeX Live's texlive-latex-recommended"
    done = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", document.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    log = (tmp_path / "tables.log").read_text(encoding="latin-1")
    assert not re.search(r"^! ", log, re.M) and "Output written on tables.pdf (" in log
    assert "U+4E2D" in outcome.stdout and r"\textbackslash{}end\{document\}" in outcome.stdout
