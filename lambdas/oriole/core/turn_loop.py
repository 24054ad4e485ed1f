"""The agent turn loop, shared by every provider and by the baseline agents.

One turn: build the context, ask the agent, validate and execute each tool call against the maze,
feed every result back, and repeat until the agent answers without a tool call, the turn's action
budget or the experiment's token budget is spent, the goal is found, the agent gives up, or a breaker opens
(consecutive invalid calls, or the same failing action repeated). A provider only translates these neutral messages
to its wire format and back.

The loop's design choices are experimental variables (``TurnSettings``): the breakers' thresholds,
whether ``give_up`` is offered, whether tool calls are read from JSON in the text for models without
native tool calling, and the context budget that earlier turns' messages (``earlier_turns``) are trimmed to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from oriole.core.known_map import KnownMap
from oriole.core.maze import Maze
from oriole.core.picture import TEXT_ONLY, Camera, Observation, Picture, text_map_view
from oriole.core.text_tool_calls import instructions, parse_tool_calls
from oriole.core.tools import (
    INVALID_ACTION,
    TOOL_SPECS,
    ActionRecord,
    RecallWindow,
    Rules,
    ToolCall,
    ToolSpec,
    WorldState,
    execute,
    observation,
)
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import TurnEnd
from oriole.text import JsonObject


@dataclass(frozen=True)
class Message:
    """A neutral chat message. ``content`` is text, or a dict a provider serialises as JSON; a user message may
    carry a ``picture`` of the maze, which each provider sends in its own image format."""

    role: str
    content: str | JsonObject | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    picture: Picture | None = None


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0

    @property
    def tokens(self) -> int:
        """Input and output tokens: what a token budget counts."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class ModelRequest:
    system_prompt: str
    tools: tuple[ToolSpec, ...]
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class ModelResponse:
    """What the agent answered: optional text and thinking, tool calls in order, usage, stop reason.

    ``durations`` holds what the provider reports about its own timing (Ollama's nanosecond fields, for
    example), ``throttles`` how many throttled attempts preceded this answer and ``retries`` how many failed
    attempts did (throttles included). ``raw`` is the answer exactly as the provider sent it (None for a
    baseline): stored, it is what a replay answers with (``oriole.providers.replay``). ``sent_sha256`` is the hash
    of the request as it was sent (``oriole.providers.wire.sent_hash``: its canonical JSON; None for a baseline,
    which sends nothing): stored in the call's request record, what a replay and a transcript hold a rebuild to.
    """

    tool_calls: tuple[ToolCall, ...] = ()
    text: str | None = None
    thinking: str | None = None
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    durations: JsonObject = field(default_factory=dict)
    throttles: int = 0
    retries: int = 0
    raw: bytes | None = None
    sent_sha256: str | None = None
    # who answered, as the answer says: the model id the server reported (Ollama's and an OpenAI-compatible
    # server's ``model``, which may name a build the request did not: an alias resolved) and the backend's
    # configuration (an OpenAI-compatible ``system_fingerprint``); None where the answer does not say
    model: str | None = None
    system_fingerprint: str | None = None


class Agent(Protocol):
    """Anything that answers a model request: an LLM provider adapter or a baseline agent.

    ``context_budget`` is how many tokens one request may hold (the earlier turns are trimmed to fit), or None
    when the agent has no such limit; each agent states its own, so the turn loop never asks who it is.
    """

    context_budget: int | None

    @property
    def settings(self) -> JsonObject:
        """What the agent sends with every request beyond the system prompt, the tools and the messages (the
        model, its generation settings): stored with each call, so that its request can be rebuilt exactly."""
        ...

    def respond(self, request: ModelRequest) -> ModelResponse: ...


@dataclass(frozen=True)
class Replay:
    """What a replay's turn answers from: the original's provider, and its stored calls of the same turn (in call
    order: ``answer`` base64, ``latency_ms``, ``throttles``, ``retries``)."""

    provider: str
    turn: int
    calls: tuple[JsonObject, ...]


@dataclass(frozen=True)
class AgentSetup:
    """What a provider's adapter builds an experiment's agent from, for one turn (each adapter module's
    ``agent(setup, api_key)``): the model, the configuration snapshot, the experiment's seed, the state the agent
    kept at the end of its previous turn (a baseline's), the maze it plays (only an oracle reads it whole), and
    for a replay's scratch experiment what it answers from (``oriole.providers.replay``)."""

    model: str
    config: ExperimentConfig
    seed: int
    state: JsonObject
    maze: Maze
    replay: Replay | None = None


