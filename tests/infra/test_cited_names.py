"""Every dotted name the docs and the docstrings cite resolves to something that exists.

A docstring or a page that names ``oriole.some.module.function`` or ``SomeClass.field`` sends a reader there; once
the name moves, the citation sends them nowhere, and nothing else notices. Cited here: backquoted names rooted at
one of the project's packages (``oriole``, ``oriole_workstation``, ``infra``), resolved by importing the longest
module prefix and reading the rest as attributes (dataclass, pydantic and annotated fields included), and
backquoted ``Class.attribute`` names whose class the project defines. Names of tables and columns
(``experiments.seed``), files and AWS's own names are not Python names and are left alone.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import pkgutil
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("oriole", "oriole_workstation", "infra")
PYTHON_SOURCES = ("lambdas", "workstation", "infra", "bench", "docs", "app.py")
PAGES = ("docs", "README.md")
CITED = re.compile(
    r"`{1,2}((?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+|[A-Z][A-Za-z0-9]+(?:\.[A-Za-z_]\w*)+)(?:\(\))?`{1,2}"
)


def files(roots: tuple[str, ...], pattern: str) -> Iterator[Path]:
    for root in roots:
        path = ROOT / root
        yield from [path] if path.is_file() else sorted(p for p in path.rglob(pattern) if ".venv" not in p.parts)


def python_prose(path: Path) -> Iterator[str]:
    """A Python file's docstrings and comments: where its prose cites names."""
    source = path.read_text()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield docstring
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.string


def citations() -> Iterator[tuple[str, str]]:
    """(where, name) for every cited name."""
    for path in files(PYTHON_SOURCES, "*.py"):
        for prose in python_prose(path):
            for match in CITED.finditer(prose):
                yield str(path.relative_to(ROOT)), match.group(1)
    for path in files(PAGES, "*.md"):
        for match in CITED.finditer(path.read_text()):
            yield str(path.relative_to(ROOT)), match.group(1)


def project_modules() -> list[ModuleType]:
    modules = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        modules.append(root)
        modules += [importlib.import_module(info.name) for info in pkgutil.walk_packages(root.__path__, f"{package}.")]
    return modules


def project_classes(modules: list[ModuleType]) -> dict[str, list[type]]:
    """The classes the project defines, by name (a name two modules define is looked up in both)."""
    classes: dict[str, list[type]] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                classes.setdefault(value.__name__, []).append(value)
    return classes


def instance_attributes(cls: type) -> set[str]:
    """The attributes a class's methods set on ``self`` (``self.x = ...``, ``self.a, self.b = ...``)."""
    targets = (
        node
        for node in ast.walk(ast.parse(inspect.getsource(cls).lstrip()))
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
    )
    return {node.attr for node in targets if isinstance(node.value, ast.Name) and node.value.id == "self"}


def has_attribute(owner: Any, name: str) -> bool:
    """An attribute, a field a class declares without a default (dataclass, pydantic, annotation), or one its
    instances are given."""
    fields = (
        getattr(owner, "__dataclass_fields__", None) or {},
        getattr(owner, "model_fields", None) or {},
        getattr(owner, "__annotations__", None) or {},
    )
    if hasattr(owner, name) or any(name in declared for declared in fields):
        return True
    return isinstance(owner, type) and name in instance_attributes(owner)


def resolves_in_module(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not has_attribute(owner, attribute):
                return False
            owner = getattr(owner, attribute, None)
        return True
    return False


@pytest.fixture(scope="module")
def classes() -> dict[str, list[type]]:
    return project_classes(project_modules())


def resolves(name: str, classes: dict[str, list[type]]) -> bool | None:
    """Whether ``name`` exists; None when it is not the project's to resolve (a class the project does not define)."""
    first, *rest = name.split(".")
    if first in PACKAGES:
        return resolves_in_module(name)
    if first not in classes:
        return None
    return any(resolves_in_module(f"{cls.__module__}.{cls.__qualname__}.{'.'.join(rest)}") for cls in classes[first])


def test_every_cited_name_exists(classes):
    cited = sorted(set(citations()))
    assert len(cited) > 50  # the pattern still finds the citations it exists for
    unresolved = [f"{where}: {name}" for where, name in cited if resolves(name, classes) is False]
    assert not unresolved, "cited names that no longer exist:\n" + "\n".join(unresolved)


@pytest.mark.parametrize(
    ("name", "exists"),
    [
        ("oriole.core.prices", True),
        ("oriole.core.turn_loop.AgentSetup.replay", True),  # a dataclass field without a default
        ("oriole.prices", False),
        ("oriole.core.turn_loop.AgentSetup.recorded", False),
        ("AgentSetup.replay", True),
        ("AgentSetup.recorded", False),
        ("oriole.core.turn.Turn.answered", True),  # set on the instance by __init__
        ("Turn.unanswered", False),
        ("States.TaskFailed", None),  # AWS's, not the project's
    ],
)
def test_a_citation_resolves_only_when_its_target_exists(name, exists, classes):
    assert resolves(name, classes) is exists
