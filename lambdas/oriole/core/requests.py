"""What a model call sent, stored and rebuilt: both directions in one place, so that they cannot drift apart.

A call's row keeps the messages it added since the previous call of its turn (``request_messages``) and, in its
``request`` record, everything else it sent: the system prompt, the tools and the agent's settings (the model,
its generation settings) as hashes of parts stored once (``request_parts``), the earlier turns the memory mode
carried (their numbers, after trimming), how many recent actions the turn context kept after trimming, whether
tool calls travelled in the text, and the failed attempts before the answer. ``call_record`` writes it;
``rebuild_turn`` gives back, from the stored rows, each call's request exactly as the agent was given it (a picture
drawn again from its stored record by ``oriole.core.picture.regenerate``, checked by its hash), and
``request_json`` its provider-neutral JSON (a provider's ``wire_request`` makes the body it sent).

A record is a JSON object that grows by keys: a reader ignores keys it does not know, a writer adds its own
(``record["images"]`` for a call that sent pictures, for example) next to the ones here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from oriole.core.memory import StoredTurn, answer_message
from oriole.core.picture import Picture, PictureMismatch
from oriole.core.tools import ToolSpec
from oriole.core.turn_loop import (
    Message,
    ModelCall,
    ModelRequest,
    message_as_json,
    message_from_json,
    newest_picture_only,
)
from oriole.text import JsonObject, unescape

SYSTEM, TOOLS, SETTINGS = "system", "tools", "settings"


def part_hash(body: object) -> str:
    """A part's key: SHA-256 of its canonical JSON (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def tool_json(spec: ToolSpec) -> JsonObject:
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters}


@lru_cache(maxsize=32)
def _system_hash(system_prompt: str) -> str:
    """The system prompt's part hash: every call of an experiment sends the same prompt, hashed once."""
    return part_hash({"system": system_prompt})


def _tools_part(tools: tuple[ToolSpec, ...]) -> JsonObject:
    return {"tools": [tool_json(t) for t in tools]}


_TOOLS_HASHES: dict[int, tuple[tuple[ToolSpec, ...], str]] = {}  # id -> (the tools, their hash), the tools kept alive


def _tools_hash(tools: tuple[ToolSpec, ...]) -> str:
    """The tools' part hash, once per tuple of tools (an experiment's calls all send one; a tool's specification is
    a constant): every action of a baseline is a call, and hashing its tools was most of storing it."""
    known = _TOOLS_HASHES.get(id(tools))
    if known is not None and known[0] is tools:
        return known[1]
    if len(_TOOLS_HASHES) >= 32:
        _TOOLS_HASHES.clear()
    digest = part_hash(_tools_part(tools))
    _TOOLS_HASHES[id(tools)] = (tools, digest)
    return digest


def call_record(
    call: ModelCall, settings: Mapping[str, Any], carried: Sequence[int]
) -> tuple[JsonObject, dict[str, JsonObject]]:
    """A call's request record and the parts it names (hash -> body). ``carried`` are the numbers of the earlier
    turns the turn could carry, oldest first; the call carried the newest ``call.sent.carried_turns`` of them."""
    sent = call.sent
    if sent is None:
        raise ValueError("a model call without what it sent cannot be stored")
    bodies: dict[str, JsonObject] = {
        SYSTEM: {"system": sent.system_prompt},
        TOOLS: _tools_part(sent.tools),
        SETTINGS: {"settings": dict(settings)},
    }
    hashes = {
        SYSTEM: _system_hash(sent.system_prompt),
        TOOLS: _tools_hash(sent.tools),
        SETTINGS: part_hash(bodies[SETTINGS]),
    }
    record: JsonObject = {
        **hashes,
        "carried_turns": list(carried[len(carried) - sent.carried_turns :]) if sent.carried_turns else [],
    }
    if sent.context_actions is not None:
        record["context_actions"] = sent.context_actions
    if sent.text_tool_calls:
        record["text_tool_calls"] = True
    if call.response.retries:
        record["retries"] = call.response.retries
    if call.response.sent_sha256:
        record["sent_sha256"] = call.response.sent_sha256
    return record, {hashes[kind]: body for kind, body in bodies.items()}


@dataclass(frozen=True)
class StoredCall:
    """One stored model call, as ``rebuild_turn`` reads it (a ``model_calls`` row)."""

    turn: int
    index: int
    kind: str
    request_messages: tuple[JsonObject, ...]
    response: JsonObject
    record: JsonObject | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoredCall:
        """A row of ``model_calls``; one stored escaped (``response.escaped``) gets its strings back exactly."""
        messages, response = row["request_messages"], row["response"]
        if response.get("escaped"):
            messages, response = _unescaped(messages), _unescaped(response)
        return cls(row["turn_number"], row["call_index"], row["kind"], tuple(messages), response, row["request"])


