"""``oriole export --format inspect``: the experiments as Inspect AI evaluation logs, written by Inspect's own API.

One log per agent (an agent with its prompt and the settings that set it apart, within one sweep), one sample per
experiment: the maze is the sample's id and the repetition its epoch, so Inspect's viewer, log reader and data
frames see a sweep as an evaluation run several epochs over a dataset of mazes. A sample holds:

- the messages as the model saw them, in order: the system prompt, then for each call the messages it added and
  the answer it got (text, tool calls, tool results, pictures as PNG data URLs drawn again from their records), and
  one model event per call carrying the whole request it was sent (``input``, ``tools``) and, as the event's
  ``call``, the body on the wire and the answer exactly as the server returned it (``oriole.core.requests``
  rebuilds them, as ``oriole transcript`` does);
- the scores: ``success`` (1 or 0), ``spl`` (success weighted by path length), ``efficiency`` (shortest path /
  moves, for a success) and ``ending`` (success, agent, error);
- the model usage (tokens and cost), the configuration snapshot and the experiment's provenance as metadata.

A log's metadata is the export's provenance (``provenance``). Inspect is an optional dependency (the ``inspect``
extra); nothing here runs unless it is installed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import oriole
from oriole.core import picture as pictures
from oriole.core.tools import ToolCall
from oriole.core.turn_loop import Message
from oriole.errors import OrioleError
from oriole.providers.wire import picture_base64
from oriole.statuses import Ending
from oriole_workstation import transcript as transcripts
from oriole_workstation.provenance import Provenance
from oriole_workstation.report import SeriesKey, agent_text, series_key
from oriole_workstation.results import Results
from oriole_workstation.rows import ComparedExperiment

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage

TASK = "oriole/maze-navigation"
_REPETITION = re.compile(r"/r(\d+)$")  # a sweep's agent_id: <sweep>/<cell key>/r<repetition>


class MissingInspect(OrioleError):
    """``--format inspect`` needs the ``inspect`` extra."""


def require_inspect() -> None:
    """Refuse at once, with the install command, when Inspect is not installed."""
    try:
        import inspect_ai  # noqa: F401 - checked before anything is read or written
    except ImportError:
        raise MissingInspect(
            "--format inspect needs Inspect AI: pip install 'oriole[inspect]' (or export --format jsonl)"
        ) from None


@dataclass
class Group:
    """The experiments of one log: one agent with its prompt and compared settings, in one sweep."""

    sweep: str | None
    key: SeriesKey
    experiments: list[ComparedExperiment] = field(default_factory=list)

    @property
    def agent(self) -> str:
        return agent_text(self.experiments[0])

    def file_name(self) -> str:
        """``<sweep>_<agent>_<n>.eval``: readable, safe on any file system, unique by ``n``."""
        words = re.sub(r"[^A-Za-z0-9.-]+", "-", f"{self.sweep or 'experiments'}_{self.agent}").strip("-")
        return words[:120]


def groups(experiments: Sequence[ComparedExperiment]) -> list[Group]:
    """The ended experiments by sweep and agent (series), in the order they first appear."""
    found: dict[tuple[str | None, SeriesKey], Group] = {}
    for e in experiments:
        if e.ending is None:  # still running: not a sample yet
            continue
        key = (e.sweep_id, series_key(e))
        found.setdefault(key, Group(e.sweep_id, series_key(e))).experiments.append(e)
    return list(found.values())


def epochs(experiments: Sequence[ComparedExperiment]) -> list[tuple[ComparedExperiment, int]]:
    """Each experiment with its epoch: its sweep repetition (``agent_id`` ends ``/r<n>``), else its place among the
    experiments on the same maze. A repetition that ran more than once counts once, as its completed attempt (the
    last that did not end in an error, else the last)."""
    chosen: dict[tuple[str, int], ComparedExperiment] = {}
    seen: dict[str, int] = {}
    for e in sorted(experiments, key=lambda e: e.experiment_id):
        found = _REPETITION.search(e.agent_id or "")
        if found:
            epoch = int(found[1])
        else:
            seen[e.maze] = seen.get(e.maze, 0) + 1
            epoch = seen[e.maze]
        earlier = chosen.get((e.maze, epoch))
        if earlier is None or e.ending != Ending.ERROR or earlier.ending == Ending.ERROR:
            chosen[(e.maze, epoch)] = e
    return sorted(((e, epoch) for (_, epoch), e in chosen.items()), key=lambda pair: (pair[0].maze, pair[1]))


def spl(e: ComparedExperiment) -> float:
    """Success weighted by path length, as ``experiment_results.spl`` computes it: for a success, the optimum under
    its goal condition over the larger of it and the path walked; 0 otherwise (at most 1)."""
    return 0.0 if e.ending != Ending.SUCCESS or e.spl is None else float(e.spl)


# --- messages ------------------------------------------------------------------------------------------------


def _content(message: Message | dict[str, Any], sent: dict[str, pictures.Picture]) -> Any:
    """A message's content as Inspect holds it: its text (JSON content as its text), with the picture it carried
    as a PNG data URL."""
    from inspect_ai.model import ContentImage, ContentText

    content = message.content if isinstance(message, Message) else message.get("content")
    text = content if isinstance(content, str) or content is None else json.dumps(content, sort_keys=True)
    record = message.picture.record if isinstance(message, Message) and message.picture else None
    if isinstance(message, dict) and message.get("picture"):
        record = message["picture"]
    picture = sent.get(record["sha256"]) if record else None
    if picture is None:
        return text or ""
    url = f"data:{pictures.MEDIA_TYPE};base64,{picture_base64(picture)}"
    return [ContentText(text=text or ""), ContentImage(image=url)]


def _calls(calls: Sequence[ToolCall] | Sequence[dict[str, Any]]) -> list[Any]:
    from inspect_ai.tool import ToolCall as InspectCall

    out = []
    for c in calls:
        call_id, name, arguments = (
            (c.call_id, c.name, c.arguments)
            if isinstance(c, ToolCall)
            else (c.get("id"), c["name"], c.get("arguments"))
        )
        parsed, problem = _arguments(arguments)
        out.append(InspectCall(id=str(call_id), function=name, arguments=parsed, parse_error=problem))
    return out


def _arguments(arguments: object) -> tuple[dict[str, Any], str | None]:
    """A call's arguments as the dict Inspect wants; arguments that were not an object are kept as the error."""
    if isinstance(arguments, dict):
        return arguments, None
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return {}, f"arguments are not JSON: {arguments}"
        if isinstance(value, dict):
            return value, None
    return {}, f"arguments are not an object: {json.dumps(arguments)}"


