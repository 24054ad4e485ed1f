"""The agent turn loop, shared by every provider and by the baseline agents.

One turn: build the context, ask the agent, validate and execute each tool call against the maze,
feed every result back, and repeat until the agent answers without a tool call, the turn's action
budget is spent, the goal is found, or the circuit breaker opens after consecutive invalid calls.
A provider only translates these neutral messages to its wire format and back.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    """Anything that answers a model request: an LLM provider adapter or a baseline agent."""

    def respond(self, request: ModelRequest) -> ModelResponse: ...


@dataclass(frozen=True)
class TurnOutcome:
    actions: list[ActionRecord]
    responses: list[ModelResponse]
    end_reason: str

    @property
    def usage(self) -> Usage:
        return Usage(
            sum(r.usage.input_tokens for r in self.responses),
            sum(r.usage.output_tokens for r in self.responses),
            sum(r.usage.latency_ms for r in self.responses),
        )


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
             context: dict, budget: int, budget_reason: str = "action_budget") -> TurnOutcome:
    """Play one turn of at most ``budget`` actions, mutating ``world`` and ``memory``.

    ``budget_reason`` names the limit the budget comes from (the per-turn budget, or the
    experiment's remaining moves), stored as the turn's end reason when it is reached.
    """
    messages: list[Message] = [Message("user", context)]
    actions: list[ActionRecord] = []
    responses: list[ModelResponse] = []
    invalid_in_a_row = 0
    while True:
        response = agent.respond(ModelRequest(system_prompt, TOOL_SPECS, tuple(messages)))
        responses.append(response)
        messages.append(Message("assistant", response.text, tool_calls=response.tool_calls))
        if not response.tool_calls:
            return TurnOutcome(actions, responses, "no_tool_call")
        for call in response.tool_calls:
            record = execute(call, world, game, memory)
            actions.append(record)
            messages.append(Message("tool", record.result, tool_call_id=call.call_id, name=call.name))
            invalid_in_a_row = invalid_in_a_row + 1 if record.action_type == "invalid" else 0
            if world.goal_found:
                return TurnOutcome(actions, responses, "goal_found")
            if invalid_in_a_row >= CIRCUIT_BREAKER_THRESHOLD:
                return TurnOutcome(actions, responses, "circuit_breaker")
            if len(actions) >= budget:
                return TurnOutcome(actions, responses, budget_reason)
