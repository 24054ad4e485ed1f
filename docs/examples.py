"""The worked examples of the README and the docs, made by the commands the pages name, from the committed sweep
files, so that no page shows a table, a leaderboard, a figure or a timing that a fresh run would not give.

    .venv/bin/python docs/examples.py           # every example, each in a fresh local database (a few minutes)
    .venv/bin/python docs/examples.py ladder    # one of them

Each example's commands run, as a reader would type them, in a fresh database; their output, as a pipe receives it
(nothing cut to a terminal's width), is written between ``<!-- example: NAME -->`` and ``<!-- /example -->`` in
every page that shows it, after a ``$ command`` line each, with how long the run took on the machine that wrote it.
A figure an example draws is copied where the pages show it. ``make test-examples``
(``tests/integration/test_doc_examples.py``) runs the same commands in a fresh database and fails when a page, or
a figure, and the run disagree (timings and clock times aside, which no two machines share); the README's report
picture (``docs/report_image.py``) is checked against the same run's comparison.

A sweep example also records what each of its experiments did (``docs/example-runs/NAME.jsonl``: one line per
experiment, the deterministic columns of ``oriole export --sweep ID --format jsonl``). ``make test`` checks the
sweeps cheaply from it: the sweep file still plans those seeds, a sample of its cells run again gives the same
lines, and the page's table is what those lines add up to; ``make test-examples`` still reruns them whole.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
PAGES = (
    CHECKOUT / "README.md",
    CHECKOUT / "docs" / "tutorial" / "first-comparison.md",
    CHECKOUT / "docs" / "explanation" / "statistics.md",
    CHECKOUT / "docs" / "reference" / "results.md",
)
RUNS = CHECKOUT / "docs" / "example-runs"  # each sweep example's experiments, one JSON line each
# What a sweep example's record keeps of each experiment: what the same file, run again anywhere, gives again (its id,
# times, code version and database do not come back).
RUN_COLUMNS = (
    "agent_id",
    "llm_provider",
    "model_name",
    "maze",
    "maze_family",
    "maze_size",
    "maze_hash",
    "seed",
    "status",
    "ending",
    "ending_cause",
    "goal_first_seen_step",
    "goal_reached_step",
    "actions",
    "moves",
    "failed_moves",
    "unique_tiles_visited",
    "path_length",
    "optimal_path_length",
    "path_efficiency",
    "spl",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
BLOCK = re.compile(r"(<!-- example: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /example -->)", re.S)
TIMING = "# took "  # the line that says how long an example's run took
# What no two runs share, masked when a page and a fresh run are compared: how long something took, and how long ago.
_VARYING = (
    (re.compile(r"^# took .*$", re.M), "# took ..."),
    (re.compile(r"(duration\s+)\d+(\.\d+)? s"), r"\1... s"),
    (re.compile(r"\b\d+(\.\d+)? (s|min|h) ago\b"), "... ago"),
    (re.compile(r" {2,}"), "  "),  # the columns' padding, which a masked cell's width moves
)


@dataclass(frozen=True)
class Example:
    """Commands a page shows with their output (``shown``), after others it does not show (``setup``); a figure
    the run draws (``figure``: a command that writes PNGs into a folder, and the file it is copied to)."""

    name: str
    shown: tuple[str, ...]
    setup: tuple[str, ...] = ()
    timed: bool = False
    figure: tuple[str, Path] | None = None
    sweep: str | None = None  # the sweep whose experiments the example records (docs/example-runs/NAME.jsonl)

    @property
    def record(self) -> Path:
        return RUNS / f"{self.name}.jsonl"

    @property
    def sweep_file(self) -> Path:
        """The committed sweep file the example runs (its ``oriole sweep FILE`` command)."""
        words = next(shlex.split(c) for c in self.shown if c.startswith("oriole sweep "))
        return CHECKOUT / words[2]


EXAMPLES = (
    Example("run", ("oriole run --maze perfect-11 --agent explorer",)),
    Example(
        "ls",
        ("oriole ls",),
        setup=("oriole run --maze perfect-11 --agent explorer", "oriole run --maze perfect-15 --agent random --seed 7"),
    ),
    Example(
        "ladder",
        ("oriole sweep sweeps/baseline-ladder.toml --quiet", "oriole report --sweep baseline-ladder --pivot"),
        timed=True,
        figure=(
            "oriole render --sweep baseline-ladder --agent baseline/explorer --maze perfect-21 --dir {folder}",
            CHECKOUT / "docs" / "explorer-perfect-21.png",
        ),
        sweep="baseline-ladder",
    ),
    Example("samples", ("oriole sweep sweeps/maze-samples.toml --quiet",), timed=True, sweep="maze-samples"),
    Example(
        "report",
        ("oriole sweep sweeps/tutorial.toml --quiet", "oriole report --sweep tutorial --pairs"),
        timed=True,
        sweep="tutorial",
    ),
)
BY_NAME = {example.name: example for example in EXAMPLES}


def oriole(command: str, env: Mapping[str, str]) -> str:
    """Run one ``oriole ...`` command line from the checkout, as a pipe reads it: its standard output."""
    words = shlex.split(command)
    program = Path(sys.executable).parent / words[0]
    done = subprocess.run([str(program), *words[1:]], cwd=CHECKOUT, env=dict(env), capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def run(example: Example, env: Mapping[str, str], figures: Path | None = None) -> str:
    """The example's block: each shown command after ``$``, its output, and how long the first one took (timed);
    with ``figures``, the figure it draws written into that folder (its PNGs, lowest experiment first)."""
    for command in example.setup:
        oriole(command, env)
    parts = []
    for number, command in enumerate(example.shown):
        started = time.monotonic()
        output = oriole(command, env)
        parts.append(f"$ {command}\n{output}")
        if example.timed and number == 0:
            seconds = round(time.monotonic() - started)
            parts.append(f"{TIMING}{seconds // 60} min {seconds % 60} s on {machine()}\n")
    if figures is not None and example.figure is not None:
        oriole(example.figure[0].format(folder=figures), env)
    return "".join(parts)


def run_line(experiment: Mapping[str, object]) -> str:
    """One experiment as its example's record holds it: the deterministic columns (``RUN_COLUMNS``), as JSON."""
    return json.dumps({column: experiment[column] for column in RUN_COLUMNS})


