"""The docs site (issue 22): it builds with ``mkdocs build --strict`` (a missing page, link, anchor or included file
fails it); its reference holds every CLI command and option, every catalog parameter, every error name and every
column (each with its comment); the examples it includes are valid inputs; the tutorial's commands run as written;
and the README stays short, its shell commands being make targets or commands these tests run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer.main

from oriole import catalog, inputs
from oriole.core import sweep_plan
from oriole.errors import OrioleError
from oriole_workstation import sweep_runs

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "tutorial" / "first-comparison.md"
BIN = Path(sys.executable).parent


def fenced(text: str, languages: tuple[str, ...] = ("bash",)) -> list[str]:
    """The command lines of a Markdown text's fenced blocks in those languages (comments after `#` dropped)."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    lines = [line for language, body in blocks if language in languages for line in body.splitlines()]
    return [line.split("  #")[0].strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def site(tmp_path_factory, server_url) -> Path:
    folder = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DATABASE_URL": server_url, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-3000:]
    return folder


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_every_cli_command_and_option_is_in_the_reference(site):
    from oriole_workstation.cli import app

    html = page(site, "reference/cli")
    pending, seen = [("oriole", typer.main.get_command(app))], 0
    while pending:
        name, command = pending.pop()
        assert f"<code>{name}</code>" in html, f"{name} is missing from the CLI reference"
        for param in command.params:
            if getattr(param, "hidden", False):  # an old spelling: the vocabulary page's (below)
                continue
            names = [param.metavar or param.name] if param.param_type_name == "argument" else param.opts
            for option in [*names, *param.secondary_opts]:
                assert option.upper() in html.upper(), f"{name} {option} is missing from the CLI reference"
                seen += 1
        pending += [(f"{name} {sub}", cmd) for sub, cmd in getattr(command, "commands", {}).items()]
    assert seen > 50


def test_every_hidden_option_is_an_old_spelling_the_vocabulary_page_names():
    """A hidden option is kept only so that a renamed one still works (issue 34): the vocabulary page says so."""
    from oriole_workstation.cli import app

    text = (DOCS / "reference" / "glossary.md").read_text(encoding="utf-8")
    pending, hidden = [("oriole", typer.main.get_command(app))], []
    while pending:
        name, command = pending.pop()
        hidden += [f"`{name} {opt}" for p in command.params if getattr(p, "hidden", False) for opt in p.opts]
        pending += [(f"{name} {sub}", cmd) for sub, cmd in getattr(command, "commands", {}).items()]
    assert hidden, "no hidden option: drop this test or the vocabulary's renamed table"
    assert [h for h in hidden if h not in text] == []


# Names the action counter went by in code besides its one name per meaning (action_count, step_number,
# max_actions): none may come back as an identifier of the runtime or the workstation.
RETIRED_COUNTER_NAMES = {"max_moves", "max_steps", "step_count", "steps_taken", "moves_taken"}


def test_the_action_counter_has_one_name_per_meaning_and_the_vocabulary_maps_the_stored_ones():
    """Issue 34: one counter was called step, action_count, maxMoves and max_actions. The code says action_count
    (how many), step_number (which one) and max_actions (the cap); what is stored keeps its name (the maxMoves key,
    actions.step_number, experiment_status.max_actions), and the vocabulary page maps one to the other."""
    import dataclasses
    import tokenize

    from oriole.core.progress import Progress
    from oriole.core.tools import ActionRecord, WorldState
    from oriole.experiment_config import ExperimentConfig

    text = (DOCS / "reference" / "glossary.md").read_text(encoding="utf-8")
    [action] = [line for line in text.splitlines() if line.startswith("| action |")]
    for name in ("experiments.action_count", "actions.step_number", "experiment_status.max_actions", "`maxMoves`"):
        assert name in action, name
    assert ExperimentConfig.model_fields["max_actions"].alias == "maxMoves"
    assert "action_count" in {f.name for f in dataclasses.fields(WorldState)} & {
        f.name for f in dataclasses.fields(Progress)
    }
    assert "step_number" in {f.name for f in dataclasses.fields(ActionRecord)}
    found = []
    for path in [*(ROOT / "lambdas" / "oriole").rglob("*.py"), *(ROOT / "workstation").rglob("*.py")]:
        with tokenize.open(path) as source:
            found += [
                f"{path.relative_to(ROOT)}:{token.start[0]} {token.string}"
                for token in tokenize.generate_tokens(source.readline)
                if token.type == tokenize.NAME and token.string in RETIRED_COUNTER_NAMES
            ]
    assert found == []


def test_every_catalog_parameter_is_in_the_reference(site):
    html = page(site, "reference/parameters")
    for parameter in catalog.CATALOG:
        assert f"<code>{parameter.name}</code>" in html, parameter.name
        assert not parameter.overridable or f"<code>{parameter.key}</code>" in html, parameter.key


def test_every_error_name_and_flow_state_is_in_the_reference(site):
    from docs import generated

    errors = page(site, "reference/errors")
    assert {klass.__name__ for klass in generated.error_classes()} >= {
        "InvalidConfig",
        "SweepFileError",
        "ModelThrottled",
        "DatabaseBusy",
    }
    for klass in generated.error_classes():
        assert f"<code>{klass.__name__}</code>" in errors and issubclass(klass, OrioleError)
    machines = page(site, "reference/state-machines")
    for state in ("StartExperiment", "AgentProviderRouter", "InvokeOpenAIAgent", "PlanSweep", "OpenAIRepetitions"):
        assert state in machines


def test_every_column_is_commented_and_in_the_reference(site, database_url):
    import psycopg

    with psycopg.connect(database_url) as conn:
        rows = conn.execute(
            "SELECT c.relname, a.attname, col_description(c.oid, a.attnum) FROM pg_class c "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
            "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v')"
        ).fetchall()
    assert not [f"{table}.{column}" for table, column, comment in rows if not comment], "columns without a comment"
    html = page(site, "reference/database")
    for table, column, _comment in rows:
        assert f"<code>{table}</code>" in html and f"<code>{column}</code>" in html
    assert "repetition, gave_up or deadline" in html  # turns.end_reason, once stale
    assert "(a sweep: &lt;sweep&gt;/&lt;cell&gt;/r&lt;n&gt;)" in html  # angle brackets shown, not read as HTML


def test_the_examples_the_docs_include_are_valid():
    for path in sorted((DOCS / "examples").glob("*.json")):
        inputs.ExecutionInput.model_validate(json.loads(path.read_text(encoding="utf-8")))
    sweeps = sorted((DOCS / "examples").glob("*.toml")) + sorted((ROOT / "sweeps").glob("*.toml"))
    assert len(sweeps) >= 5
    for path in sweeps:
        assert sweep_plan.plan(sweep_runs.load(path)), path


def tutorial_commands() -> list[str]:
    return fenced(TUTORIAL.read_text(encoding="utf-8"))


def test_the_tutorial_runs_as_written(tmp_path, empty_database):
    for folder in ("docs", "sweeps"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    env = {
        **os.environ,
        "DATABASE_URL": empty_database,
        "ORIOLE_HOME": str(tmp_path / "home"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    said = {}
    for command in tutorial_commands():
        done = subprocess.run(
            command,
            shell=True,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            executable="/bin/bash",
        )
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        said[command.split()[1]] = done.stdout
    assert "goal found" in said["run"] and "8 planned" in said["sweep"]
    assert (tmp_path / "tutorial-report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert {"experiments.parquet", "actions.parquet", "DATA_DICTIONARY.md"} <= {
        path.name for path in (tmp_path / "data" / "tutorial").iterdir()
    }
    assert "explorer" in said["docs/tutorial/notebook.py"] and "random" in said["docs/tutorial/notebook.py"]
    assert re.search(r"explorer +\| 7x7 +\| +2 \| +2", said["db"])


README_MODEL_SERVER = "http://gpu-box:11434"  # the README's Ollama server, a scripted one in the test


def test_the_readme_is_short_and_its_commands_run(tmp_path, empty_database):
    """Each shell command of the README is a make target, a command of the tutorial (run above), its model
    example (run here against a scripted Ollama server in place of the GPU box), or an AWS command, which cannot
    run offline but must be one the CLI has, with the options shown."""
    from tests.ollama_server import ScriptedOllama, text_reply

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE))
    tested = set(tutorial_commands())
    commands = [line for line in fenced(readme, ("bash", "sh", "")) if line.split()[0] in ("make", "oriole", "python")]
    model = [command for command in commands if README_MODEL_SERVER in command]
    assert commands and len(model) == 1, "the README shows its commands and one real-model example"
    for command in commands:
        if command.startswith("make "):
            assert command.split()[1] in targets, f"README: `{command}` is not a make target"
        elif command.endswith(" --aws"):
            words = command.split()
            usage = subprocess.run([BIN / "oriole", *words[1:-1], "--help"], capture_output=True, text=True)
            assert usage.returncode == 0 and "--aws" in usage.stdout, f"README: `{command}` is not a CLI command"
        else:
            assert command in tested or command in model, f"README: `{command}` is not run by the docs tests"
    env = {
        **os.environ,
        "DATABASE_URL": empty_database,
        "ORIOLE_HOME": str(tmp_path / "home"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    with ScriptedOllama(*[text_reply("Thinking about the maze.")] * 3) as server:  # three turns without a move
        done = subprocess.run(
            model[0].replace(README_MODEL_SERVER, server.url),
            shell=True,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            executable="/bin/bash",
        )
    assert done.returncode == 0 and "ollama / qwen2.5:7b" in done.stdout, done.stdout + done.stderr
    assert server.requests[0].body["model"] == "qwen2.5:7b"
    sweep = tomllib.loads((ROOT / "sweeps" / "tutorial.toml").read_text(encoding="utf-8"))
    shown = tomllib.loads(re.search(r"```toml\n(.*?)```", readme, re.DOTALL)[1])
    assert shown.items() <= sweep.items(), "the README's sweep is not sweeps/tutorial.toml"
    for link in re.findall(r"`(docs/[\w/-]+\.md)`", readme):
        assert (ROOT / link).is_file(), link


def test_every_repository_file_the_docs_name_exists():
    """The pages name code, tests and migrations by path: a moved or removed file fails here, not in a reader's
    hands."""
    pages = [*DOCS.rglob("*.md"), ROOT / "README.md"]
    named = {
        match
        for path in pages
        for match in re.findall(
            r"`((?:lambdas|workstation|tests|migrations|infra|sweeps|bench|docs)/[\w./-]*[\w/])`",
            path.read_text(encoding="utf-8"),
        )
    }
    assert len(named) > 40
    assert not sorted(path for path in named if "<" not in path and not (ROOT / path).exists())