@dataclass(frozen=True)
class Sent:
    """What a call sent beyond the messages it added: the system prompt and tools, how many earlier turns the
    memory mode carried after trimming (the newest ones), how many recent actions the turn context kept after
    trimming (None: the call carries no turn context), and whether tool calls travel in the text."""

    system_prompt: str
    tools: tuple[ToolSpec, ...]
    carried_turns: int = 0
    context_actions: int | None = None
    text_tool_calls: bool = False


@dataclass(frozen=True)
class ModelCall:
    """One call of the turn: the messages it added since the previous call, and the answer. ``kind`` is
    ``turn`` for the agent's own calls and ``compaction`` for a call that summarised its earlier turns; ``sent`` is
    the rest of its request (``oriole.core.requests`` stores it and rebuilds the request from it)."""

    new_messages: tuple[Message, ...]
    response: ModelResponse
    kind: str = "turn"
    sent: Sent | None = None


@dataclass(frozen=True)
class TurnSettings:
    """How one turn is played.

    ``budget`` actions at most (``budget_reason`` is the end reason when it is reached: the per-turn budget, or the
    experiment's remaining moves); ``actions_left`` is what the experiment has left before the turn;
    ``tokens_left``, what its token budget leaves (None: no budget), ends the turn before a call once the turn's
    calls have used it (the first call is always made); ``circuit_breaker`` invalid calls in a row, or
    ``repetition_limit`` identical failing actions in a row (0: off), end the turn; ``text_tool_calls`` reads tool
    calls from JSON in the answer's text (the tools are then described in the system prompt, not sent as tools).
    With ``observation`` image or both, ``camera`` draws the view each request ends with; with image alone, what the
    agent sees is not written in text. With the text view ``map`` (``observation.map_text``), ``mapped`` is the map
    seen so far, written as text (``map_view``) where the map picture would be sent, and each move's result
    carries no ``visible`` tiles (as with the map picture alone).
    """

    budget: int
    actions_left: int
    budget_reason: TurnEnd = TurnEnd.ACTION_BUDGET
    tokens_left: int | None = None
    circuit_breaker: int = 3
    repetition_limit: int = 0
    tools: tuple[ToolSpec, ...] = TOOL_SPECS
    text_tool_calls: bool = False
    deadline: Callable[[], bool] | None = None  # True once another model call would outlive the task
    observation: Observation = TEXT_ONLY  # text, image or both; the camera draws the pictures
    camera: Camera | None = None
    mapped: KnownMap | None = None  # the map the text map view writes (textView map), extended by each action


@dataclass(frozen=True)
class ContextTrim:
    """What was left out of the requests of a turn to fit the context budget, and the estimated tokens of
    the largest request before and after."""

    dropped_turns: int = 0
    dropped_actions: int = 0
    tokens_before: int = 0
    tokens_after: int = 0

    def as_json(self) -> JsonObject:
        return {
            "dropped_turns": self.dropped_turns,
            "dropped_actions": self.dropped_actions,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        }


@dataclass(frozen=True)
class TurnOutcome:
    """The turn's actions, its model calls, why it ended, the tool results no call has read yet
    (``closing``: what the last answer's calls got back, those not executed included) and any trim."""

    actions: list[ActionRecord]
    calls: list[ModelCall]
    end_reason: TurnEnd
    closing: tuple[Message, ...] = ()
    trim: ContextTrim | None = None

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


