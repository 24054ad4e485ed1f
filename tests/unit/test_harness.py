"""The harness version: the loop's details that are no setting, named and hashed as one; a change to any of them is
a new version with a new hash."""

from __future__ import annotations

from dataclasses import replace

import pytest

from oriole.core import harness, known_map, memory, tools, turn_loop

# Every harness version and its hash. A change to the harness fails here until it is named: give HARNESS_VERSION a
# new name and add it with its hash (an experiment records both; reports tell groups of different harnesses apart).
KNOWN = {
    "1": "108df36f8ed57baa2c6d5b38f73c8f07d14182d65f8d0cb17190b028cc6d57be",
    "2": "9de65d0521af1f346a80c3d7c5424c88414c02735d42647966b92f1a04196516",  # text tool calls: <tool_call> blocks
    "3": "08679163c825925393e4cd8b5907222f36094b70ef15577b03a90c4557e8fe3e",  # mapAid, textView map
}


def test_the_harness_is_named_by_its_version_and_that_version_by_its_hash():
    assert harness.harness_hash() == KNOWN[harness.HARNESS_VERSION], (
        "the harness changed: name a new HARNESS_VERSION in oriole/core/harness.py and add its hash to KNOWN"
    )


def test_it_holds_what_the_loop_says_and_does_beside_the_settings():
    body = harness.description()
    assert [t["name"] for t in body["tools"]] == [t.name for t in tools.tool_specs(give_up=True)]
    assert body["compaction_prompt"] == memory.COMPACTION_PROMPT
    assert body["frontier_tiles"] == memory.FRONTIER_TILES
    assert body["map_view_legend"] == known_map.TEXT_LEGEND
    assert "give_up" in body["text_tool_instructions"]
    assert set(body["not_executed"]) == {str(reason) for reason in turn_loop.WHY_NOT_EXECUTED}
    assert body["token_estimator"]["probes"] == [turn_loop.estimate_tokens(p) for p in harness.ESTIMATOR_PROBES]


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.setattr(harness, "COMPACTION_PROMPT", memory.COMPACTION_PROMPT + " Be brief."),
        lambda m: m.setattr(harness, "FRONTIER_TILES", 21),
        lambda m: m.setattr(
            harness, "tool_specs", lambda give_up: (replace(tools.TOOL_SPECS[0], description="Go north."),)
        ),
        lambda m: m.setattr(harness, "estimate_tokens", lambda value: len(str(value)) // 3 + 1),
        lambda m: m.setitem(turn_loop.WHY_NOT_EXECUTED, next(iter(turn_loop.WHY_NOT_EXECUTED)), "skipped"),
    ],
    ids=["compaction prompt", "frontier", "tool wording", "estimator", "not-executed text"],
)
def test_any_detail_changed_is_another_hash(monkeypatch, change):
    before = harness.harness_hash()
    change(monkeypatch)
    assert harness.harness_hash() != before
