"""A replay compared with its original, turn by turn: proof that the harness reproduces a trajectory.

A replay (``oriole replay``) plays an experiment again through the same state machine and turn loop, every model
call answered with the answer the original stored (``oriole.providers.replay``), into a scratch experiment
(``experiments.replay_of``). Both are stored the same way, so the comparison is of stored rows: per turn, each
call's request (its new messages, pictures by their hash, and its request record: the system prompt, tools and
settings by hash, the carried turns, the trims, text tool calls, retries), first the hash of the bytes it sent
against the hash of the bytes today's adapter would send for it (a changed adapter differs there even when the
provider-neutral request is the same), and what the answer was read as, then the actions and their results, then
how the turn ended; last, how the experiment ended and every scored counter (tokens, cost, moves, wall bumps,
recalls, invalid calls, unique tiles, goal first seen and reached). An original ended by something the harness cannot
reproduce (the clock, a stop, a provider's failure: ending censored or error) is compared up to its recorded end,
and the comparison says how it ended. The first difference is named by turn, step and what differs, with the
expected (original) and the replayed value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from oriole_workstation.provenance import counted

_TURNS = """SELECT turn_number, first_step, action_count, end_reason, closing_messages
              FROM turns WHERE experiment_id = %s ORDER BY turn_number"""
_CALLS = """SELECT turn_number, call_index, kind, request_messages, request, response
              FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index"""
_ACTIONS = """SELECT turn_number, step_number, action_type, tool_name, arguments, reasoning, from_x, from_y, to_x,
                     to_y, success, error, tiles_seen, goal_visible
                FROM actions WHERE experiment_id = %s ORDER BY step_number"""
# how the experiment ended, then every scored counter: the tokens and cost of its committed turns (a replay has no
# failed attempts to pay for; it is priced from the original's snapshot)
_ENDING = """SELECT status, ending, ending_cause, failure_reason, goal_found, goal_reached_step, goal_first_seen_step,
                    action_count, turn_count, move_count, failed_move_count, recall_count, invalid_call_count,
                    unique_tiles_visited, input_tokens - failed_input_tokens AS input_tokens,
                    output_tokens - failed_output_tokens AS output_tokens, cost_usd - failed_cost_usd AS cost_usd
               FROM experiments WHERE id = %s"""
# how an experiment ended that the harness cannot reproduce: by the clock, a stop, a quota or a failure outside the
# agent. Its replay is compared up to the recorded end (and on every counter), not on the ending itself.
_ENDED_FROM_OUTSIDE = ("censored", "error")
_HOW_IT_ENDED = ("status", "ending", "ending_cause", "failure_reason")
# what an answer reports of who answered, stored in a call's response since issue 31: an original stored before then
# lacks it, and its replay (which reads the same answer) is compared without it
_REPORTED = ("model", "system_fingerprint")
_CALL_FIELDS = ("kind", "request_messages", "request", "response")
_ACTION_FIELDS = (
    "action_type",
    "tool_name",
    "arguments",
    "reasoning",
    "from_x",
    "from_y",
    "to_x",
    "to_y",
    "success",
    "error",
    "tiles_seen",
    "goal_visible",
)


@dataclass(frozen=True)
class Stored:
    """One experiment's rows, as the comparison reads them."""

    ending: dict
    turns: list[dict]
    calls: list[dict]
    actions: list[dict]

    @classmethod
    def load(cls, conn, experiment_id: int) -> Stored:
        return cls(
            conn.execute(_ENDING, (experiment_id,)).fetchone(),
            *(conn.execute(query, (experiment_id,)).fetchall() for query in (_TURNS, _CALLS, _ACTIONS)),
        )

    def of_turn(self, rows: list[dict], number: int) -> list[dict]:
        return [row for row in rows if row["turn_number"] == number]


