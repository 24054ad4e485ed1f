"""Tool calls written as JSON in the answer's text, for models without native tool calling.

With ``textToolCalls`` on, the tools are described in the system prompt instead of being sent as tools,
and every JSON object in the answer that names a tool (``{"tool": "move_north", "arguments": {...}}``;
``name`` is accepted for ``tool``, a list of such objects too, inside code fences or not) becomes a tool
call, in the order written. What it names and carries goes through the same validation as a native call,
so a malformed one is an invalid action, never a lost one.

Reading the text is bounded whatever it holds: the first ``MAX_SCANNED_CHARS`` characters are read, at most
``MAX_FAILED_DECODES`` brackets that start no JSON are tried (a flood of ``[`` would otherwise be parsed from
every one of them, each as deep as the parser goes) and at most ``MAX_CALLS`` calls are taken (more than any
turn's budget); a number of any length is read, and JSON nested deeper than ``MAX_JSON_DEPTH`` is not a call to it,
whether the parser ran out of stack on it or not (so a run and its replay read the same calls).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from oriole.core.tools import TEXT, ToolCall, ToolSpec, model_call
from oriole.text import MAX_JSON_DEPTH, JsonObject, bounded_int, nesting_depth

_DECODER = json.JSONDecoder(parse_int=bounded_int)
MAX_SCANNED_CHARS = 100_000  # a model writes its calls within its first few thousand characters
MAX_FAILED_DECODES = 1000
MAX_CALLS = 100  # the largest maxActionsPerTurn


def instructions(tools: Sequence[ToolSpec]) -> str:
    """What the system prompt adds so that a model can call the tools in its text."""
    listing = "\n".join(
        f"- {t.name}: {t.description} Arguments (JSON schema): {json.dumps(t.parameters, separators=(',', ':'))}"
        for t in tools
    )
    return (
        "Call a tool by writing one JSON object per call in your answer, exactly like "
        '{"tool": "move_north", "arguments": {"reasoning": "..."}}. Each call gets its result in the next '
        "message. The tools:\n" + listing
    )


def parse_tool_calls(text: str) -> tuple[ToolCall, ...]:
    """Every JSON object in ``text`` that names a tool, in order, as a text tool call (within the bounds)."""
    found = []
    for index, item in enumerate(_named_objects(text[:MAX_SCANNED_CHARS])):
        if index == MAX_CALLS:
            break
        found.append(_tool_call(item, index))
    return tuple(found)


def _named_objects(text: str) -> Iterator[JsonObject]:
    """JSON objects naming a tool, found anywhere in the text (a list of them counts item by item)."""
    position, failures = 0, 0
    while position < len(text) and failures < MAX_FAILED_DECODES:
        start = min((i for i in (text.find("{", position), text.find("[", position)) if i >= 0), default=-1)
        if start < 0:
            return
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser (read on as too deep, below)
            value, end = None, -1
        if end < 0 or nesting_depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            position, failures = start + 1, failures + 1
            continue
        yield from (item for item in (value if isinstance(value, list) else [value]) if _names_a_tool(item))
        position = end


def _names_a_tool(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("tool", item.get("name")), str)


def _tool_call(item: JsonObject, index: int) -> ToolCall:
    name = item.get("tool", item.get("name"))
    assert isinstance(name, str), "the items are those _names_a_tool kept"
    arguments = item.get("arguments", item.get("parameters"))
    return model_call(name, arguments, call_id=f"text_{index}", source=TEXT)
