"""The harness version: the details of the agent loop that change what an agent faces but are no setting of the
catalog, named and hashed as one, so that two experiments run by different loops can be told apart.

What it holds: the tools as they are offered (names, descriptions, argument schemas, ``give_up`` included), what a
tool result says of a call the turn did not execute, the prompt of the model's own compaction, the instructions
that describe the tools in the text for models without native tool calling, how many frontier tiles the map aid
lists, the legend of the text map view, and the token estimator that trims requests to the context budget (its
answers on fixed probes, so that an edited estimator changes the hash). ``HARNESS_VERSION`` names it;
``harness_hash`` is SHA-256 of its canonical JSON. Each experiment records both (``experiments.harness_version``,
``harness_hash``; the description itself once per hash in ``harnesses``); reports name groups run by different
harnesses.

A change to any of these is a new harness: give it a new ``HARNESS_VERSION`` (``tests/unit/test_harness.py`` holds
each version to its hash, and fails until the new one is named).
"""

from __future__ import annotations

import hashlib
import json

from oriole.core.known_map import TEXT_LEGEND
from oriole.core.memory import COMPACTION_PROMPT, FRONTIER_TILES
from oriole.core.requests import tool_json
from oriole.core.text_tool_calls import instructions
from oriole.core.tools import tool_specs
from oriole.core.turn_loop import WHY_NOT_EXECUTED, estimate_tokens
from oriole.text import JsonObject

# 2: text tool calls by the <tool_call> grammar (issue 30 item 8); 3: the map aid (mapAid) apart from memory, the
# text map view (textView map), the model compaction by default (issue 30 item 9)
HARNESS_VERSION = "3"
# What the estimator is asked, to pin its arithmetic: text, nested JSON, characters JSON escapes.
ESTIMATOR_PROBES: tuple[object, ...] = ("", "x" * 41, {"position": [3, 4], "visible": {"walls": [[1, 2]]}}, "ümlaut \n")


def description() -> JsonObject:
    """The harness as one JSON object (what ``harnesses.body`` stores)."""
    offered = tool_specs(give_up=True)
    return {
        "version": HARNESS_VERSION,
        "tools": [tool_json(spec) for spec in offered],
        "not_executed": {str(reason): text for reason, text in WHY_NOT_EXECUTED.items()},
        "compaction_prompt": COMPACTION_PROMPT,
        "text_tool_instructions": instructions(offered),
        "frontier_tiles": FRONTIER_TILES,
        "map_view_legend": TEXT_LEGEND,
        "token_estimator": {
            "rule": "characters of compact JSON / 4 + 1",
            "probes": [estimate_tokens(probe) for probe in ESTIMATOR_PROBES],
        },
    }


def harness_hash(body: JsonObject | None = None) -> str:
    """SHA-256 of the harness's canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(description() if body is None else body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
