"""What else differs between the groups a comparison sets side by side (DESIGN.md section 13: groups that differ in
anything besides the compared variable say so).

Within a panel (a maze family and size, or a maze) the series (each an agent with its prompt and compared
configuration) should differ in one thing, the variable compared. This names the rest: a maze set that is not the
same (errors or a spend limit left some mazes out), code versions that are not, the transport (the model server's
address, the request timeout: stored, never a condition the series are split on, yet a slower or other server can
change what a model answers in time), and where the agents vary, the prompts (version or text) and settings that
vary too. Each note is attached to every row it concerns, so every format can say it where the numbers are.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence

from oriole.provider_registry import PROVIDERS
from oriole.statuses import Ending
from oriole_workstation.grouping import (
    GroupBy,
    PanelKey,
    SeriesKey,
    agent_text,
    panel_key,
    panel_title,
    prompt_labels,
    series_key,
)
from oriole_workstation.rows import ComparedExperiment

DECIDED = frozenset({Ending.SUCCESS, Ending.AGENT})


def confounds(experiments: Sequence[ComparedExperiment], by: GroupBy) -> dict[tuple[PanelKey, SeriesKey], list[str]]:
    """For each (panel, series) of the comparison over ``experiments`` (``Results.compared``): what it differs in
    from other series of its panel besides one compared variable; an empty list where nothing does."""
    prompts = prompt_labels(experiments)
    names: dict[SeriesKey, str] = {}
    mazes: dict[PanelKey, dict[SeriesKey, set[str]]] = defaultdict(lambda: defaultdict(set))
    codes: dict[PanelKey, dict[SeriesKey, set[str]]] = defaultdict(lambda: defaultdict(set))
    transport: dict[PanelKey, dict[SeriesKey, dict[str, set[str]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(set))
    )
    for e in experiments:
        panel, key = panel_key(e, by), series_key(e)
        names[key] = agent_text(e) + (f" ({prompts[e.prompt_version, e.prompt_hash]})" if len(prompts) > 1 else "")
        codes[panel][key].add(e.code_version or "not recorded")
        for what, value in _transport_of(e):
            transport[panel][key][what].add(value)
        if e.counted and e.ending in DECIDED:
            mazes[panel][key].add(e.maze_hash)
    found: dict[tuple[PanelKey, SeriesKey], list[str]] = defaultdict(list)
    for panel, by_series in codes.items():
        if len(by_series) < 2:
            continue
        where = panel_title(panel)
        for note, concerned in (
            _maze_sets(mazes[panel], names),
            _code_versions(by_series, names),
            *_transports(transport[panel], names),
            _variables(sorted(by_series), prompts),
        ):
            for key in concerned:
                found[panel, key].append(f"{where}: {note}")
    return found


def _maze_sets(by_series: dict[SeriesKey, set[str]], names: dict[SeriesKey, str]) -> tuple[str, list[SeriesKey]]:
    """Series whose decided runs do not cover the same mazes: a rate on other mazes is another rate."""
    sets = {key: grids for key, grids in by_series.items() if grids}
    if len({frozenset(grids) for grids in sets.values()}) <= 1:
        return "", []
    shared = set.intersection(*sets.values())
    counts = ", ".join(f"{names[key]} {len(grids)}" for key, grids in sorted(sets.items()))
    return f"maze sets differ ({counts} mazes; {len(shared)} shared by all)", sorted(sets)


def _code_versions(by_series: dict[SeriesKey, set[str]], names: dict[SeriesKey, str]) -> tuple[str, list[SeriesKey]]:
    """Series run by different code: a difference may be the code's."""
    if len({frozenset(codes) for codes in by_series.values()}) <= 1:
        return "", []
    listed = "; ".join(f"{names[key]} {', '.join(sorted(codes))}" for key, codes in sorted(by_series.items()))
    return f"code versions differ ({listed})", sorted(by_series)


def _transport_of(e: ComparedExperiment) -> list[tuple[str, str]]:
    """What carried the experiment's requests, as its snapshot stored it: the model server's address (its
    provider's server key: Ollama's endpoint, the OpenAI-compatible base URL) and the request timeout; nothing for a
    provider that names no server (Bedrock), a key its snapshot lacks, or a snapshot that is no JSON object (a
    tampered row: the report still reads the rest of the database)."""
    servers = PROVIDERS[e.llm_provider].servers if e.llm_provider in PROVIDERS else None
    config = e.config if isinstance(e.config, dict) else {}
    found = []
    if servers is not None and isinstance(address := config.get(servers.key), str):
        found.append(("model servers", address))
    if isinstance(timeout := config.get("requestTimeoutSeconds"), int | float):
        found.append(("request timeouts", f"{timeout:g} s"))
    return found


def _transports(
    by_series: dict[SeriesKey, dict[str, set[str]]], names: dict[SeriesKey, str]
) -> list[tuple[str, list[SeriesKey]]]:
    """Series whose requests went to other model servers, or ran under other request timeouts: transport, not a
    condition (the series are not split on it), named so that a difference it may cause is not read as the compared
    variable's. One note per kind, each value with the groups that used it."""
    notes = []
    for what in sorted({what for kinds in by_series.values() for what in kinds}):
        having = {key: frozenset(kinds[what]) for key, kinds in by_series.items() if kinds.get(what)}
        if len(set(having.values())) <= 1:
            continue
        users: dict[frozenset[str], list[SeriesKey]] = defaultdict(list)
        for key, values in sorted(having.items()):
            users[values].append(key)
        listed = "; ".join(
            f"{_who(keys, names)} {', '.join(sorted(values))}"
            for values, keys in sorted(users.items(), key=lambda item: (len(item[1]), sorted(item[0])))
        )
        notes.append((f"transport, not a condition: {what} differ ({listed})", sorted(having)))
    return notes


def _who(keys: list[SeriesKey], names: dict[SeriesKey, str]) -> str:
    """The groups that share a transport: by name when one or two, else counted (a note stays a line or two)."""
    return " and ".join(names[key] for key in keys) if len(keys) <= 2 else f"{len(keys)} groups"


def _variables(series: list[SeriesKey], prompts: dict[tuple[str, str], str]) -> tuple[str, list[SeriesKey]]:
    """Besides the agent, what varies among the series of a panel: the prompt (its version, or its text under one
    version), and each setting that applies to more than one of them with more than one value (a setting that does
    not apply to a provider, a baseline's temperature, is no difference). Where the agents vary too, a difference
    between two rows may come from any of these; where they do not, the one that varies is the variable compared."""
    varied = []
    versions = {key[3] for key in series}
    texts = {key[3:5] for key in series}
    if len(versions) > 1:
        varied.append(f"prompt ({', '.join(sorted(prompts[k] for k in texts))})")
    elif len(texts) > 1:
        varied.append(f"prompt text ({', '.join(sorted(prompts[k] for k in texts))})")
    values: dict[str, set[str]] = defaultdict(set)
    for key in series:
        for setting, value in json.loads(key[5]).items():
            values[setting].add(json.dumps(value))
    varied += [f"{k} ({', '.join(sorted(v))})" for k, v in sorted(values.items()) if len(v) > 1]
    agents = {key[:3] for key in series}
    if len(agents) < 2 or not varied:
        return "", []
    return f"besides the agent, the groups differ in {'; '.join(varied)}", series


def panel_notes(found: dict[tuple[PanelKey, SeriesKey], list[str]]) -> list[str]:
    """Every note once, in order: what a report lists under its table."""
    return list(dict.fromkeys(note for notes in found.values() for note in notes))
