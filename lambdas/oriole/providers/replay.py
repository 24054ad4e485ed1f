"""The recorded agent of a replay: each call answered with the answer the original experiment stored, read by the
original provider's own parser, with no model server and no network.

A replay's scratch experiment (``experiments.replay_of``) plays through the same state machine and turn loop as
any other; its agent task is this provider's. The agent is the original provider's agent for what a turn asks of
an agent beyond answers (its settings, its context budget), and answers the turn's calls in order from the stored
answers the turn's load brought (``AgentSetup.recorded``: the original's calls of the same turn, in call order).
A call the original never made is an error naming the turn and call: the harness has left the recorded trajectory.
"""

from __future__ import annotations

import base64

from oriole.core.turn_loop import Agent, AgentSetup, ModelRequest, ModelResponse
from oriole.errors import OrioleError
from oriole.providers.contract import NotRecorded, load_adapter
from oriole.text import JsonObject


class ReplayDiverged(OrioleError):
    """The harness asked for a model call the recorded experiment never made: the replay has diverged."""


class RecordedAgent:
    """Answers from the recorded calls of one turn; the wrapped agent states the settings and the context budget."""

    def __init__(self, original: Agent, provider: str, recorded: tuple[JsonObject, ...], turn: int | None = None):
        self.original, self.provider, self.turn = original, provider, turn
        self.context_budget = original.context_budget
        self._recorded = list(recorded)
        self._made = 0
        self._parse = load_adapter(provider).recorded_answer

    @property
    def settings(self) -> JsonObject:
        return self.original.settings

    def respond(self, request: ModelRequest) -> ModelResponse:
        self._made += 1
        if not self._recorded:
            raise ReplayDiverged(
                f"the replay asked for call {self._made} of turn {self.turn}, which the recorded "
                "experiment never made: the harness no longer reproduces its trajectory"
            )
        call = self._recorded.pop(0)
        return self._parse(
            base64.b64decode(call["answer"]), call["latency_ms"], call["throttles"], call.get("retries") or 0
        )


def agent(setup: AgentSetup, api_key: str | None = None) -> RecordedAgent:
    """The recorded agent of a replay's turn (its entry in ``oriole.provider_registry`` names this module): the
    original provider's agent, built without a key, as the wrapped one."""
    if setup.replay is None:
        raise OrioleError("the replay agent plays only a replay's scratch experiment (experiments.replay_of)")
    original = load_adapter(setup.replay.provider).agent(setup, None)
    return RecordedAgent(original, setup.replay.provider, setup.replay.calls, setup.replay.turn)


def wire_request(request: ModelRequest, settings: JsonObject) -> JsonObject:
    """A replay's calls went out in its original's wire format: ask the original provider's adapter."""
    raise NotRecorded("a replay sends nothing of its own; its requests are its original provider's (replay_of)")


def recorded_answer(raw: bytes, latency_ms: int, throttles: int, retries: int) -> ModelResponse:
    """A replay's answers are its original's: read them with the original provider's adapter."""
    raise NotRecorded("a replay's answers are its original's; read them with the original provider's adapter")
