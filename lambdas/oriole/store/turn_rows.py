"""A turn's rows, read and written: the one place where experiment columns meet the core's turn state.

``LoadedTurn`` is the row ``Store.load_turn`` reads: the turn's state (``oriole.core.turn.TurnState``, its
experiment's columns under their own names) and the maze's row unless the caller cached it. ``turn_write`` turns
what a played turn leaves (``oriole.core.turn.PlayedTurn``) into the rows and the experiment delta
``Store.commit_turn`` sends as one statement; ``failed_attempt_write`` turns the calls a failed attempt of a turn got
answered (``oriole.core.turn.Turn.answered``) into the rows ``Store.record_failed_attempt`` sends as one statement.

Model text is data and reaches the database only through ``turn_write``, which makes it storable (see
``oriole.text``): a model call whose text holds a NUL or a lone surrogate is stored escaped, marked
``response.escaped``, and ``oriole.text.unescape`` gives each of its strings back exactly; the turn's actions
keep a readable copy with U+FFFD in place of such characters. The turn is kept either way.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar

from oriole.core import prices
from oriole.core.memory import StoredTurn, message_tokens
from oriole.core.requests import call_record
from oriole.core.tools import ActionRecord
from oriole.core.turn import (
    WORLD_COUNTERS,
    WORLD_VALUES,
    AnsweredCall,
    CommittedTurn,
    ExperimentState,
    PlayedTurn,
    RecentAction,
    TurnState,
)
from oriole.core.turn_loop import Message, ModelCall, ModelResponse, Replay, message_as_json, response_as_json
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import ExperimentStatus
from oriole.store.mazes import MazeRow
from oriole.text import JsonObject, escaped, replaced, storable_json, stored_message

COLUMNS: tuple[str, ...] = tuple(field.name for field in fields(ExperimentState))  # what a turn reads, in order


@dataclass(frozen=True)
class TurnWrite:
    """Everything one turn writes, in the shapes ``Store.commit_turn`` sends as one statement. ``encoded`` holds the
    JSON text of the three lists of rows (``actions``, ``calls``, ``parts``) as sent: each list is encoded once, by
    the check that finds it storable (``_storable_rows``), not again by the driver."""

    turn: JsonObject
    actions: list[JsonObject]
    calls: list[JsonObject]
    experiment: JsonObject
    parts: list[JsonObject]  # what the calls' request records name by hash: {"hash", "body"}
    encoded: Mapping[str, str]


@dataclass(frozen=True)
class FailedAttemptWrite:
    """What a failed attempt of a turn writes: its row (``attempt``: a fresh id, so that a statement sent again
    after a dropped connection writes nothing twice), the calls the server answered, each with its cost, and what
    they add to the experiment's totals (``spent``)."""

    attempt: JsonObject
    calls: list[JsonObject]
    spent: JsonObject


def _json_object_of(columns: Iterable[str], alias: str) -> str:
    """SQL building a JSON object of ``alias``'s ``columns``, each under its own name: ``json``, not ``jsonb``,
    since it is only read back (``jsonb`` would be built, its keys sorted, then printed again as text)."""
    return "json_build_object(" + ", ".join(f"'{c}', {alias}.{c}" for c in columns) + ")"


def _json_array_of(columns: Iterable[str], alias: str) -> str:
    """SQL building a JSON array of ``alias``'s ``columns`` in order: a row read many times a turn, without its
    names (the dataclass whose fields these are takes them in the same order)."""
    return "json_build_array(" + ", ".join(f"{alias}.{c}" for c in columns) + ")"


