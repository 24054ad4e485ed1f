"""The package as a researcher installs it: a wheel, not the checkout, run from a folder outside it.

The wheel is built from the checkout and installed (without dependencies: the test environment already
has them) into a folder of its own; the experiment then runs from an empty folder with only that folder
and the dependencies importable, so anything still read from the repository would fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES, FOLDERS = ("pyproject.toml", "README.md", "requirements.txt"), ("lambdas", "workstation", "migrations")


def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the sources the package is made of: a build folder left in the checkout by an
    earlier build (of another layout) cannot slip into it."""
    source = tmp_path_factory.mktemp("source")
    for name in FILES:
        shutil.copy2(ROOT / name, source / name)
    for name in FOLDERS:
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    wheels = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    [built] = wheels.glob("oriole-*.whl")
    return built


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return wheel(tmp_path_factory)


@pytest.fixture(scope="module")
def installed(tmp_path_factory, built) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(built)],
        check=True,
        capture_output=True,
    )
    return target


def without_extras(venv: Path) -> Path:
    """A virtual environment as a plain ``pip install oriole`` leaves it: the runtime's dependencies (linked from
    the test environment, distribution by distribution, offline) and none of the ``local`` extra's, nor this
    checkout's editable install."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = Path(
        subprocess.run(
            [venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    left_out = {
        "oriole",
        *(
            re.split(r"[\[<>=;]", requirement)[0].strip().lower()
            for requirement in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"][
                "local"
            ]
        ),
    }
    for dist in metadata.distributions(path=[sysconfig.get_paths()["purelib"]]):
        if dist.metadata["Name"].lower() in left_out:
            continue
        for top in {f.parts[0] for f in dist.files or () if f.parts[0] != ".."}:
            source, link = Path(dist.locate_file(top)), site / top
            if source.exists() and not link.exists():
                link.symlink_to(source)
    return venv


def test_a_plain_install_names_the_extra_its_command_needs_in_one_line(tmp_path, built):
    """``pip install oriole`` without extras: ``oriole --help`` says which extra to install, in one line, no
    traceback; the runtime itself imports."""
    venv = without_extras(tmp_path / "venv")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(built),
        ],
        check=True,
        capture_output=True,
    )
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(
        [venv / "bin" / "oriole", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert re.fullmatch(
        r"oriole: the command line needs the 'local' extra \((typer|rich) is not installed\): "
        r"pip install 'oriole\[local\]'\n",
        result.stderr,
    ), result.stderr
    runtime = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import oriole.handlers.agents, oriole.store; "
            "import importlib.util as u; print(u.find_spec('typer'), u.find_spec('rich'))",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert runtime.returncode == 0 and runtime.stdout == "None None\n", runtime.stderr[-2000:]


def test_the_wheel_carries_the_flow_the_migrations_and_the_prompts(installed):
    package = installed / "oriole"
    assert (package / "flows" / "experiment.asl.json").is_file()
    carried = {p.relative_to(package / "migrations").as_posix() for p in (package / "migrations").rglob("*.sql")}
    assert carried == {p.relative_to(ROOT / "migrations").as_posix() for p in (ROOT / "migrations").rglob("*.sql")}
    assert "views/experiment_results.sql" in carried  # the repository's migrations/, carried into the package
    assert (package / "prompts" / "v1.md").is_file()
    assert (installed / "oriole_workstation" / "cli" / "__init__.py").is_file()


def test_an_installed_package_runs_an_experiment_from_any_folder(installed, tmp_path, database_url):
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(installed), sysconfig.get_paths()["purelib"]]),
        "DATABASE_URL": database_url,
        "ORIOLE_HOME": str(tmp_path / "home"),
        "COLUMNS": "200",
    }
    probe = (
        "import oriole, oriole_workstation, sys; print(oriole.__file__); print(oriole_workstation.__file__); "
        "sys.argv = ['oriole', 'run', '--maze', 'perfect-9', '--agent', 'oracle', '--json']; "
        "from oriole_workstation.cli import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    runtime_file, workstation_file, *rest = result.stdout.splitlines()
    assert runtime_file.startswith(str(installed)) and workstation_file.startswith(str(installed))
    data = json.loads("\n".join(rest))
    assert data["status"] == "succeeded" and data["actions"] == data["shortest_path_length"]
    assert not list(elsewhere.iterdir())  # nothing written into the working folder


def test_local_state_lives_in_oriole_home_else_beside_a_checkout_else_in_the_home_folder(tmp_path, monkeypatch):
    from oriole_workstation import database

    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path / "lab"))
    assert database.home() == tmp_path / "lab" and (tmp_path / "lab").is_dir()
    monkeypatch.delenv("ORIOLE_HOME")
    assert database.CHECKOUT == ROOT
    checkout = tmp_path / "checkout"  # one like this one, so that the test leaves nothing in this one
    (checkout / "lambdas" / "oriole").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("")
    monkeypatch.setattr(database, "CHECKOUT", checkout)
    assert database.home() == checkout / ".oriole"  # a checkout keeps its state beside the code
    monkeypatch.setattr(database, "CHECKOUT", tmp_path / "site-packages")  # an installed package
    monkeypatch.setenv("HOME", str(tmp_path / "researcher"))
    assert database.home() == tmp_path / "researcher" / ".oriole"


def test_the_package_list_names_every_package_folder():
    """pyproject.toml lists the packages (the migrations folder is mapped into the runtime, which a search of
    lambdas/ and workstation/ cannot find): a new package folder must be added there, or it would not ship."""
    from setuptools import find_namespace_packages

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    caches = ["*.__pycache__", "*.egg-info"]
    found = {
        *find_namespace_packages(ROOT / "lambdas", exclude=caches),
        *find_namespace_packages(ROOT / "workstation", exclude=caches),
        *(
            f"oriole.{name}"
            for name in find_namespace_packages(ROOT, include=["migrations", "migrations.*"], exclude=caches)
        ),
    }
    assert set(config["packages"]) == found
    assert config["package-dir"]["oriole.migrations"] == "migrations"
