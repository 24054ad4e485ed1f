"""The recorded agent of a replay: each call answered with the answer the original experiment stored, read by the
original provider's own parser, with no model server and no network.

A replay's scratch experiment (``experiments.replay_of``) plays through the same state machine and turn loop as
any other; its agent task is this provider's. The agent is the original provider's agent for what a turn asks of
an agent beyond answers (its settings, its context budget), and answers the turn's calls in order from the stored
answers the turn's load brought (``AgentSetup.replay``: the original's calls of the same turn, in call order).
A call the original never made is an error naming the turn and call: the harness has left the recorded trajectory.
A recorded call that is not as oriole stores it (an answer that is not base64, counts that are not counts, an
answer the original's parser no longer reads: the original's rows were altered) is ``RecordUnreadable``: the
experiment cannot be replayed, which ``oriole replay`` says as such, not as a difference. Each answer carries the
hash of the request today's adapter would have sent (``sent_sha256``), which the comparison holds to the hash the
original sent: a changed adapter replays as differing at the first call it changed.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import replace

from oriole.core.turn_loop import Agent, AgentSetup, ModelRequest, ModelResponse
from oriole.errors import InvalidModelResponse, OrioleError
from oriole.experiment_config import ExperimentConfig
from oriole.providers.contract import NotRecorded, load_adapter
from oriole.providers.identity import ModelIdentity
from oriole.providers.wire import sent_hash
from oriole.text import JsonObject


class ReplayDiverged(OrioleError):
    """The harness asked for a model call the recorded experiment never made: the replay has diverged."""


class RecordUnreadable(OrioleError):
    """A recorded call of the original is not as oriole stores it (its rows were altered): no replay can be made."""


class RecordedAgent:
    """Answers from the recorded calls of one turn; the wrapped agent states the settings and the context budget."""

    def __init__(self, original: Agent, provider: str, recorded: tuple[JsonObject, ...], turn: int | None = None):
        self.original, self.provider, self.turn = original, provider, turn
        self.context_budget = original.context_budget
        self._recorded = list(recorded)
        self._made = 0
        self._adapter = load_adapter(provider)

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
        where = f"the recorded call {self._made} of turn {self.turn}"
        found = [call.get(key) for key in ("latency_ms", "throttles")] + [call.get("retries") or 0]
        counts = [n for n in found if isinstance(n, int) and not isinstance(n, bool) and n >= 0]
        if len(counts) != len(found):
            raise RecordUnreadable(f"{where} has counts that are not counts ({found!r:.100}): its rows were altered")
        try:
            answer = base64.b64decode(call["answer"])  # as PostgreSQL's encode() writes it: lines of 76
        except (binascii.Error, KeyError, TypeError, ValueError):
            raise RecordUnreadable(f"{where} holds no stored answer: its rows were altered") from None
        try:
            parsed = self._adapter.recorded_answer(answer, *counts)
        except InvalidModelResponse as err:
            raise RecordUnreadable(f"{where} is not an answer its provider's parser reads: {err}") from None
        # what today's adapter would send for this request: the comparison holds it to the hash the original sent
        return replace(parsed, sent_sha256=sent_hash(self._adapter.wire_request(request, self.settings)))


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


def check_server(config: ExperimentConfig, models: Sequence[str], api_key: str | None = None) -> str:
    """A replay answers from stored answers: no model server to ask."""
    return "no model server (recorded answers)"


def model_identity(config: ExperimentConfig, model: str, api_key: str | None = None) -> ModelIdentity | None:
    """A replay asks no server: the build its answers came from is its original's (``experiments.replay_of``)."""
    return None
