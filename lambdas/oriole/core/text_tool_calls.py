"""Tool calls written in the answer's text, for models without native tool calling, by one documented grammar.

With ``textToolCalls`` on, the tools are described in the system prompt (``instructions``) instead of being sent as
tools, and a call is a block in the answer's text, the format Hermes and Qwen models write their calls in::

    <tool_call>
    {"name": "move_north", "arguments": {"reasoning": "..."}}
    </tool_call>

The grammar (``docs/explanation/agent-loop.md``, *Text tool calls*, says it to a researcher):

- a call starts with ``<tool_call>`` at the start of a line (spaces before it allowed) and ends at the next
  ``</tool_call>``; between the tags, around whitespace, one JSON object with a string ``name`` and, optionally,
  ``arguments`` and nothing else; the calls execute in the order written;
- a tag inside a sentence (the model quoting an earlier call or weighing an option it rejects), inside a fenced code
  block (a line starting with three backticks or tildes opens and closes one) or on a quoted line (starting with
  ``>``) is text, not a call;
- a block that starts like a call but breaks the grammar (no closing tag, single quotes, a missing brace, no
  ``name``, another key) is a **near miss**: it becomes an invalid call whose result says what was wrong, as a
  malformed native call's does, so text and native tool calling differ in format, not in feedback. The arguments go
  through the same validation as a native call's.

Reading the text is bounded whatever it holds: the first ``MAX_SCANNED_CHARS`` characters are read, at most
``MAX_CALLS`` calls are taken (more than any turn's budget), a number of any length is read, and JSON nested deeper
than ``MAX_JSON_DEPTH`` is a near miss, whether the parser ran out of stack on it or not (so a run and its replay
read the same calls).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

from oriole.core.tools import TEXT, ToolCall, ToolSpec, model_call
from oriole.text import MAX_JSON_DEPTH, bounded_int, nesting_depth

_DECODER = json.JSONDecoder(parse_int=bounded_int)
MAX_SCANNED_CHARS = 100_000  # a model writes its calls within its first few thousand characters
MAX_CALLS = 100  # the largest maxActionsPerTurn
OPEN, CLOSE = "<tool_call>", "</tool_call>"
_FENCE = re.compile(r"[ \t]*(```|~~~)")
_QUOTED = re.compile(r"[ \t]*>")
_OPENING = re.compile(r"[ \t]*<tool_call>")
ENVELOPE_KEYS = frozenset({"name", "arguments"})


def block(name: str, arguments: object = None) -> str:
    """A call written by the grammar (``arguments`` None: without them), as the instructions show one."""
    call = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
    return f"{OPEN}\n{json.dumps(call)}\n{CLOSE}"


EXAMPLE = block("move_north", {"reasoning": "..."})
ONE_LINE = EXAMPLE.replace("\n", "")  # the same call on one line, as an error quotes it


def instructions(tools: Sequence[ToolSpec]) -> str:
    """What the system prompt adds so that a model can call the tools in its text: the grammar and the tools."""
    listing = "\n".join(
        f"- {t.name}: {t.description} Arguments (JSON schema): {json.dumps(t.parameters, separators=(',', ':'))}"
        for t in tools
    )
    return (
        "Call a tool by writing a block like this, its opening tag at the start of a line:\n"
        f"{EXAMPLE}\n"
        "One block per call, a JSON object with the tool's name and its arguments between the tags; the calls run in "
        "the order written and each gets its result in the next message. A tag inside a sentence, a code block or a "
        "quoted line is not a call; a block that does not follow this format is answered with an error. The tools:\n"
        + listing
    )


def parse_tool_calls(text: str) -> tuple[ToolCall, ...]:
    """The calls written in ``text`` by the grammar, in order (near misses as invalid calls), within the bounds."""
    found = []
    for index, (name, arguments, problem) in enumerate(_blocks(text[:MAX_SCANNED_CHARS])):
        if index == MAX_CALLS:
            break
        call_id = f"text_{index}"
        found.append(
            ToolCall(name, None, call_id, TEXT, problem=problem)
            if problem
            else model_call(name, arguments, call_id, TEXT)
        )
    return tuple(found)


def _blocks(text: str) -> Iterator[tuple[str, object, str | None]]:
    """Each block whose opening tag starts a line outside a code fence and a quote: ``(name, arguments, problem)``,
    ``problem`` None for a call written by the grammar. What follows a closing tag on its line is text."""
    fenced, position = False, 0
    while position <= len(text):
        line_end = _line_end(text, position)
        line = text[position:line_end]
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and not _QUOTED.match(line) and (opening := _OPENING.match(line)):
            start = position + opening.end()
            closing = text.find(CLOSE, start)
            if closing < 0:
                yield "", None, _near_miss(f"no {CLOSE} closes the {OPEN} block")
                return
            yield _envelope(text[start:closing])
            line_end = _line_end(text, closing + len(CLOSE))
        position = line_end + 1


def _line_end(text: str, position: int) -> int:
    end = text.find("\n", position)
    return len(text) if end < 0 else end


def _envelope(body: str) -> tuple[str, object, str | None]:
    """A block's content read by the grammar: the call, or why it is not one."""
    try:
        value = _DECODER.decode(body.strip())
    except RecursionError:
        return "", None, _near_miss(f"its JSON is nested deeper than {MAX_JSON_DEPTH} levels")
    except ValueError as err:
        detail = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
        return "", None, _near_miss(f"the text between the tags is not one JSON object ({detail})")
    if nesting_depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return "", None, _near_miss(f"its JSON is nested deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(value, dict):
        return "", None, _near_miss(f"the text between the tags is a JSON {type(value).__name__}, not an object")
    name = value.get("name")
    if not isinstance(name, str):
        return "", None, _near_miss('the object has no string "name"')
    extra = sorted(set(value) - ENVELOPE_KEYS)
    if extra:
        return (
            name,
            None,
            _near_miss(f'the object has key(s) {", ".join(map(repr, extra))} besides "name" and "arguments"'),
        )
    return name, value.get("arguments"), None


def _near_miss(why: str) -> str:
    """The error an attempted call that does not parse gets back, with the format to use."""
    return f"not a tool call in the documented format: {why}; write {ONE_LINE}"