def chat_message(message: Message | dict[str, Any], sent: dict[str, pictures.Picture], model: str) -> ChatMessage:
    """A stored or rebuilt message as Inspect's chat message of its role."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser

    role = message.role if isinstance(message, Message) else message["role"]
    content = _content(message, sent)
    if role == "assistant":
        tool_calls = message.tool_calls if isinstance(message, Message) else message.get("tool_calls") or ()
        return ChatMessageAssistant(content=content, tool_calls=_calls(tool_calls) or None, model=model)
    if role == "tool":
        call_id = message.tool_call_id if isinstance(message, Message) else message.get("tool_call_id")
        name = message.name if isinstance(message, Message) else message.get("name")
        return ChatMessageTool(content=content, tool_call_id=call_id, function=name)
    if role == "system":
        return ChatMessageSystem(content=content)
    return ChatMessageUser(content=content)


def answer_message(response: dict[str, Any], model: str) -> Any:
    """What a call answered (``model_calls.response``) as an assistant message: its text, its reasoning as
    Inspect's reasoning content, its tool calls."""
    from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ContentText

    parts: list[Any] = []
    if response.get("thinking"):
        parts.append(ContentReasoning(reasoning=response["thinking"]))
    if response.get("text"):
        parts.append(ContentText(text=response["text"]))
    content: Any = parts if any(isinstance(p, ContentReasoning) for p in parts) else (response.get("text") or "")
    return ChatMessageAssistant(
        content=content, tool_calls=_calls(response.get("tool_calls") or ()) or None, model=model
    )


def _json(value: object) -> Any:
    """A wire body as JSON (bytes as the base64 a service's JSON carries)."""
    return json.loads(json.dumps(value, default=transcripts.json_value))