@dataclass(frozen=True)
class RebuiltRequest:
    """A call's request as the agent was given it, the agent's settings, and what the record says of it."""

    call: StoredCall
    request: ModelRequest
    settings: JsonObject

    @property
    def carried_turns(self) -> list[int]:
        return list((self.call.record or {}).get("carried_turns", ()))


class NotRebuildable(ValueError):
    """A stored call that lacks what its request needs (written before requests were recorded)."""


Draw = Callable[[JsonObject], Picture]  # a stored picture record -> its picture (``oriole.core.picture.regenerate``)


def rebuild_turn(
    calls: Sequence[StoredCall],
    earlier: Mapping[int, StoredTurn],
    parts: Mapping[str, JsonObject],
    draw: Draw | None = None,
) -> list[RebuiltRequest]:
    """Each call's request of one turn, in order, from its stored calls, the earlier turns it may carry (by
    number, as ``Store.load_turn`` gives them), the stored parts and, for a turn that sent pictures, ``draw``."""
    rebuilt: list[RebuiltRequest] = []
    conversation: list[tuple[Message, JsonObject | None]] = []  # the turn's messages, each with its picture's record
    for call in calls:
        if call.record is None:
            raise NotRebuildable(f"turn {call.turn} call {call.index} was stored without its request record")
        new = [(message_from_json(m), m.get("picture")) for m in call.request_messages]
        if call.kind == "turn":
            conversation += new
            carried = [m for number in call.record["carried_turns"] for m in _turn(earlier, number, call).messages()]
            (context, picture), rest = conversation[0], conversation[1:]
            current = [(_trimmed(context, call.record.get("context_actions")), picture), *rest]
            messages = carried + _pictured(current, draw, call)
            conversation.append((answer_message(call.response, call.record.get("text_tool_calls", False)), None))
        else:
            messages = _pictured(new, draw, call)
        system, tools, settings = (_part(parts, call, call.record, kind) for kind in (SYSTEM, TOOLS, SETTINGS))
        request = ModelRequest(system["system"], tuple(ToolSpec(**t) for t in tools["tools"]), tuple(messages))
        rebuilt.append(RebuiltRequest(call, request, settings["settings"]))
    return rebuilt


def _pictured(
    messages: Sequence[tuple[Message, JsonObject | None]], draw: Draw | None, call: StoredCall
) -> list[Message]:
    """The messages as sent: the newest picture drawn again on its message, the others left out as the turn loop
    left them out (``newest_picture_only``; only the newest is drawn)."""
    newest = max((i for i, (_, record) in enumerate(messages) if record is not None), default=None)
    plain = [m for m, _ in messages]
    if newest is None:
        return plain
    if draw is None:
        raise NotRebuildable(f"turn {call.turn} call {call.index} sent a picture, and nothing was given to draw it")
    record = messages[newest][1]
    assert record is not None, "the newest message with a picture record"
    try:
        plain[newest] = replace(plain[newest], picture=draw(record))
    except PictureMismatch as error:
        raise NotRebuildable(f"turn {call.turn} call {call.index}: {error}") from None
    return list(newest_picture_only(plain))


def request_json(request: ModelRequest) -> JsonObject:
    """A request as provider-neutral JSON (what a baseline was given; a transcript's common form)."""
    return {
        "system": request.system_prompt,
        "tools": [tool_json(t) for t in request.tools],
        "messages": [message_as_json(m) for m in request.messages],
    }


def _turn(earlier: Mapping[int, StoredTurn], number: int, call: StoredCall) -> StoredTurn:
    try:
        return earlier[number]
    except KeyError:
        raise NotRebuildable(f"turn {call.turn} call {call.index} carried turn {number}, which is not stored") from None


def _part(parts: Mapping[str, JsonObject], call: StoredCall, record: JsonObject, kind: str) -> JsonObject:
    try:
        return parts[record[kind]]
    except KeyError:
        raise NotRebuildable(f"turn {call.turn} call {call.index}: its {kind} part is not stored") from None


def _trimmed(context: Message, kept: int | None) -> Message:
    """The turn context as a call sent it: its oldest recent actions left out down to the ``kept`` the call
    recorded (a later call of a turn may have trimmed more than the first, whose context is the one stored)."""
    if kept is None or not isinstance(context.content, dict) or "recent_actions" not in context.content:
        return context
    recent = context.content["recent_actions"]
    return replace(context, content={**context.content, "recent_actions": recent[len(recent) - kept :]})


def _unescaped(value: object) -> object:
    if isinstance(value, str):
        return unescape(value)
    if isinstance(value, list):
        return [_unescaped(v) for v in value]
    if isinstance(value, dict):
        return {k: _unescaped(v) for k, v in value.items() if k != "escaped"}
    return value
