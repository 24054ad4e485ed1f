"""The Lambda asset: the runtime package whole and alone, importable without the workstation, built from a
lock of exact hashed pins, and named by a hash that changes with the package and the lock."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import aws_cdk as cdk
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from infra import bundling
from oriole.handlers import DEPLOYED

ROOT = Path(__file__).parents[2]
RUNTIME_SOURCE = ROOT / "lambdas" / "oriole"
MIGRATIONS = ROOT / "migrations"  # the one copy of the SQL, carried into the asset as oriole/migrations
WORKSTATION_SOURCE = ROOT / "workstation" / "oriole_workstation"
WORKSTATION_ONLY = ("oriole_workstation", "typer", "rich", "moto", "pgserver", "PIL")
IMPORT_NAMES = {  # each distribution of requirements.txt -> the top-level modules it brings
    "aws-lambda-powertools": {"aws_lambda_powertools"},
    "boto3": {"boto3", "botocore"},  # botocore is a dependency of boto3
    "confusable-homoglyphs": {"confusable_homoglyphs"},
    "psycopg": {"psycopg"},
    "pydantic": {"pydantic"},
}
HASHED_PIN = re.compile(r"--hash=sha256:[0-9a-f]{64}")


@pytest.fixture(scope="module")
def asset(tmp_path_factory) -> Path:
    """The real copy step into an empty folder (the wheels are left out: installing them needs a registry)."""
    output = tmp_path_factory.mktemp("asset")
    bundling.copy_package(output)
    return output


def files(root: Path) -> set[str]:
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def module_name(path: Path, root: Path) -> str:
    """``<root>/handlers/agents.py`` -> ``oriole.handlers.agents``; a package is named by its ``__init__``."""
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(*roots: Path) -> dict[str, Path]:
    return {module_name(path, root): path for root in roots for path in root.rglob("*.py")}


def imported(path: Path, module: str) -> set[str]:
    """The absolute dotted names ``path`` imports anywhere (module level or in a function); ``from x import y``
    gives ``x.y``, since ``y`` may be a module, and relative imports are resolved against the package. Imports
    under ``if TYPE_CHECKING:`` never run (a type checker reads them: boto3's stubs), so they are left out."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _type_checking(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    names = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            source = ".".join(part for part in (base, node.module) if part)
            names |= {f"{source}.{alias.name}" for alias in node.names}
    return names


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def top(name: str) -> str:
    return name.partition(".")[0]


def import_graph(*roots: Path) -> dict[str, set[str]]:
    """Each module under ``roots`` -> the modules under ``roots`` it imports (the most specific one named)."""
    known = modules(*roots)

    def target(name: str) -> str | None:
        parts = name.split(".")
        return next((m for m in (".".join(parts[:i]) for i in range(len(parts), 0, -1)) if m in known), None)

    return {module: {t for t in map(target, imported(path, module)) if t} for module, path in known.items()}


def requirements() -> list[Requirement]:
    lines = (line.partition("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def lock_entries() -> list[tuple[Requirement, list[str]]]:
    """The lock's package entries as (requirement, options), continuation lines joined, comments dropped."""
    lines = (line.strip() for line in bundling.LOCK.read_text().replace("\\\n", " ").splitlines())
    entries = [re.split(r"\s+(?=--)", line) for line in lines if line and not line.startswith("#")]
    return [(Requirement(spec), options) for spec, *options in entries]


def test_the_asset_holds_the_runtime_package_whole(asset):
    shipped = files(asset / "oriole")
    assert shipped == set(bundling.package_files())  # the asset hash covers exactly what ships
    migrations = {f"migrations/{path.relative_to(MIGRATIONS).as_posix()}" for path in MIGRATIONS.rglob("*.sql")}
    assert "migrations/views/experiment_results.sql" in migrations and migrations <= shipped  # carried in
    assert {"flows/experiment.asl.json", "prompts/v1.md", "handlers/migrate.py"} <= shipped
    assert not [name for name in shipped if "__pycache__" in name or name.endswith(".pyc")]


def test_the_asset_holds_no_workstation_code(asset):
    assert sorted(path.name for path in asset.iterdir()) == ["oriole"]
    parts = {part for path in asset.rglob("*") for part in path.relative_to(asset).parts}
    assert not parts & {"oriole_workstation", "local"}
    offenders = {
        f"{module} imports {name}"
        for module, path in modules(asset / "oriole").items()
        for name in imported(path, module)
        if top(name) in WORKSTATION_ONLY
    }
    assert not offenders


def test_the_asset_imports_only_the_standard_library_itself_and_its_requirements(asset):
    assert {canonicalize_name(r.name) for r in requirements()} == set(IMPORT_NAMES)  # map every new requirement
    allowed = set(sys.stdlib_module_names) | {"oriole"} | set().union(*IMPORT_NAMES.values())
    names = {top(name): module for module, path in modules(asset / "oriole").items() for name in imported(path, module)}
    assert set().union(*IMPORT_NAMES.values()) <= set(names)  # the walk sees third-party imports at all
    assert {name: module for name, module in names.items() if name not in allowed} == {}


def test_every_handler_imports_from_the_asset_without_the_workstation(asset):
    handlers = sorted(DEPLOYED.values())
    script = "\n".join(
        [
            "import importlib, json, sys",
            f"for handler in {handlers!r}:",
            "    module, _, function = handler.rpartition('.')",
            "    assert callable(getattr(importlib.import_module(module), function)), handler",
            f"loaded = [name for name in {WORKSTATION_ONLY!r} if name in sys.modules]",
            "print(json.dumps({'oriole': sys.modules['oriole'].__file__, 'loaded': loaded}))",
        ]
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=asset,
        env={**os.environ, "PYTHONPATH": str(asset)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.splitlines()[-1])
    assert Path(report["oriole"]).is_relative_to(asset)
    assert report["loaded"] == []


def test_the_runtime_in_the_asset_hashes_its_files_as_the_checkout_does(asset):
    """The code hash an experiment records is the same whether the runtime runs from this checkout or from the Lambda
    asset, and the same as infra's hash of the source tree; a changed file changes it."""
    from oriole import code_identity

    script = "import json, oriole.code_identity as c; print(json.dumps([c.runtime_hash(), c.current().commit]))"

    def in_asset() -> list:
        result = subprocess.run(
            [sys.executable, "-c", script],
            cwd=asset,
            env={**os.environ, "PYTHONPATH": str(asset)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return json.loads(result.stdout.splitlines()[-1])

    shipped, commit = in_asset()
    assert shipped == code_identity.runtime_hash() == bundling.runtime_hash()
    assert commit is None  # the asset is no git checkout: on AWS the commit comes from CDK (ORIOLE_CODE_COMMIT)
    prompt = asset / "oriole" / "prompts" / "v1.md"
    prompt.write_text(prompt.read_text() + " ")
    try:
        assert in_asset()[0] != shipped
    finally:
        prompt.write_text(prompt.read_text()[:-1])


def test_the_functions_are_told_the_commit_and_whether_its_checkout_held_changes(tmp_path):
    """What CDK sets on every function beside the version: the commit of the checkout synthesized and its flag, or
    neither when the stack is synthesized from files that are no checkout."""
    from oriole.environment import CODE_COMMIT, CODE_DIRTY, CODE_VERSION

    told = bundling.code_environment()
    assert told[CODE_VERSION] == bundling.code_version()
    assert len(told[CODE_COMMIT]) == 40 and told[CODE_DIRTY] in ("true", "false")
    assert set(bundling.code_environment(tmp_path)) == {CODE_VERSION}


def test_the_lock_pins_every_package_exactly_with_hashes():
    entries = lock_entries()
    assert entries
    for requirement, options in entries:
        [pin] = requirement.specifier
        assert pin.operator == "==" and "*" not in pin.version, requirement
        assert options and all(HASHED_PIN.fullmatch(option) for option in options), requirement


def test_the_lock_holds_every_requirement_within_its_range():
    pins = {canonicalize_name(locked.name): next(iter(locked.specifier)).version for locked, _ in lock_entries()}
    for requirement in requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins and requirement.specifier.contains(pins[name]), requirement


def test_the_lock_targets_what_the_lambda_runtime_runs():
    """``make lock`` resolves for manylinux_2_28 on aarch64 (Lambda's Amazon Linux 2023 has glibc 2.34) and
    bundling installs wheels of that tag or an older one, never a newer: the two name the same platform."""
    makefile = (ROOT / "Makefile").read_text()
    [target] = re.findall(r"--python-platform (\S+)", makefile)
    arch, _, tag = target.partition("-")
    assert f"{tag}_{arch}" == bundling.PLATFORM == "manylinux_2_28_aarch64"
    glibc = [
        tuple(map(int, re.fullmatch(r"manylinux_(\d+)_(\d+)_aarch64", t).groups()))
        for t in bundling.MANYLINUX_TAGS
        if t != "manylinux2014_aarch64"
    ]
    assert max(glibc) == (2, 28) and min(glibc) == (2, 17) and len(glibc) == 12  # every tag in between
    assert f"--python-version {bundling.PYTHON_VERSION}" in makefile
    assert bundling.RUNTIME.name == f"python{bundling.PYTHON_VERSION}"


def test_the_tests_run_the_runtime_dependencies_at_the_versions_the_asset_ships():
    """``make test`` installs every package of the lock at the lock's version (the lock's hashes are for the
    aarch64 wheels, so the install is constrained by version): what the tests run is what ships."""
    from importlib.metadata import PackageNotFoundError, version

    installed = {}
    for locked, _ in lock_entries():
        try:
            installed[locked.name] = version(locked.name)
        except PackageNotFoundError:
            installed[locked.name] = None
    differing = {
        f"{locked.name}{locked.specifier}": installed[locked.name]
        for locked, _ in lock_entries()
        if installed[locked.name] != next(iter(locked.specifier)).version
    }
    assert not differing, f"run `make test` (it installs with the lock's versions as constraints): {differing}"
    assert "--constraint $(CONSTRAINTS)" in (ROOT / "Makefile").read_text()


def test_the_asset_hash_follows_the_lock_and_the_package_files(tmp_path):
    lock = tmp_path / "requirements-lambda.lock"
    lock.write_text(bundling.LOCK.read_text())
    bundling.copy_package(tmp_path)
    package = {".": tmp_path / "oriole"}  # the asset's package, its migrations inside
    assert bundling.asset_hash(lock, package) == bundling.asset_hash()  # the same inputs anywhere: the same hash
    (package["."] / "__pycache__").mkdir()
    (package["."] / "__pycache__" / "catalog.cpython-314.pyc").write_bytes(b"cache")
    assert bundling.asset_hash(lock, package) == bundling.asset_hash()  # caches are not code
    lock.write_text(lock.read_text() + "# touched\n")
    relocked = bundling.asset_hash(lock, package)
    assert relocked != bundling.asset_hash()
    (package["."] / "prompts" / "v1.md").write_text("another prompt")
    assert bundling.asset_hash(lock, package) != relocked


def object_key(outdir: Path) -> str:
    """Where the functions' code lands in the assets bucket, named as CDK names it (bundling skipped)."""
    app = cdk.App(outdir=str(outdir), context={"aws:cdk:bundling-stacks": []})
    return bundling.code_asset().bind(cdk.Stack(app, "Asset")).s3_location.object_key


def test_a_new_lock_renames_the_deployed_asset(tmp_path, monkeypatch):
    before = object_key(tmp_path / "before")
    lock = tmp_path / "requirements-lambda.lock"
    lock.write_text(bundling.LOCK.read_text().replace("==", "==0", 1))
    real = bundling.asset_hash
    monkeypatch.setattr(bundling, "asset_hash", lambda: real(lock))
    assert object_key(tmp_path / "after") != before
    monkeypatch.setattr(bundling, "asset_hash", real)
    assert object_key(tmp_path / "again") == before


def test_the_runtime_package_never_imports_the_workstation():
    offenders = {
        f"{module} imports {name}"
        for module, path in modules(RUNTIME_SOURCE).items()
        for name in imported(path, module)
        if top(name) == "oriole_workstation"
    }
    assert not offenders


def test_the_project_has_no_import_cycle():
    graph = import_graph(RUNTIME_SOURCE, WORKSTATION_SOURCE)
    assert "oriole.store" in graph["oriole.handlers.migrate"]  # the graph sees the project's imports
    assert any(
        target.startswith("oriole.")
        for module in graph
        if module.startswith("oriole_workstation")
        for target in graph[module]
    )
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")


def test_the_cycle_check_sees_relative_and_function_level_imports(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def late():\n    from . import a\n")
    with pytest.raises(CycleError):
        TopologicalSorter(import_graph(package)).prepare()
