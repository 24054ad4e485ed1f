"""Tool calls written as JSON in the answer's text, for models without native tool calling.

With ``textToolCalls`` on, the tools are described in the system prompt instead of being sent as tools,
and every JSON object in the answer that names a tool (``{"tool": "move_north", "arguments": {...}}``;
``name`` is accepted for ``tool``, a list of such objects too, inside code fences or not) becomes a tool
call, in the order written. What it names and carries goes through the same validation as a native call,
so a malformed one is an invalid action, never a lost one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from oriole.tools import TEXT, ToolCall, ToolSpec

_DECODER = json.JSONDecoder()


def instructions(tools: Sequence[ToolSpec]) -> str:
    """What the system prompt adds so that a model can call the tools in its text."""
    listing = "\n".join(f"- {t.name}: {t.description} Arguments (JSON schema): "
                        f"{json.dumps(t.parameters, separators=(',', ':'))}" for t in tools)
    return ("Call a tool by writing one JSON object per call in your answer, exactly like "
            '{"tool": "move_north", "arguments": {"reasoning": "..."}}. Each call gets its result in the next '
            "message. The tools:\n" + listing)


def parse_tool_calls(text: str) -> tuple[ToolCall, ...]:
    """Every JSON object in ``text`` that names a tool, in order, as a text tool call."""
    found = [_tool_call(item, index) for index, item in enumerate(_named_objects(text))]
    return tuple(found)


def _named_objects(text: str) -> Iterator[dict]:
    """JSON objects naming a tool, found anywhere in the text (a list of them counts item by item)."""
    position = 0
    while position < len(text):
        start = min((i for i in (text.find("{", position), text.find("[", position)) if i >= 0), default=-1)
        if start < 0:
            return
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        yield from (item for item in (value if isinstance(value, list) else [value]) if _names_a_tool(item))
        position = end


def _names_a_tool(item: object) -> bool:
    return isinstance(item, dict) and isinstance(item.get("tool", item.get("name")), str)


def _tool_call(item: dict, index: int) -> ToolCall:
    name = item.get("tool", item.get("name"))
    arguments = item.get("arguments", item.get("parameters"))
    return ToolCall(name, arguments, call_id=f"text_{index}", source=TEXT)