@dataclass(frozen=True)
class Comparison:
    experiment_id: int
    replay_id: int | None
    turns: int
    actions: int
    first_difference: dict | None
    recorded_end: str | None = None  # how an original ended that its replay cannot reproduce (the clock, an error)

    @property
    def identical(self) -> bool:
        return self.first_difference is None

    def as_json(self) -> dict:
        return {
            "experiment_id": self.experiment_id,
            "replay_id": self.replay_id,
            "identical": self.identical,
            "turns": self.turns,
            "actions": self.actions,
            "first_difference": self.first_difference,
            "recorded_end": self.recorded_end,
        }


def compare(original: Stored, replayed: Stored, experiment_id: int, replay_id: int | None) -> Comparison:
    """The replay against the original (pure: both already loaded)."""
    original, replayed = _without_own_id(original, experiment_id), _without_own_id(replayed, replay_id)
    end = _recorded_end(original)
    if end is not None:  # compared up to the original's last turn: the replay cannot meet the clock or the failure
        replayed = _up_to(replayed, len(original.turns))
    difference = _first_difference(original, replayed, skip=_HOW_IT_ENDED if end else ())
    return Comparison(experiment_id, replay_id, len(replayed.turns), len(replayed.actions), difference, end)


def _recorded_end(original: Stored) -> str | None:
    """``turn 4: censored (max_duration)``: where and how an original ended that no replay reproduces, or None."""
    ending = original.ending
    if ending.get("ending") not in _ENDED_FROM_OUTSIDE:
        return None
    cause = f" ({ending['ending_cause']})" if ending.get("ending_cause") else ""
    return f"turn {len(original.turns)}: {ending['ending']}{cause}"


def _up_to(stored: Stored, turns: int) -> Stored:
    """The rows of the first ``turns`` turns (what the replay played past them is not compared)."""

    def kept(rows: list[dict]) -> list[dict]:
        return [row for row in rows if row["turn_number"] <= turns]

    return Stored(stored.ending, kept(stored.turns), kept(stored.calls), kept(stored.actions))


def _without_own_id(stored: Stored, experiment_id: int | None) -> Stored:
    """The rows with the experiment's own id left out of its failure reason (an execution's name, exp-N-part-K,
    or "experiment N" in a closing error): a replay has another id, and would otherwise differ from every failed
    original that names itself."""
    reason = stored.ending["failure_reason"]
    if reason is None or experiment_id is None:
        return stored
    unnamed = re.sub(rf"\b(experiment |exp-){experiment_id}\b", r"\1{id}", reason)
    return Stored({**stored.ending, "failure_reason": unnamed}, stored.turns, stored.calls, stored.actions)


def _first_difference(original: Stored, replayed: Stored, skip: tuple[str, ...] = ()) -> dict | None:
    for number in range(1, max(len(original.turns), len(replayed.turns)) + 1):
        expected, got = original.of_turn(original.turns, number), replayed.of_turn(replayed.turns, number)
        step = (expected or got)[0]["first_step"]  # the turn's calls come before its first action
        if not expected or not got:  # one played a turn the other did not
            return _difference(
                number, step, "turn", _turn_summary(expected, original), _turn_summary(got, replayed), BEFORE
            )
        if found := (
            _calls_difference(
                number, step, original.of_turn(original.calls, number), replayed.of_turn(replayed.calls, number)
            )
            or _actions_difference(
                number, original.of_turn(original.actions, number), replayed.of_turn(replayed.actions, number)
            )
        ):
            return found
        for field in ("end_reason", "closing_messages"):
            if expected[0][field] != got[0][field]:
                return _difference(
                    number,
                    step - 1 + expected[0]["action_count"],
                    f"turn {field}",
                    expected[0][field],
                    got[0][field],
                    AFTER,
                )
    for field, expected in original.ending.items():
        if field not in skip and replayed.ending[field] != expected:
            last = original.turns[-1]["turn_number"] if original.turns else 0
            return _difference(
                last, original.ending["action_count"], f"experiment {field}", expected, replayed.ending[field], AFTER
            )
    return None


