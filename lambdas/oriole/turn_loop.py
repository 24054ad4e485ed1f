"""The agent turn loop, shared by every provider and by the baseline agents.

One turn: build the context, ask the agent, validate and execute each tool call against the maze,
feed every result back, and repeat until the agent answers without a tool call, the turn's action
budget is spent, the goal is found, or the circuit breaker opens after consecutive invalid calls.
A provider only translates these neutral messages to its wire format and back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from oriole.tools import TOOL_SPECS, ActionRecord, Memory, Rules, ToolCall, ToolSpec, WorldState, execute, observation

CIRCUIT_BREAKER_THRESHOLD = 3


@dataclass(frozen=True)
class Message:
    """A neutral chat message. ``content`` is text, or a dict a provider serialises as JSON."""

    role: str
    content: str | dict | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0


@dataclass(frozen=True)
class ModelRequest:
    system_prompt: str
    tools: tuple[ToolSpec, ...]
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class ModelResponse:
    """What the agent answered: optional text and thinking, tool calls in order, usage, stop reason.

    ``durations`` holds what the provider reports about its own timing (Ollama's nanosecond fields, for
    example) and ``throttles`` how many throttled attempts preceded this answer.
    """

    tool_calls: tuple[ToolCall, ...] = ()
    text: str | None = None
    thinking: str | None = None
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    durations: dict = field(default_factory=dict)
    throttles: int = 0


class Agent(Protocol):
    """Anything that answers a model request: an LLM provider adapter or a baseline agent.

    ``context_budget`` is how many tokens one request may hold (the history is trimmed to fit), or None
    when the agent has no such limit; each agent states its own, so the turn loop never asks who it is.
    """

    context_budget: int | None

    def respond(self, request: ModelRequest) -> ModelResponse: ...


@dataclass(frozen=True)
class ModelCall:
    """One call of the turn: the messages it added since the previous call, and the answer."""

    new_messages: tuple[Message, ...]
    response: ModelResponse


@dataclass(frozen=True)
class TurnOutcome:
    actions: list[ActionRecord]
    calls: list[ModelCall]
    end_reason: str

    @property
    def responses(self) -> list[ModelResponse]:
        return [call.response for call in self.calls]

    @property
    def usage(self) -> Usage:
        return Usage(
            sum(r.usage.input_tokens for r in self.responses),
            sum(r.usage.output_tokens for r in self.responses),
            sum(r.usage.latency_ms for r in self.responses),
        )

    @property
    def throttles(self) -> int:
        return sum(r.throttles for r in self.responses)


def estimate_tokens(value: object) -> int:
    """A provider-neutral estimate (about four characters of JSON per token), used only to trim history."""
    return len(json.dumps(value, default=str, separators=(",", ":"))) // 4 + 1


def message_as_json(message: Message) -> dict:
    """A message as stored in ``model_calls`` (and as the estimate sees it)."""
    data: dict = {"role": message.role, "content": message.content}
    if message.tool_calls:
        data["tool_calls"] = [{"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    return data


def fit_context(system_prompt: str, tools: Sequence[ToolSpec], messages: list[Message], budget: int | None) -> None:
    """Drop the oldest entries of the context's ``recent_actions`` until the request fits ``budget``
    tokens. The system prompt, the tools and the current turn's messages are never trimmed."""
    if budget is None:
        return
    fixed = estimate_tokens(system_prompt) + estimate_tokens([t.__dict__ for t in tools])
    fixed += sum(estimate_tokens(message_as_json(m)) for m in messages[1:])
    context = dict(messages[0].content)
    history = list(context.get("recent_actions", ()))
    while history and fixed + estimate_tokens({**context, "recent_actions": history}) > budget:
        history.pop(0)
    if len(history) != len(context.get("recent_actions", ())):
        messages[0] = Message("user", {**context, "recent_actions": history})


def turn_context(world: WorldState, game: Rules, history: Sequence[dict], max_moves: int) -> dict:
    """The opening user message of a turn: where the agent is, what it sees, what it did lately."""
    _, seen = observation(game.maze, world.position, game.vision_range)
    return {
        **seen,
        "maze_size": [game.maze.width, game.maze.height],
        "step": world.step,
        "actions_left": max_moves - world.step,
        "goal_condition": game.goal_condition,
        "recent_actions": list(history),
    }


def run_turn(agent: Agent, system_prompt: str, world: WorldState, game: Rules, memory: Memory,
             context: dict, budget: int, budget_reason: str = "action_budget",
             context_budget: int | None = None, deadline: Callable[[], bool] | None = None) -> TurnOutcome:
    """Play one turn of at most ``budget`` actions, mutating ``world`` and ``memory``.

    ``budget_reason`` names the limit the budget comes from (the per-turn budget, or the
    experiment's remaining moves), stored as the turn's end reason when it is reached.
    ``context_budget`` (tokens, e.g. Ollama's ``num_ctx``) trims the history before each call.
    ``deadline`` says, before each call after the first, whether another call would no longer fit in
    the time the task has (its Lambda's); the turn then ends with the end reason ``deadline`` and is
    written, instead of dying with its Lambda and being replayed.
    """
    if budget < 1:
        raise ValueError(f"a turn needs an action budget of at least 1, got {budget}")
    messages: list[Message] = [Message("user", context)]
    actions: list[ActionRecord] = []
    calls: list[ModelCall] = []
    sent = 0
    invalid_in_a_row = 0
    while True:
        if calls and deadline is not None and deadline():
            return TurnOutcome(actions, calls, "deadline")
        fit_context(system_prompt, TOOL_SPECS, messages, context_budget)
        response = agent.respond(ModelRequest(system_prompt, TOOL_SPECS, tuple(messages)))
        calls.append(ModelCall(tuple(messages[sent:]), response))
        messages.append(Message("assistant", response.text, tool_calls=response.tool_calls))
        sent = len(messages)
        if not response.tool_calls:
            return TurnOutcome(actions, calls, "no_tool_call")
        for call in response.tool_calls:
            record = execute(call, world, game, memory)
            actions.append(record)
            messages.append(Message("tool", record.result, tool_call_id=call.call_id, name=call.name))
            invalid_in_a_row = invalid_in_a_row + 1 if record.action_type == "invalid" else 0
            if world.goal_found:
                return TurnOutcome(actions, calls, "goal_found")
            if invalid_in_a_row >= CIRCUIT_BREAKER_THRESHOLD:
                return TurnOutcome(actions, calls, "circuit_breaker")
            if len(actions) >= budget:
                return TurnOutcome(actions, calls, budget_reason)
