"""The development toolchain is locked and its checks run before each commit: requirements-dev.lock pins every
package of every extra (``make lock``), each install is constrained by it and by the Lambda lock, the tests run
exactly those versions, and the pre-commit hooks run the tools of the project's own .venv."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from infra import bundling

ROOT = Path(__file__).parents[2]
DEV_LOCK = ROOT / "requirements-dev.lock"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VENV_BIN = Path(sys.executable).parent


def locked(path: Path) -> dict[str, list[Requirement]]:
    """A lock's pins by package name (a universal lock may pin a package twice, under exclusive markers)."""
    pins: dict[str, list[Requirement]] = {}
    for line in path.read_text().replace("\\\n", " ").splitlines():
        if line.strip() and not line.startswith((" ", "#")):
            requirement = Requirement(line.split(" --hash")[0])
            pins.setdefault(canonicalize_name(requirement.name), []).append(requirement)
    return pins


def pinned_version(requirement: Requirement) -> str:
    [specifier] = requirement.specifier
    assert specifier.operator == "==", f"{requirement} is not an exact pin"
    return specifier.version


# The extra installed in a venv of its own (.venv-inspect, as a researcher installs it), never in the dev lock:
# Inspect AI's aiobotocore pins a botocore older than the Lambda lock's.
UNLOCKED_EXTRAS = {"inspect"}


def declared() -> list[Requirement]:
    """What pyproject.toml asks for: requirements.txt (the runtime) and every extra but ``UNLOCKED_EXTRAS``, the
    project itself left out."""
    runtime = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line and line[0] != "#"]
    extras = [
        spec
        for name, specs in PYPROJECT["project"]["optional-dependencies"].items()
        if name not in UNLOCKED_EXTRAS
        for spec in specs
    ]
    requirements = [Requirement(spec.split("#")[0].strip()) for spec in runtime + extras]
    return [r for r in requirements if canonicalize_name(r.name) != "oriole"]


def test_the_dev_lock_pins_every_declared_package_within_its_bounds():
    pins = locked(DEV_LOCK)
    missing = [str(r) for r in declared() if canonicalize_name(r.name) not in pins]
    assert not missing, f"run `make lock`: requirements-dev.lock lacks {missing}"
    outside = {
        str(r): [str(pin) for pin in pins[canonicalize_name(r.name)] if not r.specifier.contains(pinned_version(pin))]
        for r in declared()
    }
    assert not {k: v for k, v in outside.items() if v}, f"run `make lock`: pins outside pyproject's bounds {outside}"


def test_the_dev_lock_takes_the_runtime_versions_from_the_lambda_lock():
    dev = locked(DEV_LOCK)
    differing = {
        name: (pinned_version(pin), [pinned_version(p) for p in dev.get(name, [])])
        for name, [pin] in locked(bundling.LOCK).items()
        if name in dev and {pinned_version(p) for p in dev[name]} != {pinned_version(pin)}
    }
    assert not differing, f"run `make lock` (the dev lock is resolved under the Lambda lock's pins): {differing}"


def test_the_tests_run_the_locked_toolchain():
    """What this interpreter has installed is what the lock pins for it (the test tools among them)."""
    from importlib.metadata import PackageNotFoundError, version

    here = {
        name: pinned_version(pin)
        for name, pins in locked(DEV_LOCK).items()
        for pin in pins
        if pin.marker is None or pin.marker.evaluate()
    }
    for tool in ("pytest", "pytest-xdist", "mypy", "ruff", "moto", "cfn-lint", "hypothesis", "import-linter"):
        assert tool in here, f"the lock pins no {tool}"
    installed = {}
    for name in here:
        try:
            installed[name] = version(name)
        except PackageNotFoundError:
            continue
    differing = {name: (installed[name], here[name]) for name in installed if installed[name] != here[name]}
    assert not differing, f"installed versus locked; `make test` installs the lock's versions: {differing}"
    makefile = (ROOT / "Makefile").read_text()
    assert "--constraint $(DEV_LOCK)" in makefile and "$(DEV_EXTRAS) --universal" in makefile
    [listed] = [line for line in makefile.splitlines() if line.startswith("DEV_EXTRAS := ")]
    locked_extras = set(PYPROJECT["project"]["optional-dependencies"]) - UNLOCKED_EXTRAS
    assert set(listed.split(",", 1)[1].split(",", 1)[0].split()) == locked_extras, "the lock's extras in the Makefile"


def hooks() -> list[dict]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return [hook for repo in config["repos"] for hook in repo["hooks"] if repo["repo"] == "local"]


def test_every_hook_is_local_and_runs_a_tool_of_the_projects_venv():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert [repo["repo"] for repo in config["repos"]] == ["local"]  # nothing fetched, no second copy of a tool
    assert {hook["id"] for hook in hooks()} == {"ruff", "ruff-format", "mypy", "import-linter"}
    for hook in hooks():
        executable = hook["entry"].split()[0]
        assert executable.startswith(".venv/bin/") and hook["language"] == "unsupported", hook["id"]
        assert (VENV_BIN / Path(executable).name).exists(), f"{hook['id']}: {executable} is not installed"


@pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")
def test_the_ruff_hooks_refuse_a_lint_error_and_reformat_a_file(tmp_path):
    """The hooks run for real on a scratch repository with the project's settings and .venv: the linter's hook
    fails on an undefined name, the formatter's rewrites the file (and so fails the commit), then passes."""
    for name in ("pyproject.toml", ".pre-commit-config.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".venv").symlink_to(VENV_BIN.parent)
    (tmp_path / "bad.py").write_text("x = undefined_name\n")
    environ = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "SKIP": "mypy,import-linter"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(args, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=120)

    run("git", "init", "-q")
    run("git", "add", "-A")
    linted = run(str(VENV_BIN / "pre-commit"), "run", "ruff", "--files", "bad.py")
    assert linted.returncode == 1 and "F821" in linted.stdout, linted.stdout + linted.stderr
    (tmp_path / "bad.py").write_text("x = {'a':1}\n")
    formatted = run(str(VENV_BIN / "pre-commit"), "run", "ruff-format", "--files", "bad.py")
    assert formatted.returncode == 1 and "files were modified by this hook" in formatted.stdout, formatted.stdout
    assert (tmp_path / "bad.py").read_text() == 'x = {"a": 1}\n'
    again = run(str(VENV_BIN / "pre-commit"), "run", "ruff-format", "--files", "bad.py")
    assert again.returncode == 0 and re.search(r"ruff format\.+Passed", again.stdout), again.stdout