def conversation(record: transcripts.Transcript, model: str) -> tuple[list[Any], list[Any]]:
    """The sample's messages (the system prompt, then each call's new messages and its answer) and one model event
    per call with its whole request, its wire body and the server's answer."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.model import GenerateConfig, ModelCall, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolInfo, ToolParams

    messages: list[Any] = []
    events: list[Any] = []
    system_shown = False
    for turn in record.turns:
        for call in turn.calls:
            request, sent = call.rebuilt.request, call.sent_pictures
            if not system_shown:
                messages.append(chat_message(Message("system", request.system_prompt), sent, model))
                system_shown = True
            messages += [chat_message(m, sent, model) for m in call.call.request_messages]
            answer = answer_message(call.call.response, model)
            messages.append(answer)
            tools = [
                ToolInfo(name=t.name, description=t.description, parameters=ToolParams(**t.parameters))
                for t in request.tools
            ]
            usage = ModelUsage(
                input_tokens=call.row["input_tokens"] or 0,
                output_tokens=call.row["output_tokens"] or 0,
                total_tokens=(call.row["input_tokens"] or 0) + (call.row["output_tokens"] or 0),
            )
            output = ModelOutput.from_message(answer, stop_reason="tool_calls" if answer.tool_calls else "stop")
            output.usage = usage
            output.model = model
            events.append(
                ModelEvent(
                    model=model,
                    input=[
                        chat_message(Message("system", request.system_prompt), sent, model),
                        *(chat_message(m, sent, model) for m in request.messages),
                    ],
                    tools=tools,
                    tool_choice="auto",
                    config=GenerateConfig(),
                    output=output,
                    call=ModelCall(
                        request=_json(call.wire),
                        response=call.answer if isinstance(call.answer, dict) else None,
                        time=(call.row["latency_ms"] or 0) / 1000,
                    ),
                    metadata={"turn": call.call.turn, "call": call.call.index, "kind": call.call.kind},
                )
            )
        messages += [chat_message(m, {}, model) for m in turn.closing]
    return messages, events


# --- samples and logs --------------------------------------------------------------------------------------


def _metadata(e: ComparedExperiment) -> dict[str, Any]:
    """What an experiment's sample says of where it came from (JSON values)."""
    return _json(
        {
            "experiment_id": e.experiment_id,
            "agent": agent_text(e),
            "provider": e.llm_provider,
            "model": e.model_name,
            "prompt_version": e.prompt_version,
            "prompt_hash": e.prompt_hash,
            "maze": e.maze,
            "maze_family": e.maze_family,
            "maze_size": e.maze_size,
            "maze_hash": e.maze_hash,
            "shortest_path_length": e.shortest_path_length,
            "seed": e.seed,
            "code_version": e.code_version,
            "model_build": e.model_build,  # what the model's server reported at the start
            "server_software": e.server_software,
            "server_version": e.server_version,
            "status": e.status,
            "ending": e.ending,
            "failure_reason": e.failure_reason,
            "actions": e.actions,
            "moves": e.moves,
            "failed_moves": e.failed_moves,
            "turns": e.turns,
            "cost_usd": None if e.cost_usd is None else float(e.cost_usd),
            "sweep_id": e.sweep_id,
            "agent_id": e.agent_id,
            "comment": e.comment,
            "compared_config": e.compared_config,
            "config": e.config,
        }
    )


