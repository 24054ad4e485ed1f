"""The text tool-call grammar (oriole.core.text_tool_calls): only calls written in the documented format execute,
a quoted or rejected call does not, and a near miss is answered with an error as a malformed native call is."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from oriole.core.maze import Maze
from oriole.core.text_tool_calls import CLOSE, OPEN, block, parse_tool_calls
from oriole.core.tools import TOOL_SPECS, RecallWindow, Rules, WorldState, execute

NAMES = [spec.name for spec in TOOL_SPECS]
RULES = Rules(Maze.from_rows([[0] * 5], (0, 0), (4, 0)), 1, "reach", 10, 5)
# Prose a model writes between its calls: no line of it starts a block.
PROSE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60).map(
    lambda text: "\n".join("so " + line for line in text.split("\n"))
)
ARGUMENTS = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"reasoning": st.text(max_size=30)}))
CALLS = st.lists(st.tuples(st.sampled_from(NAMES), ARGUMENTS), max_size=6)


def invalid(call) -> str:
    record = execute(call, WorldState((0, 0)), RULES, RecallWindow(5))
    assert record.action_type == "invalid"
    return record.error or ""


@given(CALLS, st.lists(PROSE, min_size=7, max_size=7))
def test_calls_written_by_the_grammar_are_read_in_order_whatever_prose_surrounds_them(calls, prose):
    text = "".join(f"{prose[i]}\n{block(name, arguments)}\n" for i, (name, arguments) in enumerate(calls)) + prose[-1]
    read = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in read] == calls
    assert all(c.problem is None and c.source == "text" for c in read)


@given(CALLS, PROSE)
def test_a_call_quoted_inside_a_sentence_a_code_fence_or_a_quote_is_never_executed(calls, prose):
    written = [block(name, arguments) for name, arguments in calls]
    inline = " ".join(f"{prose} I could {call.replace(chr(10), ' ')} but will not." for call in written)
    fenced = "\n".join(f"```json\n{call}\n```" for call in written)
    quoted = "\n".join("> " + call.replace("\n", "\n> ") for call in written)
    assert parse_tool_calls("\n".join((inline, fenced, quoted))) == ()


@given(st.sampled_from(NAMES), st.text(max_size=40))
def test_a_block_that_breaks_the_grammar_is_a_near_miss_answered_with_what_was_wrong(name, noise):
    near_misses = [
        f"{OPEN}{{'name': '{name}'}}{CLOSE}",  # single quotes
        f'{OPEN}{{"name": "{name}", "arguments": {{}}{CLOSE}',  # a missing brace
        f'{OPEN}{{"tool": "{name}"}}{CLOSE}',  # no name
        f'{OPEN}{{"name": "{name}", "id": 1}}{CLOSE}',  # another key
        f'{OPEN}["{name}"]{CLOSE}',  # not an object
        f'{OPEN}{{"name": "{name}"}}',  # never closed
    ]
    for text in near_misses:
        [call] = parse_tool_calls(f"{json.dumps(noise)}\n{text}\n")
        assert call.arguments is None and call.problem and call.problem.startswith("not a tool call in the documented")
        assert invalid(call) == call.problem  # fed back as a malformed native call's error is


@given(st.text(max_size=300))
def test_any_text_reads_as_calls_each_valid_or_invalid_with_a_reason(text):
    for call in parse_tool_calls(text):
        record = execute(call, WorldState((0, 0)), RULES, RecallWindow(5))
        assert record.action_type in (*NAMES, "invalid") and (record.action_type != "invalid" or record.error)


def test_the_arguments_are_validated_as_a_native_calls_are():
    [call] = parse_tool_calls(block("move_east", {"reasoning": 3}))
    assert call.problem is None and invalid(call) == "'reasoning' must be a string"
    [unknown] = parse_tool_calls(block("fly"))
    assert invalid(unknown).startswith("unknown tool 'fly'")