def _calls_difference(turn: int, step: int, expected: list[dict], got: list[dict]) -> dict | None:
    for index in range(max(len(expected), len(got))):
        if index >= len(expected) or index >= len(got):
            return _difference(turn, step, f"call {index + 1}", _call(expected, index), _call(got, index), BEFORE)
        sent, rebuilt = _sent(expected[index]), _sent(got[index])
        if sent is not None and sent != rebuilt:  # the bytes first: what the server was really sent
            return _difference(turn, step, f"call {index + 1} request bytes (sent_sha256)", sent, rebuilt, BEFORE)
        for field in _CALL_FIELDS:
            was, now = _field(expected[index], field), _field(got[index], field)
            if field == "response" and isinstance(was, dict) and isinstance(now, dict):
                now = {key: part for key, part in now.items() if key in was or key not in _REPORTED}
            if was != now:
                what = "request" if field.startswith("request") else field
                return _difference(turn, step, f"call {index + 1} {what} ({field})", was, now, BEFORE)
    return None


def _field(call: dict, field: str) -> object:
    """A call's field as compared: its request record without the hash of the bytes (compared first, and only where
    the original stored one)."""
    value = call[field]
    if field == "request" and isinstance(value, dict):
        return {key: part for key, part in value.items() if key != "sent_sha256"}
    return value


def _sent(call: dict) -> str | None:
    """The hash of the request bytes a call sent (None: stored before issue 31, or a baseline's)."""
    record = call["request"]
    return record.get("sent_sha256") if isinstance(record, dict) else None


def _actions_difference(turn: int, expected: list[dict], got: list[dict]) -> dict | None:
    for index in range(max(len(expected), len(got))):
        if index >= len(expected) or index >= len(got):
            step = (expected if index < len(expected) else got)[index]["step_number"]
            return _difference(turn, step, "action", _action(expected, index), _action(got, index))
        for field in _ACTION_FIELDS:
            if expected[index][field] != got[index][field]:
                return _difference(
                    turn, expected[index]["step_number"], f"action {field}", expected[index][field], got[index][field]
                )
    return None


def _call(calls: list[dict], index: int) -> dict | None:
    return None if index >= len(calls) else {field: calls[index][field] for field in _CALL_FIELDS}


def _action(actions: list[dict], index: int) -> dict | None:
    return None if index >= len(actions) else {field: actions[index][field] for field in _ACTION_FIELDS}


def _turn_summary(turn: list[dict], stored: Stored) -> dict | None:
    """A turn one side played, or how the side that did not play it ended."""
    if turn:
        return {"end_reason": turn[0]["end_reason"], "actions": turn[0]["action_count"]}
    return {"status": stored.ending["status"], "failure_reason": stored.ending["failure_reason"]}


# Where a difference lies against the steps (its ``at``): a model call and a turn played come before the turn's first
# step, an action is at its step, a turn's end and the experiment's after its last.
BEFORE, AT, AFTER = "before step", "step", "after step"


def _difference(turn: int, step: int, what: str, expected: object, got: object, at: str = AT) -> dict:
    return {"turn": turn, "step": step, "at": at, "what": what, "expected": expected, "got": got}


def describe(comparison: Comparison) -> str:
    """The comparison in a line or two, for a person."""
    head = (
        f"experiment {comparison.experiment_id} replayed as {comparison.replay_id}: "
        f"{counted(comparison.turns, 'turn')}, {counted(comparison.actions, 'action')}, "
    )
    d = comparison.first_difference
    if d is None and comparison.recorded_end:
        return head + f"identical up to its recorded end (the original ended at {comparison.recorded_end})"
    if d is None:
        return head + "identical"
    return (
        head + f"differs first at turn {d['turn']}, {d['at']} {d['step']}, {d['what']}:\n"
        f"  expected {d['expected']!r}\n  got      {d['got']!r}"
    )