def sample(e: ComparedExperiment, epoch: int, record: transcripts.Transcript | None, model: str) -> EvalSample:
    """An experiment as Inspect's sample: id the maze, epoch the repetition."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import Score

    messages, events = conversation(record, model) if record else ([], [])
    first_input = [m for m in messages[:2]] or f"navigate maze {e.maze} to its goal"
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    success = e.ending == Ending.SUCCESS
    scores = {
        "success": Score(value=1 if success else 0, answer=e.status, explanation=e.failure_reason),
        "spl": Score(value=round(spl(e), 4)),
        "efficiency": Score(
            value=float(e.path_efficiency) if e.path_efficiency is not None else 0.0,
            explanation="shortest path / moves of a success; 0 without success",
        ),
        "ending": Score(value=e.ending or "running", explanation=e.failure_reason),
    }
    usage = ModelUsage(
        input_tokens=e.input_tokens,
        output_tokens=e.output_tokens,
        total_tokens=e.input_tokens + e.output_tokens,
        total_cost=None if e.cost_usd is None else float(e.cost_usd),  # None: unpriced
    )
    return EvalSample(
        id=e.maze,
        epoch=epoch,
        input=first_input,
        target="reach the goal",
        messages=messages,
        output=ModelOutput.from_message(last) if last is not None else ModelOutput(model=model),
        scores=scores,
        metadata=_metadata(e),
        events=events,
        model_usage={model: usage},
        started_at=e.started_at.isoformat(),
        completed_at=e.completed_at.isoformat() if e.completed_at else None,
        total_time=e.duration_seconds,
        turn_count=e.turns,
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def log(group: Group, records: dict[int, transcripts.Transcript | None], origin: Provenance) -> EvalLog:
    """One agent's experiments as one evaluation log."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )
    from inspect_ai.model import ModelUsage

    first = group.experiments[0]
    model = f"{first.llm_provider}/{first.model_name}"
    chosen = epochs(group.experiments)
    samples = [sample(e, epoch, records.get(e.experiment_id), model) for e, epoch in chosen]
    runs = [e for e, _ in chosen if e.ending in (Ending.SUCCESS, Ending.AGENT)]
    metrics = {
        "success": {
            "accuracy": _mean([1.0 if e.ending == Ending.SUCCESS else 0.0 for e in runs]),
            "runs": float(len(runs)),
        },
        "spl": {"mean": _mean([spl(e) for e, _ in chosen])},
        "efficiency": {"mean": _mean([float(e.path_efficiency) for e, _ in chosen if e.path_efficiency is not None])},
    }
    started = min(e.started_at for e, _ in chosen)
    ended = max((e.completed_at for e, _ in chosen if e.completed_at), default=started)
    tokens_in, tokens_out = sum(e.input_tokens for e, _ in chosen), sum(e.output_tokens for e, _ in chosen)
    return EvalLog(
        status="success",
        eval=EvalSpec(
            created=origin.generated.isoformat(),
            task=TASK,
            task_display_name=f"{group.sweep or 'experiments'}: {group.agent}",
            task_id=f"{group.sweep or 'experiments'}/{group.agent}",
            run_id=f"oriole-{group.sweep or 'experiments'}",
            model=model,
            dataset=EvalDataset(
                name="oriole mazes",
                samples=len({e.maze for e, _ in chosen}),
                sample_ids=sorted({e.maze for e, _ in chosen}),
            ),
            config=EvalConfig(epochs=max(epoch for _, epoch in chosen)),
            packages={"oriole": oriole.__version__},
            task_args=_json({"prompt_version": first.prompt_version, "compared_config": first.compared_config}),
            metadata=_json(
                {
                    "agent": group.agent,
                    "sweep": group.sweep,
                    "prompt_version": first.prompt_version,
                    "prompt_hash": first.prompt_hash,
                    "compared_config": first.compared_config,
                    "provenance": origin.metadata(),
                }
            ),
        ),
        results=EvalResults(
            total_samples=len(samples),
            completed_samples=len(samples),
            scores=[
                EvalScore(
                    name=name,
                    scorer=name,
                    scored_samples=len(samples),
                    metrics={k: EvalMetric(name=k, value=v) for k, v in values.items()},
                )
                for name, values in metrics.items()
            ],
        ),
        stats=EvalStats(
            started_at=started.isoformat(),
            completed_at=ended.isoformat(),
            model_usage={
                model: ModelUsage(
                    input_tokens=tokens_in,
                    output_tokens=tokens_out,
                    total_tokens=tokens_in + tokens_out,
                    total_cost=_total_cost([e.cost_usd for e, _ in chosen]),
                )
            },
        ),
        samples=samples,
    )


def transcripts_of(results: Results, experiments: Sequence[ComparedExperiment]) -> Iterator[tuple[int, Any]]:
    """Each experiment's transcript, or None where its requests cannot be rebuilt (stored before they were)."""
    for e in experiments:
        try:
            yield e.experiment_id, transcripts.load(results.store.conn, e.experiment_id)
        except transcripts.TranscriptUnavailable:
            yield e.experiment_id, None


def write(results: Results, experiments: Sequence[ComparedExperiment], origin: Provenance, folder: Path) -> list[Path]:
    """One ``.eval`` log per agent (and sweep) into ``folder``; the files written."""
    from inspect_ai.log import write_eval_log

    written = []
    for n, group in enumerate(groups(experiments), 1):
        records = dict(transcripts_of(results, group.experiments))
        path = folder / f"{group.file_name()}_{n}.eval"
        write_eval_log(log(group, records, origin), str(path))
        written.append(path)
    return written


def _total_cost(costs: Sequence[Decimal | None]) -> float | None:
    """What the runs cost together; None (unknown, as Inspect reads it) when any of them is unpriced."""
    return None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None))
