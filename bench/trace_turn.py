"""What one Bedrock turn crosses: the runtime files and module hops of a warm agent task.

A Bedrock experiment runs through the real local state machine (a real bedrock-runtime client under botocore's
Stubber, the embedded database or ``DATABASE_URL``); its second agent task (a warm container's) is traced with
``sys.setprofile``: every function called in the runtime package, with the runtime frames on its stack. Reports the
files entered, the caller -> callee module pairs, the modules on the deepest stack, and which functions of the store
the lifecycle calls and which rules of the core the store calls (a storage layer that holds rules shows up there).
Run with ``python bench/trace_turn.py`` (``--json`` for one JSON object).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.stub import Stubber

import oriole
from oriole.store import db
from oriole_workstation.database import local_url, prepare
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws

RUNTIME = os.path.realpath(os.path.dirname(oriole.__file__)) + "/"
TASK = "oriole-InvokeBedrockAgent"
Stack = tuple[tuple[str, str], ...]  # (runtime file, function), outermost first


def converse_answer(*tools: str) -> dict[str, Any]:
    content = [{"toolUse": {"toolUseId": f"t{i}", "name": name, "input": {}}} for i, name in enumerate(tools)]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
        "metrics": {"latencyMs": 5},
    }


@contextmanager
def profiled(calls: list[Stack]) -> Iterator[None]:
    """Record the runtime stack of every call made in the block."""

    def profile(frame: Any, event: str, arg: object) -> None:
        if event != "call":
            return
        stack = []
        while frame is not None:
            path = os.path.realpath(frame.f_code.co_filename)
            if path.startswith(RUNTIME):
                stack.append((path[len(RUNTIME) :], frame.f_code.co_name))
            frame = frame.f_back
        if stack:
            calls.append(tuple(reversed(stack)))

    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(None)


def traced_turns(url: str) -> list[list[Stack]]:
    """The stacks of each agent task of a four-turn Bedrock experiment on perfect-7."""
    prepare(url).conn.close()
    client = boto3.client("bedrock-runtime", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    turns: list[list[Stack]] = []
    with Stubber(client) as stub, LocalAws(url, bedrock_client=client) as aws:
        for _ in range(4):
            stub.add_response("converse", converse_answer("move_east", "move_west"))
        task = aws._handlers[TASK]

        def traced(event: dict, context: Any) -> Any:
            turns.append([])
            with profiled(turns[-1]):
                return task(event, context)

        aws._handlers[TASK] = traced
        launcher = aws.launcher(poll_seconds=0.05)
        execution = launcher.start(
            {
                "mazeId": "perfect-7",
                "llmProvider": "bedrock",
                "modelName": "anthropic.claude-test-v1:0",
                "config": {"maxMoves": 8, "maxActionsPerTurn": 2},
            }
        )
        launcher.follow(execution, Results(db.connect(url)))
    return turns


def _layer(path: str) -> str:
    return path.split("/")[0] if "/" in path else "foundation"


def _modules(stack: Stack) -> list[str]:
    """The runtime files of a stack, each once, outermost first."""
    seen: list[str] = []
    for path, _ in stack:
        if path not in seen:
            seen.append(path)
    return seen


def _crossing(hops: set[tuple[str, str, str]], caller: str, callee: str) -> list[str]:
    """The functions of layer ``callee`` that layer ``caller`` calls."""
    return sorted(f"{b}:{function}" for a, b, function in hops if (_layer(a), _layer(b)) == (caller, callee))


def figures(calls: list[Stack]) -> dict[str, Any]:
    hops = {(a[0], b[0], b[1]) for stack in calls for a, b in itertools.pairwise(stack) if a[0] != b[0]}
    deepest = max((_modules(stack) for stack in calls), key=len)
    return {
        "files": sorted({path for stack in calls for path, _ in stack}),
        "module_pairs": len({(a, b) for a, b, _ in hops}),
        "deepest_stack": deepest,
        "lifecycle_calls_into_store": sorted(
            f"{b}:{f}" for a, b, f in hops if (_layer(a), _layer(b)) == ("lifecycle", "store")
        ),
        "store_calls_into_core": sorted(f"{b}:{f}" for a, b, f in hops if (_layer(a), _layer(b)) == ("store", "core")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()
    found = figures(traced_turns(local_url())[1])  # the second task: a warm container's
    if args.json:
        print(json.dumps(found))
        return
    print(f"files entered: {len(found['files'])}  ({', '.join(found['files'])})")
    print(f"caller -> callee module pairs: {found['module_pairs']}")
    print(f"modules on the deepest stack: {len(found['deepest_stack'])}  ({' -> '.join(found['deepest_stack'])})")
    for key in ("lifecycle_calls_into_store", "store_calls_into_core"):
        print(f"{key.replace('_', ' ')}: {len(found[key])}  ({', '.join(found[key])})")


if __name__ == "__main__":
    main()