def recorded_runs(example: Example, env: Mapping[str, str]) -> str:
    """The record of a sweep example's experiments, from ``oriole export``: a line each, by agent id."""
    folder = Path(env["ORIOLE_HOME"]) / "export"
    oriole(f"oriole export --sweep {example.sweep} --format jsonl -o {folder}", env)
    with (folder / "experiments.jsonl").open(encoding="utf-8") as exported:
        experiments = sorted((json.loads(line) for line in exported), key=lambda e: str(e["agent_id"]))
    return "".join(run_line(e) + "\n" for e in experiments)


def drawn(folder: Path) -> Path:
    """The first picture a figure's command wrote (experiment-N.png, the lowest N)."""
    return min(folder.glob("experiment-*.png"), key=lambda path: int(path.stem.rsplit("-", 1)[1]))


def machine() -> str:
    """The machine that ran an example, as a page says it: its cores and how busy it was (the load average over
    the last 15 minutes), since a shared machine runs a sweep several times slower than a quiet one."""
    return f"{os.cpu_count()} cores, load average {os.getloadavg()[2]:.1f}"


def normalized(block: str) -> str:
    """A block with what no two runs share masked (``_VARYING``)."""
    for pattern, mask in _VARYING:
        block = pattern.sub(mask, block)
    return block


def blocks(text: str) -> dict[str, str]:
    """Every example block of a page, by name: its fenced content."""
    return {match["name"]: _unfenced(match["body"]) for match in BLOCK.finditer(text)}


def shown_in_pages() -> dict[str, list[tuple[Path, str]]]:
    """Every example block of every page: name -> [(page, content)]."""
    found: dict[str, list[tuple[Path, str]]] = {}
    for page in PAGES:
        for name, body in blocks(page.read_text(encoding="utf-8")).items():
            found.setdefault(name, []).append((page, body))
    return found


def _unfenced(body: str) -> str:
    lines = body.strip("\n").splitlines()
    return "\n".join(lines[1:-1]) + "\n" if lines and lines[0].startswith("```") else body


def write(name: str, block: str, pages: Iterable[Path] = PAGES) -> list[Path]:
    """Put ``block`` in every page that shows example ``name``; the pages changed."""
    changed = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        new = BLOCK.sub(
            lambda match: (
                match.group(1) + f"```\n{block}```\n" + match.group(4) if match["name"] == name else match.group(0)
            ),
            text,
        )
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def fresh_home() -> dict[str, str]:
    """The environment of a reader with a fresh local database: its own ORIOLE_HOME, no DATABASE_URL, a pipe."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "COLUMNS", "TTY_COMPATIBLE")}
    return {**env, "ORIOLE_HOME": tempfile.mkdtemp(prefix="oriole-example-")}


def main(names: list[str]) -> None:
    for name in names or list(BY_NAME):
        example = BY_NAME[name]
        env = fresh_home()
        figures = Path(env["ORIOLE_HOME"]) / "figures"
        figures.mkdir()
        try:
            block = run(example, env, figures)
            changed = write(name, block)
            if example.sweep is not None:
                RUNS.mkdir(exist_ok=True)
                example.record.write_text(recorded_runs(example, env), encoding="utf-8")
                changed.append(example.record)
            if example.figure is not None:
                shutil.copyfile(drawn(figures), example.figure[1])
                changed.append(example.figure[1])
        finally:
            oriole("oriole db stop", env)
            shutil.rmtree(env["ORIOLE_HOME"], ignore_errors=True)
        print(f"{name}: wrote {', '.join(str(p.relative_to(CHECKOUT)) for p in changed) or 'nothing new'}")


if __name__ == "__main__":
    main(sys.argv[1:])