def prompt_budget(window: int, answer_tokens: int) -> int:
    """What a request's prompt may hold in a context ``window``: the room the answer may take (its limit) is kept
    free, up to half the window, so that a server never has to cut the prompt, or the answer, to fit."""
    return window - min(answer_tokens, window // 2)


_ESTIMATE_ENCODER = json.JSONEncoder(default=str, separators=(",", ":"))  # one, not one per estimate (each turn's)


def estimate_tokens(value: object) -> int:
    """A provider-neutral estimate (about four characters of JSON per token), used only to trim the earlier turns."""
    return len(_ESTIMATE_ENCODER.encode(value)) // 4 + 1


def message_as_json(message: Message) -> JsonObject:
    """A message as stored in ``model_calls`` (and as the estimate sees it): a picture as its record (hash, size,
    what it shows), never its bytes (``oriole.core.picture.regenerate`` draws it again)."""
    data: JsonObject = {"role": message.role, "content": message.content}
    if message.picture is not None:
        data["picture"] = message.picture.record
    if message.tool_calls:
        data["tool_calls"] = [_call_as_json(c) for c in message.tool_calls]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        data["name"] = message.name
    return data


def _call_as_json(call: ToolCall) -> JsonObject:
    return {"id": call.call_id, "name": call.name, "arguments": call.arguments, "source": call.source}


def message_from_json(data: JsonObject) -> Message:
    """A stored message back as a ``Message`` (the inverse of ``message_as_json``, but for a picture: an earlier
    turn's pictures are never sent again, and its message keeps the picture's caption in its content)."""
    calls = tuple(
        ToolCall(c["name"], c.get("arguments"), c.get("id"), c.get("source", "native"))
        for c in data.get("tool_calls") or ()
    )
    return Message(data["role"], data.get("content"), calls, data.get("tool_call_id"), data.get("name"))


def response_as_json(response: ModelResponse) -> JsonObject:
    """A response as stored in ``model_calls.response`` (the reported model and fingerprint where the answer gave
    them: ``response ->> 'model'``)."""
    identity = {"model": response.model, "system_fingerprint": response.system_fingerprint}
    return {
        "text": response.text,
        "thinking": response.thinking,
        "tool_calls": [_call_as_json(c) for c in response.tool_calls],
        **{key: value for key, value in identity.items() if value is not None},
    }


def turn_context(world: WorldState, game: Rules, recent_actions: Sequence[JsonObject], max_actions: int) -> JsonObject:
    """The opening user message of a turn: where the agent is, what it sees, what it did lately."""
    _, seen = observation(game.maze, world.position, game.vision_range)
    return {
        **seen,
        "maze_size": [game.maze.width, game.maze.height],
        "step": world.action_count,
        "actions_left": max_actions - world.action_count,
        "goal_condition": game.goal_condition,
        "recent_actions": list(recent_actions),
    }


def newest_picture_only(messages: Sequence[Message]) -> tuple[Message, ...]:
    """Every picture but the newest left out (its caption stays), so a request carries one picture, not one per
    call of the turn (``oriole.core.requests`` rebuilds a stored request by the same rule)."""
    newest = max((i for i, m in enumerate(messages) if m.picture is not None), default=None)
    return tuple(m if m.picture is None or i == newest else replace(m, picture=None) for i, m in enumerate(messages))


class _Conversation:
    """The messages of one turn's requests: earlier turns (whole, oldest first), the turn's context, and
    what the turn added since. Trimming to the context budget drops whole earlier turns first (a tool call
    never loses its result), then the oldest ``recent_actions`` of the context; never the system prompt,
    the tools or the current turn's messages."""

    def __init__(self, earlier_turns: Sequence[Sequence[Message]], context: JsonObject, picture: Picture | None = None):
        self.earlier_turns = [list(turn) for turn in earlier_turns]
        self.context = context
        self.picture = picture
        self.current: list[Message] = []
        self.sent: int | None = None  # messages of ``current`` already sent (None: no call yet)
        self.trim = ContextTrim()

    def messages(self) -> list[Message]:
        return [*(m for turn in self.earlier_turns for m in turn), self._opening(), *self.current]

    def _opening(self) -> Message:
        return Message("user", self.context, picture=self.picture)

    def new_messages(self) -> tuple[Message, ...]:
        """What the call just made added since the previous call of the turn (the first call: the context)."""
        return tuple([self._opening(), *self.current] if self.sent is None else self.current[self.sent :])

    def request(self) -> tuple[Message, ...]:
        """The messages a call sends (``newest_picture_only``)."""
        return newest_picture_only(self.messages())

    def sent_with(self, system_prompt: str, tools: tuple[ToolSpec, ...], text_tool_calls: bool) -> Sent:
        """What the call about to be recorded sent beyond its new messages."""
        return Sent(
            system_prompt, tools, len(self.earlier_turns), len(self.context.get("recent_actions", ())), text_tool_calls
        )

    def answered(self, answer: Message) -> None:
        """The model's answer joins the conversation; it is stored with its call, not as a request message."""
        self.current.append(answer)
        self.sent = len(self.current)

    def fit(self, system_prompt: str, tools: Sequence[ToolSpec], budget: int | None) -> None:
        if budget is None:
            return
        fixed = estimate_tokens(system_prompt) + estimate_tokens([t.__dict__ for t in tools])
        before = fixed + sum(estimate_tokens(message_as_json(m)) for m in self.messages())
        size = before
        turns, actions = 0, 0
        while size > budget and self.earlier_turns:
            self.earlier_turns.pop(0)
            turns += 1
            size = fixed + sum(estimate_tokens(message_as_json(m)) for m in self.messages())
        recent = list(self.context.get("recent_actions", ()))
        while size > budget and recent:
            recent.pop(0)
            actions += 1
            self.context = {**self.context, "recent_actions": recent}
            size = fixed + sum(estimate_tokens(message_as_json(m)) for m in self.messages())
        if turns or actions:
            t = self.trim
            self.trim = ContextTrim(
                t.dropped_turns + turns,
                t.dropped_actions + actions,
                max(t.tokens_before, before),
                max(t.tokens_after, size),
            )


class _Breakers:
    """The turn's breakers: invalid calls in a row, and the same failing action repeated in a row."""

    def __init__(self, settings: TurnSettings):
        self.settings = settings
        self.invalid = 0
        self.repeated: tuple[object, int] = (None, 0)

    def record(self, record: ActionRecord) -> TurnEnd | None:
        """The end reason this action triggers, if any."""
        self.invalid = self.invalid + 1 if record.action_type == INVALID_ACTION else 0
        if self.invalid >= self.settings.circuit_breaker:
            return TurnEnd.CIRCUIT_BREAKER
        failing = (
            None
            if record.success or record.action_type == INVALID_ACTION
            else (record.action_type, record.from_pos, record.error)
        )
        key, count = self.repeated
        self.repeated = (failing, count + 1 if failing is not None and failing == key else 1)
        limit = self.settings.repetition_limit
        if failing is not None and limit and self.repeated[1] >= limit:
            return TurnEnd.REPETITION
        return None


# What a tool result says of a call its turn did not execute, and of the call that ended the turn (part of the harness
# version, ``oriole.core.harness``).
WHY_NOT_EXECUTED = {
    TurnEnd.GOAL_FOUND: "the goal was found",
    TurnEnd.CIRCUIT_BREAKER: "the circuit breaker opened after invalid calls",
    TurnEnd.REPETITION: "the same failing action was repeated",
    TurnEnd.GAVE_UP: "you gave up",
    TurnEnd.ACTION_BUDGET: "the turn's budget is spent",
    TurnEnd.MAX_MOVES: "the experiment's action budget is spent",
}


def run_turn(
    agent: Agent,
    system_prompt: str,
    world: WorldState,
    game: Rules,
    recall: RecallWindow,
    context: JsonObject,
    settings: TurnSettings,
    earlier_turns: Sequence[Sequence[Message]] = (),
) -> TurnOutcome:
    """Play one turn of at most ``settings.budget`` actions, mutating ``world`` and ``recall``.

    ``earlier_turns`` holds earlier turns' messages (conversation memory), each turn whole; they are trimmed,
    oldest first, to the agent's context budget before each call. ``settings.deadline`` says, before each
    call after the first, whether another call would no longer fit in the time the task has (its Lambda's);
    the turn then ends with the end reason ``deadline`` and is written, instead of dying with its Lambda
    and being replayed.
    """
    if settings.budget < 1:
        raise ValueError(f"a turn needs an action budget of at least 1, got {settings.budget}")
    prompt, offered = (
        (system_prompt + "\n\n" + instructions(settings.tools), ())
        if settings.text_tool_calls
        else (system_prompt, settings.tools)
    )
    conversation = _Conversation(earlier_turns, *_opening(context, world, settings))
    actions: list[ActionRecord] = []
    calls: list[ModelCall] = []
    breakers = _Breakers(settings)
    results: list[Message] = []
    while True:
        if calls and settings.deadline is not None and settings.deadline():
            return TurnOutcome(actions, calls, TurnEnd.DEADLINE, tuple(results), _trim(conversation))
        if calls and _tokens_left(settings, calls) == 0:
            return TurnOutcome(actions, calls, TurnEnd.MAX_TOKENS, tuple(results), _trim(conversation))
        if calls and (settings.camera is not None or settings.mapped is not None):
            conversation.current.append(_view_message(settings, world))
        conversation.fit(prompt, offered, agent.context_budget)
        response = _read_text_calls(agent.respond(ModelRequest(prompt, offered, conversation.request())), settings)
        calls.append(
            ModelCall(
                conversation.new_messages(),
                response,
                sent=conversation.sent_with(prompt, offered, settings.text_tool_calls),
            )
        )
        conversation.answered(_assistant_message(response, settings))
        if not response.tool_calls:
            return TurnOutcome(actions, calls, TurnEnd.NO_TOOL_CALL, trim=_trim(conversation))
        results = []
        end = None
        for call in response.tool_calls:
            if end is not None:
                results.append(
                    _result_message(
                        call, {"success": False, "error": "not executed: " + WHY_NOT_EXECUTED[end]}, settings
                    )
                )
                continue
            record = execute(call, world, game, recall, settings.tools)
            actions.append(record)
            if settings.camera is not None:
                settings.camera.learn(record.tiles_seen)
            if settings.mapped is not None:
                settings.mapped.see(record.tiles_seen)
            end = _end_reason(record, world, breakers, len(actions), settings)
            result = {
                **_shown(record.result, settings),
                "actions_left_in_turn": 0 if end else settings.budget - len(actions),
                "actions_left": settings.actions_left - len(actions),
            }
            tokens_left = _tokens_left(settings, calls)
            if tokens_left is not None:
                result["tokens_left"] = tokens_left
            if end in (TurnEnd.CIRCUIT_BREAKER, TurnEnd.REPETITION):
                result["turn_ended"] = WHY_NOT_EXECUTED[end]
            results.append(_result_message(call, result, settings))
        conversation.current.extend(results)
        if end is not None:
            return TurnOutcome(actions, calls, end, tuple(results), _trim(conversation))


def over_budget(calls: Sequence[ModelCall], budget: int | None) -> list[JsonObject]:
    """The calls (numbered from 1, as stored) whose prompt the server counted over the context budget the requests
    were trimmed to: trimming estimates tokens, the server counts them, and a server whose window a prompt overflows
    may cut it silently, so that what the model saw is not what was stored. Recorded on the turn (``over_budget``
    in ``turns.context``), shown by the transcript and counted by the report."""
    if budget is None:
        return []
    return [
        {"call": index, "prompt_tokens": call.response.usage.input_tokens, "budget": budget}
        for index, call in enumerate(calls, 1)
        if call.response.usage.input_tokens > budget
    ]


def _tokens_left(settings: TurnSettings, calls: Sequence[ModelCall]) -> int | None:
    """What the token budget leaves after the turn's calls so far (never below 0); None without a budget."""
    if settings.tokens_left is None:
        return None
    return max(0, settings.tokens_left - sum(call.response.usage.tokens for call in calls))


def _shown(observed: JsonObject, settings: TurnSettings) -> JsonObject:
    """A context or a tool result as the agent reads it: without the tiles in sight in text unless it observes
    them so (text or both, the local text view)."""
    if settings.observation.local_text:
        return observed
    return {k: v for k, v in observed.items() if k != "visible"}


def _views(world: WorldState, settings: TurnSettings) -> tuple[JsonObject, Picture | None]:
    """The views from where the agent stands: the text map (``map_view``) and the picture's caption with the
    picture, each where the experiment observes it."""
    shown: JsonObject = {}
    if settings.mapped is not None:
        shown["map_view"] = text_map_view(settings.mapped, world.action_count)
    if settings.camera is None:
        return shown, None
    picture = settings.camera.picture(world.position, world.action_count)
    return {**shown, "picture": picture.caption}, picture


def _opening(context: JsonObject, world: WorldState, settings: TurnSettings) -> tuple[JsonObject, Picture | None]:
    """The turn's context message: its content and the views from where the agent stands."""
    views, picture = _views(world, settings)
    return {**_shown(context, settings), **views}, picture


def _view_message(settings: TurnSettings, world: WorldState) -> Message:
    """The views after the last answer's actions, ending the next request (user content, after the tool results)."""
    views, picture = _views(world, settings)
    return Message("user", {"position": list(world.position), "step": world.action_count, **views}, picture=picture)


def _end_reason(
    record: ActionRecord, world: WorldState, breakers: _Breakers, taken: int, settings: TurnSettings
) -> TurnEnd | None:
    if world.goal_found:
        return TurnEnd.GOAL_FOUND
    if world.gave_up_reason is not None:
        return TurnEnd.GAVE_UP
    tripped = breakers.record(record)
    if tripped:
        return tripped
    if taken >= settings.budget:
        return settings.budget_reason
    return None


def _read_text_calls(response: ModelResponse, settings: TurnSettings) -> ModelResponse:
    """With text tool calls on, an answer without native calls is read for JSON tool calls in its text."""
    if not settings.text_tool_calls or response.tool_calls or not response.text:
        return response
    return replace(response, tool_calls=parse_tool_calls(response.text))


def _assistant_message(response: ModelResponse, settings: TurnSettings) -> Message:
    """Text tool calls stay in the text the model wrote; native ones travel as tool calls."""
    if settings.text_tool_calls:
        return Message("assistant", response.text)
    return Message("assistant", response.text, tool_calls=response.tool_calls)


def _result_message(call: ToolCall, result: JsonObject, settings: TurnSettings) -> Message:
    """A tool result: a ``tool`` message for a native call, a user message naming the tool for a text call."""
    if settings.text_tool_calls:
        return Message("user", {"tool_result": call.name, **result})
    return Message("tool", result, tool_call_id=call.call_id, name=call.name)


def _trim(conversation: _Conversation) -> ContextTrim | None:
    return conversation.trim if conversation.trim != ContextTrim() else None