@dataclass(frozen=True)
class LoadedTurn:
    """The turn's state as one statement loads it, and the maze's row (None when the caller has it cached)."""

    state: TurnState
    maze_row: MazeRow | None

    # What ``Store.load_turn`` selects besides the experiment's columns, in ``from_values``' order: the maze's
    # row, the committed turn's (each a JSON object of its dataclass's fields), the recent actions' (each a JSON
    # array of its dataclass's fields: up to 50 a turn), earlier turns.
    MAZE_JSON: ClassVar[str] = _json_object_of((f.name for f in fields(MazeRow)), "m")
    COMMITTED_JSON: ClassVar[str] = _json_object_of((f.name for f in fields(CommittedTurn)), "t")
    ACTION_JSON: ClassVar[str] = _json_array_of(RecentAction._fields, "r")

    @classmethod
    def from_values(cls, *values: Any) -> LoadedTurn:
        """The row of ``Store.load_turn`` (psycopg's ``args_row``): the experiment's ``COLUMNS``, then the maze,
        the committed turn, the recent actions, the earlier turns and a replay's recorded calls, as JSON."""
        columns = dict(zip(COLUMNS, values[: len(COLUMNS)], strict=True))
        maze, committed, recent, earlier, recorded = values[len(COLUMNS) :]
        state = ExperimentState(
            **columns
            | {"status": ExperimentStatus(columns["status"]), "config": ExperimentConfig.of(columns["config"])}
        )
        return cls(
            TurnState(
                experiment=state,
                recent_actions=tuple(map(RecentAction._make, recent)),
                committed=None if committed is None else CommittedTurn(**committed),
                earlier_turns=tuple(StoredTurn(**turn) for turn in earlier or ()),
                replay=None
                if recorded is None
                else Replay(recorded["provider"], state.turn_count + 1, tuple(recorded["calls"])),
            ),
            None if maze is None else MazeRow(**maze),
        )


def turn_write(state: TurnState, played: PlayedTurn, started_at: datetime) -> TurnWrite:
    """The turn's rows and the experiment's delta: counter increments (the SQL adds them; tokens and cost come from
    the turn row), the new position and values, whether the turn stalled, the memory state for the next turn, and
    what the requests left out or summarised (``played.context``). Each call row carries its request record
    (``oriole.core.requests``, with the agent's settings) and its answer."""
    outcome, world, experiment = played.outcome, played.world, state.experiment
    turn = _turn_row(played, started_at)
    turn_messages = [m for call in outcome.calls if call.kind == "turn" for m in call.new_messages]
    turn_messages += [
        Message("assistant", c.response.text, c.response.tool_calls) for c in outcome.calls if c.kind == "turn"
    ]
    turn |= {
        "closing_messages": replaced([message_as_json(m) for m in outcome.closing]),
        "message_tokens": message_tokens([*turn_messages, *outcome.closing]),
        "context": played.context,
    }
    delta = {column: getattr(world, field) - getattr(experiment, column) for column, field in WORLD_COUNTERS.items()}
    delta |= {column: getattr(world, field) for column, field in WORLD_VALUES.items()}
    delta |= {
        "current_x": world.position[0],
        "current_y": world.position[1],
        "agent_state": played.agent_state,
        "memory": replaced(played.memory),
        "stalled": played.stalled,
    }
    call_rows: list[JsonObject] = []
    named_parts: JsonObject = {}
    for index, call in enumerate(outcome.calls, 1):
        record, named = call_record(call, played.agent_settings, played.carried)
        call_rows.append(_call_row(index, call) | {"request": record})
        named_parts |= named
    actions, actions_json = _storable_rows([_action_row(a) for a in outcome.actions], replaced)
    calls, calls_json = _storable_rows(call_rows, _stored_call)
    parts, parts_json = _storable_rows([{"hash": h, "body": body} for h, body in named_parts.items()], replaced)
    return TurnWrite(
        turn, actions, calls, delta, parts, {"actions": actions_json, "calls": calls_json, "parts": parts_json}
    )


def _storable_rows(
    rows: list[JsonObject], storable: Callable[[JsonObject], JsonObject]
) -> tuple[list[JsonObject], str]:
    """``rows`` as they can be stored, and their JSON text. The encoding that finds nothing to make storable (nearly
    always) is the text sent; otherwise each row is made storable (``storable``) and the rows encoded again."""
    text = storable_json(rows)
    if text is None:
        rows = [storable(row) for row in rows]
        text = json.dumps(rows)
    return rows, text


