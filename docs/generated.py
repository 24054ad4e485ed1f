"""The reference pages' generated parts, made from the code at every build so that they cannot drift from it.

An mkdocs hook (``hooks:`` in mkdocs.yml): a page holds a line ``<!-- generated: NAME -->`` and the build replaces
it with what ``GENERATORS[NAME]`` writes: the CLI from the typer app, the parameters from ``catalog.CATALOG``, the
execution input and the sweep file from their pydantic models (JSON schema), the tables and views from the column
comments of a scratch database migrated by the real migrations, the error names from their classes' docstrings, and
the two state machines from their ASL files. A marker without a generator fails the build.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import pkgutil
import re
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
import typer.main
from mkdocs.exceptions import PluginError
from psycopg import sql

import oriole
from oriole import catalog, errors, flows, inputs
from oriole.core import sweep_plan
from oriole.flows import experiment_flow, sweep_flow

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)


def cell(text: object) -> str:
    """A value as one Markdown table cell: lines joined, pipes escaped, and outside code spans the angle brackets
    (``sweep:<id>``, ``/oriole/prompts/<version>``) written as text, not read as HTML."""
    parts = " ".join(str(text).split()).replace("|", "\\|").split("`")
    return "`".join(
        part if inside % 2 else part.replace("<", "&lt;").replace(">", "&gt;") for inside, part in enumerate(parts)
    )


def table(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines)


def code(text: object) -> str:
    return f"`{text}`" if text not in (None, "") else ""


# -- the CLI -------------------------------------------------------------------------------------------------------


def commands() -> Iterator[tuple[str, object, object]]:
    """Every command of the ``oriole`` app with its context, depth first: (full name, command, context)."""
    from oriole_workstation.cli import app

    root = typer.main.get_command(app)

    def walk(command, context, name):
        yield name, command, context
        for sub_name, sub in sorted(getattr(command, "commands", {}).items()):
            if not sub.hidden:
                yield from walk(sub, sub.context_class(sub, info_name=sub_name, parent=context), f"{name} {sub_name}")

    yield from walk(root, root.context_class(root, info_name="oriole"), "oriole")


def cli() -> str:
    from oriole_workstation.cli.common import TerminalHelp

    parts = []
    for name, command, context in commands():
        level = "#" * min(2 + name.count(" "), 4)
        parts.append(f"{level} `{name}`\n")
        parts.append(f"```\n{command.get_usage(context).replace('Usage: ', '', 1)}\n```\n")
        if command.help:
            parts.append(inspect.cleandoc(command.help) + "\n")
        if isinstance(command, TerminalHelp):
            arguments, options = command.help_records(context)
            records = [*arguments, *options]
        else:  # a group: its own options only
            records = list(filter(None, (param.get_help_record(context) for param in command.get_params(context))))
        rows = [(code(opts), help_text) for opts, help_text in records]
        if rows:
            parts.append(table(("argument or option", "what it does"), rows) + "\n")
    return "\n".join(parts)


# -- parameters ----------------------------------------------------------------------------------------------------


def number(value: float) -> str:
    """A bound as a reader writes it: 1,000,000 rather than 1e+06."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def bounds(parameter: catalog.Parameter) -> str:
    if parameter.choices:
        retired = [f"{code(value)} retired ({why})" for value, why in parameter.retired_choices]
        return ", ".join([*(code(choice) for choice in parameter.choices), *retired])
    if parameter.minimum is not None or parameter.maximum is not None:
        return f"{number(parameter.minimum)} to {number(parameter.maximum)}"
    if parameter.url_schemes:
        return "a URL: " + ", ".join(parameter.url_schemes)
    if parameter.max_length:
        return f"at most {parameter.max_length} characters"
    return "true or false" if parameter.type is bool else ""


def parameters() -> str:
    """One section per parameter, so a long description and a long Parameter Store name never squeeze a table and
    every parameter has an anchor to link to."""
    every = set(catalog.ALL_PROVIDERS)
    sections = []
    for p in catalog.CATALOG:
        title = code(p.key) if p.overridable else code(p.name.rsplit("/", 1)[-1])
        facts = [f"Parameter Store {code(p.name)}", f"type {p.type.__name__}", f"default {code(p.default_text)}"]
        facts += [f"accepted {bounds(p)}"] if bounds(p) else []
        facts += ["every provider" if set(p.providers) == every else "providers " + ", ".join(p.providers)]
        facts += (
            [f"applies only with {code(p.applies_when)}: otherwise not stored, and refused"] if p.applies_when else []
        )
        facts += ["experimental: comparisons split on it" if p.experimental else "not experimental"]
        facts += [] if p.overridable else [f"read at {p.read_at}; no `config` key"]
        sections.append(f"### {title}\n\n{cell(p.description)}\n\n" + " · ".join(facts))
    return "\n\n".join(sections)


# -- the execution input and the sweep file ------------------------------------------------------------------------