def _turn_row(played: PlayedTurn, started_at: datetime) -> JsonObject:
    outcome, usage = played.outcome, played.outcome.usage
    return {
        "first_step": played.world.action_count - len(outcome.actions) + 1,
        "action_count": len(outcome.actions),
        "model_calls": len(outcome.calls),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "latency_ms": usage.latency_ms,
        "throttles": outcome.throttles,
        "cost_usd": played.cost_usd,
        "end_reason": outcome.end_reason,
        "started_at": started_at,
    }


def _call_row(index: int, call: ModelCall) -> JsonObject:
    r: ModelResponse = call.response
    return {
        "call_index": index,
        "request_messages": [message_as_json(m) for m in call.new_messages],
        "response": response_as_json(r),
        "input_tokens": r.usage.input_tokens,
        "output_tokens": r.usage.output_tokens,
        "latency_ms": r.usage.latency_ms,
        "stop_reason": r.stop_reason,
        "durations": r.durations,
        "throttles": r.throttles,
        "kind": call.kind,
        "answer": None if r.raw is None else base64.b64encode(r.raw).decode(),
    }


def _stored_call(row: JsonObject) -> JsonObject:
    """The call row as stored: escaped, and marked so, when any of its text cannot be stored as it came."""
    row, altered = escaped(row)
    if altered:
        row["response"]["escaped"] = True
    return row


def _action_row(a: ActionRecord) -> JsonObject:
    return {
        "step_number": a.step_number,
        "action_type": a.action_type,
        "tool_name": a.tool_name,
        "arguments": a.arguments,
        "reasoning": a.reasoning,
        "from_x": a.from_pos[0],
        "from_y": a.from_pos[1],
        "to_x": a.to_pos[0],
        "to_y": a.to_pos[1],
        "success": a.success,
        "error": a.error,
        "tiles_seen": a.tiles_seen,
        "goal_visible": a.goal_visible,
    }


def failed_attempt_write(
    state: TurnState, turn_number: int, answered: Sequence[AnsweredCall], error: BaseException, throttles: int
) -> FailedAttemptWrite:
    """The rows of an attempt of turn ``turn_number`` that failed with ``error`` after the server answered the calls
    in ``answered`` (``throttles``: the throttled attempts of the call that failed, which no answer carries). Each
    call's cost is what the experiment's tokens cost after it less before it (``prices.turn_cost``), so the
    experiment's cost stays exactly the cost of all its tokens, committed or not."""
    experiment = state.experiment
    before = tokens = (experiment.input_tokens, experiment.output_tokens)
    calls: list[JsonObject] = []
    for index, call in enumerate(answered, 1):
        r = call.response
        used = (r.usage.input_tokens, r.usage.output_tokens)
        cost = prices.turn_cost(tokens, used, experiment.config.pricing)
        tokens = (tokens[0] + used[0], tokens[1] + used[1])
        row = {
            "call_index": index,
            "kind": call.kind,
            "input_tokens": used[0],
            "output_tokens": used[1],
            "cost_usd": cost,
            "latency_ms": r.usage.latency_ms,
            "stop_reason": r.stop_reason,
            "throttles": r.throttles,
            # no request is stored for a failed attempt's call: the hash of the bytes it sent rides with its answer
            "response": response_as_json(r) | ({"sent_sha256": r.sent_sha256} if r.sent_sha256 else {}),
            "answer": None if r.raw is None else base64.b64encode(r.raw).decode(),
        }
        calls.append(_stored_call(row))
    attempt = {
        "attempt": str(uuid.uuid4()),
        "turn_number": turn_number,
        "error": stored_message(f"{type(error).__name__}: {error}" if str(error) else type(error).__name__),
        "throttles": throttles,
    }
    used = (tokens[0] - before[0], tokens[1] - before[1])
    spent = {
        "model_calls": len(calls),
        "input_tokens": used[0],
        "output_tokens": used[1],
        "cost_usd": prices.turn_cost(before, used, experiment.config.pricing),  # the calls' costs, telescoped
        "latency_ms": sum(c["latency_ms"] for c in calls),
        "throttles": throttles + sum(c["throttles"] for c in calls),
    }
    return FailedAttemptWrite(attempt, calls, spent)