def schema_type(spec: dict | bool) -> str:
    if not isinstance(spec, dict):
        return "any"
    if options := spec.get("anyOf", spec.get("oneOf")):
        return " or ".join(schema_type(option) for option in options)
    if "enum" in spec:
        return " or ".join(code(json.dumps(value)) for value in spec["enum"])
    if "const" in spec:
        return code(json.dumps(spec["const"]))
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1]
    if spec.get("type") == "array":
        return f"list of {schema_type(spec.get('items', {}))}"
    if spec.get("type") == "object" and "additionalProperties" in spec:
        keys = spec.get("propertyNames", {}).get("enum")
        named = f" ({', '.join(code(key) for key in keys)})" if keys else ""
        return f"object{named} of {schema_type(spec['additionalProperties'])}"
    return spec.get("type", "any")


def constraints(spec: dict) -> str:
    words = {
        "minimum": "at least",
        "maximum": "at most",
        "exclusiveMinimum": "above",
        "minLength": "at least",
        "maxLength": "at most",
        "minItems": "at least",
        "pattern": "matches",
    }
    found = [
        f"{word} {code(spec[key]) if key == 'pattern' else spec[key]}" for key, word in words.items() if key in spec
    ]
    for option in spec.get("anyOf", spec.get("oneOf", [])):
        found += [constraints(option)] if constraints(option) else []
    return ", ".join(found)


def fields_table(schema: dict) -> str:
    """An object schema's fields: type, default (an empty list or object when a factory makes it), constraints."""
    required = set(schema.get("required", []))
    rows = []
    for name, spec in schema["properties"].items():
        default = (
            "required" if name in required else code(json.dumps(spec["default"])) if "default" in spec else "empty"
        )
        rows.append((code(name), schema_type(spec), default, constraints(spec), spec.get("description", "")))
    return table(("field", "type", "default", "constraints", "what it is"), rows)


def model_reference(model) -> str:
    schema = model.model_json_schema()
    parts = [fields_table(schema)]
    for name, spec in schema.get("$defs", {}).items():
        parts.append(f"**{name}**: {cell(spec.get('description', ''))}\n\n" + fields_table(spec))
    parts.append(
        '??? note "The JSON schema"\n\n    ```json\n'
        + "\n".join("    " + line for line in json.dumps(schema, indent=2).splitlines())
        + "\n    ```"
    )
    return "\n\n".join(parts) + "\n"


# -- tables and views ----------------------------------------------------------------------------------------------


@contextmanager
def scratch_database() -> Iterator[str]:
    """A database migrated by the real migrations: on the server of ``DATABASE_URL`` when set (created, then
    dropped), else on an embedded PostgreSQL in a temporary folder."""
    from oriole_workstation.database import prepare

    server = os.environ.get("DATABASE_URL")
    if not server:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
            import pgserver

            # stopped and deleted when the build's process ends
            server = pgserver.get_server(tempfile.mkdtemp(prefix="oriole-docs-"), cleanup_mode="delete").get_uri()
    name = f"oriole_docs_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        url = psycopg.conninfo.make_conninfo(server, dbname=name)
        prepare(url).conn.close()
        yield url
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


COLUMNS = """
SELECT c.relname AS relation, c.relkind = 'v' AS is_view, a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS type, col_description(c.oid, a.attnum) AS description,
       obj_description(c.oid, 'pg_class') AS relation_description
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v')
 ORDER BY c.relkind, c.relname, a.attnum
"""
FUNCTIONS = """
SELECT p.proname AS name, pg_get_function_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS result
  FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace ORDER BY p.proname, p.oid
"""


@functools.cache
def catalog_rows() -> tuple[list[tuple], list[tuple]]:
    with scratch_database() as url, psycopg.connect(url) as conn:
        return conn.execute(COLUMNS).fetchall(), conn.execute(FUNCTIONS).fetchall()


def relations(views: bool) -> str:
    columns, _ = catalog_rows()
    parts, names = [], sorted({row[0] for row in columns if row[1] == views})
    for name in names:
        mine = [row for row in columns if row[0] == name]
        about = f"{cell(mine[0][5])}\n\n" if mine[0][5] else ""
        rows = [(code(column), code(kind), description or "") for _, _, column, kind, description, _ in mine]
        parts.append(f"### `{name}`\n\n{about}" + table(("column", "type", "what it holds"), rows))
    return "\n\n".join(parts) + "\n"


def functions() -> str:
    _, rows = catalog_rows()
    return (
        table(
            ("function", "arguments", "returns"),
            [(code(name), code(arguments), code(result)) for name, arguments, result in rows],
        )
        + "\n"
    )


# -- errors --------------------------------------------------------------------------------------------------------


def error_classes() -> list[type[errors.OrioleError]]:
    """Every named error of the runtime and the workstation (their modules imported, so each subclass is known)."""
    import oriole_workstation

    for package in (oriole, oriole_workstation):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if ".handlers" not in module.name:  # the handlers configure Powertools at import; they define no error
                importlib.import_module(module.name)
    found, pending = [], [errors.OrioleError]
    while pending:
        klass = pending.pop()
        found.append(klass)
        pending.extend(klass.__subclasses__())
    return sorted(found, key=lambda klass: klass.__name__)


def error_names() -> str:
    flow_text = flows.definition_text(flows.EXPERIMENT) + flows.definition_text(flows.SWEEP)
    rows = [
        (
            code(klass.__name__),
            code(klass.__mro__[1].__name__) if klass is not errors.OrioleError else "",
            "yes" if f'"{klass.__name__}"' in flow_text else "",
            code(klass.__module__),
            inspect.cleandoc(klass.__doc__ or ""),
        )
        for klass in error_classes()
    ]
    return table(("error", "is a", "named in a flow", "module", "what it means"), rows) + "\n"


# -- the state machines --------------------------------------------------------------------------------------------

LAMBDA_ERRORS = "Lambda's service errors"


def error_list(errors: set[str]) -> str:
    """Errors by name, with the Lambda service's own ones named once as a group (listed under the table)."""
    own = sorted(error for error in errors if not error.startswith("Lambda."))
    return ", ".join([LAMBDA_ERRORS] * (len(own) < len(errors)) + own)


def states(name: str) -> str:
    lambda_errors: set[str] = set()

    def walk(definition: dict, prefix: str = "") -> Iterator[tuple]:
        for state, spec in definition["States"].items():
            retried = {e for retrier in spec.get("Retry", []) for e in retrier["ErrorEquals"]}
            caught = {e for catcher in spec.get("Catch", []) for e in catcher["ErrorEquals"]}
            lambda_errors.update(e for e in retried | caught if e.startswith("Lambda."))
            following = spec.get("Next") or (
                "end"
                if spec.get("End") or spec["Type"] in ("Succeed", "Fail")
                else ", ".join(
                    [
                        *(choice["Next"] for choice in spec.get("Choices", [])),
                        *([f"{spec['Default']} (default)"] if "Default" in spec else []),
                    ]
                )
            )
            yield (
                code(prefix + state),
                spec["Type"],
                following,
                error_list(retried),
                error_list(caught),
                spec.get("Error", ""),
            )
            for branch in spec.get("Branches", []):
                yield from walk(branch, prefix + "  ")
            if "ItemProcessor" in spec:
                yield from walk(spec["ItemProcessor"], prefix + "  ")

    rows = list(walk(flows.definition(name)))
    legend = f"{LAMBDA_ERRORS}: " + ", ".join(code(e) for e in sorted(lambda_errors)) + "." if lambda_errors else ""
    return table(("state", "type", "next", "retries on", "catches", "fails with"), rows) + f"\n\n{legend}\n"


def diagram(draw: Callable[[], str]) -> str:
    return f"```\n{draw()}```\n"


# -- the benchmarks' results --------------------------------------------------------------------------------------

BENCH_RESULTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench", "results.json")


def bench_results() -> str:
    """Each benchmark's recorded figures (bench/results.json) as tables, with where they were measured."""
    with open(BENCH_RESULTS) as results:
        entries = json.load(results)
    parts = []
    for name, entry in entries.items():
        packages = ", ".join(f"{package} {version}" for package, version in entry["packages"].items())
        parts.append(
            f"**{name}**: measured {entry['measured_at']} on commit `{entry['commit']}`, {entry['machine']}, load"
            f" average {entry['load_average']}; {entry['python']}, PostgreSQL {entry['postgres']}, {packages}."
        )
        figures = entry["figures"]
        scalars = [(key, code(value)) for key, value in figures.items() if not isinstance(value, dict)]
        parts.append(table(("figure", "value"), scalars))
        for key, rows in figures.items():
            if isinstance(rows, dict):  # one row a query: its figures as columns
                columns = list(next(iter(rows.values())))
                lines = [(label, *(row[column] for column in columns)) for label, row in rows.items()]
                parts.append(
                    table(
                        ({"queries": "query", "writes": "write", "commands": "command"}.get(key, key), *columns), lines
                    )
                )
    return "\n\n".join(parts) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli,
    "parameters": parameters,
    "execution-input": lambda: model_reference(inputs.ExecutionInput),
    "sweep-file": lambda: model_reference(sweep_plan.SweepFile),
    "sweep-run": lambda: model_reference(sweep_plan.SweepRun),
    "tables": lambda: relations(views=False),
    "views": lambda: relations(views=True),
    "functions": functions,
    "errors": error_names,
    "experiment-flow": lambda: diagram(experiment_flow.diagram),
    "sweep-flow": lambda: diagram(sweep_flow.diagram),
    "experiment-states": lambda: states(flows.EXPERIMENT),
    "sweep-states": lambda: states(flows.SWEEP),
    "bench-results": bench_results,
}


def on_page_markdown(markdown: str, page, config, files) -> str:
    """mkdocs' hook: each marker replaced by what its generator writes."""

    def generated(match: re.Match[str]) -> str:
        if match[1] not in GENERATORS:
            raise PluginError(f"{page.file.src_path}: no generator for the marker {match[0]}")
        return GENERATORS[match[1]]()

    return MARKER.sub(generated, markdown)
