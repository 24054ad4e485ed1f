"""An experiment's transcript: each turn as the model saw it, rebuilt from what is stored.

Every request is rebuilt by ``oriole.core.requests`` (the one place that knows how a call's request was stored)
and put in its provider's wire format by the provider's own ``wire_request``, so the transcript shows the body the
server received (a picture drawn again from its stored record, checked by its hash: ``oriole.core.picture``); the
answer is the one the server returned, verbatim. Three forms: ``jsonl`` (one object per line:
the experiment, then per turn its calls and the turn itself), ``text`` and ``html`` (a page of its own, and the
conversation pane of the replay page). Model text is data: escaped in HTML, never interpreted. A call that stored
the hash of the bytes it sent (``sent_sha256``) is marked as shown as sent, or, where today's adapter rebuilds
another body, as differing from what was sent.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from psycopg.rows import class_row

from oriole.catalog import prompt_hash
from oriole.core import picture as pictures
from oriole.core.maze import Maze
from oriole.core.memory import StoredTurn
from oriole.core.requests import NotRebuildable, RebuiltRequest, StoredCall, rebuild_turn, tool_json
from oriole.core.tools import ToolSpec
from oriole.core.turn_loop import message_as_json
from oriole.errors import OrioleError
from oriole.provider_registry import PROVIDERS
from oriole.providers.contract import load_adapter
from oriole.providers.wire import sent_hash
from oriole.statuses import TurnEnd
from oriole.store.mazes import MAZE_COLUMNS, MazeRow
from oriole_workstation import assets
from oriole_workstation.display import terminal_safe
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.provenance import build_text


class TranscriptUnavailable(OrioleError):
    """An experiment whose transcript cannot be shown (it does not exist, or it was stored before requests were)."""


@dataclass(frozen=True)
class CallEntry:
    """One model call: its request rebuilt (neutral and on the wire), its answer and what it cost."""

    rebuilt: RebuiltRequest
    wire: dict
    answer: object  # the verbatim answer, as JSON when it is JSON (None: a baseline answers without a model)
    row: dict
    carried: int = 0  # how many of the request's messages came from earlier turns (they come first)

    @property
    def call(self) -> StoredCall:
        return self.rebuilt.call

    @property
    def sent_sha256(self) -> str | None:
        """The hash of the bytes the call sent, stored when it was sent (None: stored before issue 31)."""
        return (self.call.record or {}).get("sent_sha256")

    @property
    def rebuilt_as_sent(self) -> bool | None:
        """Whether the body rebuilt with today's adapter (``wire``) is the one sent, byte for byte: False marks a
        call the transcript cannot show as it was (the adapter changed since); None when no hash was stored."""
        return None if self.sent_sha256 is None else sent_hash(self.wire) == self.sent_sha256

    def sent_note(self) -> str | None:
        """What the transcript says of the body it shows, where the call stored the hash of what it sent."""
        if self.sent_sha256 is None:
            return None
        if self.rebuilt_as_sent:
            return f"request as sent (sha256:{self.sent_sha256[:12]})"
        return (
            f"REBUILT REQUEST DIFFERS from the one sent (sha256:{self.sent_sha256[:12]}, rebuilt "
            f"sha256:{sent_hash(self.wire)[:12]}): today's adapter no longer sends what this call sent"
        )

    @property
    def sent_pictures(self) -> dict[str, pictures.Picture]:
        """The pictures the call sent, by their hash (drawn again from their records)."""
        return {m.picture.record["sha256"]: m.picture for m in self.rebuilt.request.messages if m.picture}

    def as_json(self) -> dict:
        row, record = self.row, self.call.record or {}
        return {
            "type": "call",
            "turn": self.call.turn,
            "call": self.call.index,
            "kind": self.call.kind,
            "request": self.wire,
            "sent_sha256": self.sent_sha256,
            "rebuilt_as_sent": self.rebuilt_as_sent,
            "answer": self.answer,
            "response": self.call.response,
            "carried_turns": self.rebuilt.carried_turns,
            "context_actions": record.get("context_actions"),
            "input_tokens": row["input_tokens"],
            "output_tokens": row["output_tokens"],
            "latency_ms": row["latency_ms"],
            "stop_reason": row["stop_reason"],
            "throttles": row["throttles"],
            "retries": record.get("retries", 0),
            "durations": row["durations"],
        }


@dataclass(frozen=True)
class TurnEntry:
    number: int
    end_reason: str
    context: dict | None  # what the requests left out (trim) or summarised (compaction)
    closing: list[dict]
    actions: list[dict]
    calls: list[CallEntry] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "type": "turn",
            "turn": self.number,
            "end_reason": self.end_reason,
            "context": self.context,
            "closing": self.closing,
            "actions": self.actions,
        }


@dataclass(frozen=True)
class Transcript:
    experiment: dict
    turns: list[TurnEntry]
    systems: dict[str, str]  # SHA-256 of a system prompt sent (experiments.prompt_hash for the prompt) -> its text

    def lines(self) -> Iterator[dict]:
        yield {"type": "experiment", **self.experiment, "system_prompts": self.systems}
        for turn in self.turns:
            for call in turn.calls:
                yield call.as_json()
            yield turn.as_json()


def load(conn, experiment_id: int, only: int | None = None) -> Transcript:
    """The transcript of one experiment from the database (a few reads: the workstation's, not the turn path's);
    ``only``: of that turn alone (what it carries from earlier turns read too), as the viewer opens a turn."""
    experiment = conn.execute(_EXPERIMENT, (experiment_id,)).fetchone()
    if experiment is None:
        raise TranscriptUnavailable(f"experiment {experiment_id} does not exist")
    upto = {"id": experiment_id, "upto": only}
    turns = conn.execute(_TURNS, upto).fetchall()
    calls = conn.execute(_CALLS, upto).fetchall()
    actions = conn.execute(_ACTIONS, upto).fetchall()
    hashes = sorted(
        {
            h
            for c in calls
            if c["request"]
            for h in (c["request"]["system"], c["request"]["tools"], c["request"]["settings"])
        }
    )
    parts = {
        r["hash"]: r["body"]
        for r in conn.execute("SELECT hash, body FROM request_parts WHERE hash = ANY(%s)", (hashes,))
    }
    maze_row = conn.cursor(row_factory=class_row(MazeRow)).execute(_MAZE, (experiment["maze_id"],)).fetchone()
    assert maze_row is not None, "experiments.maze_id references mazes"
    maze = maze_row.stored().maze
    return build(experiment, turns, calls, actions, parts, maze, only)


def turn_list(conn, experiment_id: int) -> list[dict]:
    """Each turn's number, why it ended and how many actions and calls it holds: a transcript's outline, read
    without its messages."""
    return conn.execute(_OUTLINE, (experiment_id,)).fetchall()


def build(
    experiment: dict,
    turns: list[dict],
    calls: list[dict],
    actions: list[dict],
    parts: dict,
    maze: Maze | None = None,
    only: int | None = None,
) -> Transcript:
    """The transcript from the stored rows (pure: tested without a database); ``maze`` draws its pictures again
    (with each action's ``tiles_seen``, which the transcript itself does not show); ``only``: that turn alone."""
    sightings = [a.pop("tiles_seen", None) for a in actions]

    def draw(record: dict) -> pictures.Picture:
        if maze is None:
            raise NotRebuildable("a picture cannot be drawn again without its maze")
        return pictures.regenerate(record, maze, sightings)

    wire_request = load_adapter(experiment["wire_provider"]).wire_request
    by_turn: dict[int, list[dict]] = {}
    for row in calls:
        by_turn.setdefault(row["turn_number"], []).append(row)
    earlier = {
        t["turn_number"]: StoredTurn(
            t["turn_number"],
            tuple(
                {"request": c["request_messages"], "response": c["response"]}
                for c in by_turn.get(t["turn_number"], ())
                if c["kind"] == "turn"
            ),
            tuple(t["closing_messages"] or ()),
            t["message_tokens"],
        )
        for t in turns
    }
    entries: list[TurnEntry] = []
    systems: dict[str, str] = {}
    for t in turns:
        if only is not None and t["turn_number"] != only:
            continue
        rows = by_turn.get(t["turn_number"], [])
        if any(r["request"] is None for r in rows):
            raise TranscriptUnavailable(
                f"experiment {experiment['experiment_id']} turn {t['turn_number']} was stored "
                "before requests were recorded (migration 0017): its requests cannot be "
                "rebuilt"
            )
        try:
            rebuilt = rebuild_turn([StoredCall.from_row(r) for r in rows], earlier, parts, draw)
        except NotRebuildable as error:
            raise TranscriptUnavailable(f"experiment {experiment['experiment_id']}: {error}") from None
        entry = TurnEntry(
            t["turn_number"],
            t["end_reason"],
            t["context"],
            list(t["closing_messages"] or ()),
            [a for a in actions if a["turn_number"] == t["turn_number"]],
        )
        for request, row in zip(rebuilt, rows, strict=True):
            systems.setdefault(prompt_hash(request.request.system_prompt), request.request.system_prompt)
            carried = sum(len(earlier[n].messages()) for n in request.carried_turns)
            entry.calls.append(
                CallEntry(
                    request, wire_request(request.request, request.settings), _answer(row["answer"]), row, carried
                )
            )
        entries.append(entry)
    return Transcript(experiment, entries, systems)


def _answer(raw: bytes | None) -> object:
    """The verbatim answer as JSON when it is JSON, else as text (it is shown, never interpreted)."""
    if raw is None:
        return None
    try:
        return json.loads(bytes(raw))
    except ValueError:
        return bytes(raw).decode("utf-8", errors="replace")


_EXPERIMENT = """
    SELECT e.id AS experiment_id, e.llm_provider, coalesce(o.llm_provider, e.llm_provider) AS wire_provider,
           e.model_name, e.agent_label, e.prompt_version, e.prompt_hash, e.status, e.ending, e.failure_reason,
           e.replay_of, e.seed, e.config, e.maze_id, m.name AS maze, e.action_count AS actions,
           e.turn_count AS turns, e.model_build, e.server_software, e.server_version, e.model_parameter_size,
           e.model_quantization, e.inference_profile, e.model_identity -> 'unknown' AS identity_unknown
      FROM experiments e JOIN mazes m ON m.id = e.maze_id LEFT JOIN experiments o ON o.id = e.replay_of
     WHERE e.id = %s
"""
_UPTO = "experiment_id = %(id)s AND (%(upto)s::int IS NULL OR turn_number <= %(upto)s)"
_TURNS = f"""SELECT turn_number, end_reason, context, closing_messages, message_tokens, action_count
              FROM turns WHERE {_UPTO} ORDER BY turn_number"""
_CALLS = f"""SELECT turn_number, call_index, kind, request_messages, response, request, answer, input_tokens,
                   output_tokens, latency_ms, stop_reason, throttles, durations
              FROM model_calls WHERE {_UPTO} ORDER BY turn_number, call_index"""
_ACTIONS = f"""SELECT step_number, turn_number, action_type, tool_name, arguments, reasoning, from_x, from_y, to_x,
                     to_y, success, error, tiles_seen
                FROM actions WHERE {_UPTO} ORDER BY step_number"""
_OUTLINE = """SELECT t.turn_number, t.end_reason, t.action_count AS actions,
                     (SELECT count(*) FROM model_calls c
                       WHERE c.experiment_id = t.experiment_id AND c.turn_number = t.turn_number) AS calls
                FROM turns t WHERE t.experiment_id = %s ORDER BY t.turn_number"""
_MAZE = f"SELECT {MAZE_COLUMNS} FROM mazes WHERE id = %s"


# --- text ------------------------------------------------------------------------------------------------


def text(transcript: Transcript) -> str:
    """The transcript as plain text, turn by turn (control characters written out)."""
    e = transcript.experiment
    out = [
        f"experiment {e['experiment_id']}: {e['llm_provider']}/{e['model_name']} on {e['maze']} "
        f"(prompt {e['prompt_version']}, {e['status']})",
        f"model {model_build(e)}",
    ]
    for digest, system in transcript.systems.items():
        out += [f"\n== system prompt sha256:{digest[:12]} ==", system]
    for turn in transcript.turns:
        out.append(f"\n== turn {turn.number}: {len(turn.actions)} action(s), {turn_ending(turn.end_reason)} ==")
        if turn.context:
            out.append(f"   context: {json.dumps(turn.context)}")
        out += [f"   ! {flag}" for flag in over_budget_flags(turn.context)]
        for call in turn.calls:
            out += _call_text(call)
        out += [f"   > {m['role']} (no call read it): {_shown(m.get('content'))}" for m in turn.closing]
        for a in turn.actions:
            out.append(
                f"   step {a['step_number']}: {a['action_type']} ({a['from_x']}, {a['from_y']}) -> "
                f"({a['to_x']}, {a['to_y']}) {'ok' if a['success'] else 'failed: ' + (a['error'] or '')}"
            )
    return terminal_safe("\n".join(out), lines=True) + "\n"


def over_budget_flags(context: dict | None) -> list[str]:
    """A warning per call of the turn whose prompt the server counted over the context budget (``over_budget`` in
    ``turns.context``, written by ``oriole.core.turn_loop.over_budget``): the server may have cut what it read."""
    return [
        f"call {flag['call']}: the server counted {flag['prompt_tokens']:,} prompt tokens, over the context budget "
        f"of {flag['budget']:,}: it may have cut the prompt, so what the model saw may not be what is stored"
        for flag in (context or {}).get("over_budget", ())
    ]


def _call_text(call: CallEntry) -> list[str]:
    row, record = call.row, call.call.record or {}
    lines = [
        f"-- call {call.call.index} ({call.call.kind}): system sha256:"
        f"{prompt_hash(call.rebuilt.request.system_prompt)[:12]}, "
        f"{len(call.rebuilt.request.tools)} tools, in {row['input_tokens']} / out {row['output_tokens']} "
        f"tokens, {row['latency_ms']} ms, stop {row['stop_reason']}, throttles {row['throttles']}, "
        f"retries {record.get('retries', 0)}"
    ]
    if note := call.sent_note():
        lines.append(f"   {note}")
    if call.rebuilt.carried_turns:
        lines.append(f"   carried turns: {', '.join(map(str, call.rebuilt.carried_turns))}")
    if record.get("context_actions") is not None:
        lines.append(f"   context keeps {record['context_actions']} recent action(s)")
    for message in call.call.request_messages:
        lines.append(f"   > {message['role']}: {_shown(message.get('content'))}")
        if message.get("picture"):
            lines.append(f"     picture: {json.dumps(message['picture'], sort_keys=True)}")
    response = call.call.response
    if response.get("thinking"):
        lines.append(f"   < reasoning: {response['thinking']}")
    if response.get("text"):
        lines.append(f"   < text: {response['text']}")
    for c in response.get("tool_calls") or ():
        lines.append(f"   < call {c.get('id')}: {c['name']} {_shown(c.get('arguments'))}")
    return lines


def _shown(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


# --- HTML ------------------------------------------------------------------------------------------------


TURN_ENDINGS = {
    TurnEnd.NO_TOOL_CALL: "answered without calling a tool (the usual end of a turn)",
    TurnEnd.ACTION_BUDGET: "used the turn's actions",
    TurnEnd.MAX_MOVES: "reached the experiment's action limit",
    TurnEnd.GOAL_FOUND: "found the goal",
    TurnEnd.GAVE_UP: "gave up",
    TurnEnd.CIRCUIT_BREAKER: "stopped after three invalid calls in a row (circuit breaker)",
    TurnEnd.REPETITION: "stopped repeating itself",
    TurnEnd.DEADLINE: "ended before the task's time ran out",
}


def turn_ending(end_reason: str) -> str:
    """Why a turn ended, in words (``turns.end_reason``; an unknown one as it is stored)."""
    return TURN_ENDINGS.get(end_reason, end_reason)  # type: ignore[call-overload]


def tools_of(transcript: Transcript) -> list[ToolSpec]:
    """Every tool the model was offered, each once, in the order first offered."""
    found: dict[str, ToolSpec] = {}
    for turn in transcript.turns:
        for call in turn.calls:
            for tool in call.rebuilt.request.tools:
                found.setdefault(json.dumps(tool_json(tool), sort_keys=True), tool)
    return list(found.values())


def model_build(e: Mapping) -> str:
    """The build the model's server reported at the start (``provenance.build_text``), with why it is unknown."""
    if not PROVIDERS[e.get("wire_provider") or e["llm_provider"]].calls_model:
        return "none (a baseline calls no model)"
    shown = build_text(
        e.get("model_build"),
        e.get("server_software"),
        e.get("server_version"),
        e.get("model_parameter_size"),
        e.get("model_quantization"),
        e.get("inference_profile"),
    )
    unknown = e.get("identity_unknown") or {}
    return shown + (f"; not told: {'; '.join(f'{k}: {v}' for k, v in sorted(unknown.items()))}" if unknown else "")


def header_html(transcript: Transcript) -> str:
    """What the transcript is of, before its turns: the outcome, the agent, the maze, the prompt, the seed, the
    configuration and every tool with its schema."""
    e = transcript.experiment
    agent = e.get("agent_label") or f"{e['llm_provider']}/{e['model_name']}"
    facts = [
        (
            "outcome",
            f"{outcome_text(e['status'], e['failure_reason'])} ({ending_text(e.get('ending'))}) after "
            f"{e.get('actions', 0)} action(s) in {e.get('turns', 0)} turn(s)"
            + (f": {e['failure_reason']}" if e["failure_reason"] else ""),
        ),
        ("agent", agent + (f" ({e['llm_provider']}/{e['model_name']})" if e.get("agent_label") else "")),
        ("maze", e["maze"]),
        ("prompt", f"{e['prompt_version']} sha256:{e['prompt_hash']}"),
        ("seed", "none" if e["seed"] is None else str(e["seed"])),
        ("model", model_build(e)),
    ]
    rows = "".join(
        f'<tr><th scope="row">{_e(key)}</th><td><code>{_e(json.dumps(value))}</code></td></tr>'
        for key, value in sorted((e.get("config") or {}).items())
    )
    tools = "".join(
        f'<details class="tool"><summary><code>{_e(t.name)}</code>: {_e(t.description)}</summary>'
        f"<pre>{_e(json.dumps(t.parameters, indent=2, sort_keys=True))}</pre></details>"
        for t in tools_of(transcript)
    )
    return (
        '<section id="transcript-header" aria-label="experiment"><dl class="facts">'
        + "".join(f"<dt>{_e(term)}</dt><dd>{_e(value)}</dd>" for term, value in facts)
        + f'<dt>configuration</dt><dd><details class="config"><summary>{len(e.get("config") or {})} settings, '
        f'as stored at the start</summary><table class="config">{rows}</table></details></dd>'
        + f"<dt>tools</dt><dd>{tools or 'none offered'}</dd></dl></section>"
    )


EXPAND = (
    '<p class="expand"><button type="button" id="expand-all">expand all</button> '
    '<button type="button" id="collapse-all">collapse all</button></p>'
)


def conversation_html(transcript: Transcript) -> str:
    """The conversation as HTML: buttons that open and close every turn (``transcript.js``), the system prompt
    once, then one ``<details>`` per turn (``data-turn``), its summary saying why it ended in words."""
    return "\n".join(
        [
            EXPAND,
            *systems_html(transcript),
            *(
                turn_details(turn.number, len(turn.actions), len(turn.calls), turn.end_reason, turn_body(turn))
                for turn in transcript.turns
            ),
        ]
    )


def outline_html(transcript: Transcript, turns: list[dict], source: Callable[[int], str]) -> str:
    """The conversation with every turn closed and empty: ``transcript.js`` reads a turn from ``source(number)``
    when it is opened (the viewer, for experiments of any length). ``transcript`` gives the system prompt (its
    first turn is enough); ``turns``: ``turn_list``."""
    return "\n".join(
        [
            EXPAND,
            *systems_html(transcript),
            *(
                turn_details(
                    t["turn_number"], t["actions"], t["calls"], t["end_reason"], source=source(t["turn_number"])
                )
                for t in turns
            ),
        ]
    )


def systems_html(transcript: Transcript) -> list[str]:
    return [
        f'<details class="system"><summary>system prompt {_e(transcript.experiment["prompt_version"])} '
        f"sha256:{digest[:12]}</summary><pre>{_e(system)}</pre></details>"
        for digest, system in transcript.systems.items()
    ]


def turn_details(number: int, actions: int, calls: int, end_reason: str, body: str = "", source: str = "") -> str:
    """A turn as a closed ``<details>``: its summary (actions, calls, why it ended in words) and its body, or the
    address it is read from when opened (``data-src``)."""
    src = f' data-src="{html.escape(source)}"' if source else ""
    return (
        f'<details class="turn" data-turn="{number}"{src}><summary>turn {number}: {actions} action(s), '
        f'{calls} call(s); <span class="ending" data-end="{_e(end_reason)}">{_e(turn_ending(end_reason))}</span>'
        f"</summary>{body}</details>"
    )


def turn_body(turn: TurnEntry) -> str:
    """What a turn's ``<details>`` holds: its context, each call, and the results no call read."""
    calls = "".join(_call_html(call) for call in turn.calls)
    if turn.closing:  # what the last answer's calls got back, which no call of the turn read
        calls += (
            '<div class="call"><p class="meta">results no call read</p>'
            + "".join(_message_html(m) for m in turn.closing)
            + "</div>"
        )
    context = f'<p class="meta">{_e(json.dumps(turn.context))}</p>' if turn.context else ""
    context += "".join(f'<p class="meta over-budget">{_e(flag)}</p>' for flag in over_budget_flags(turn.context))
    return context + calls


def _call_html(call: CallEntry) -> str:
    row, record, response = call.row, call.call.record or {}, call.call.response
    meta = (
        f"call {call.call.index} ({call.call.kind}) · in {row['input_tokens']} / out {row['output_tokens']} "
        f"tokens · {row['latency_ms']} ms · stop {row['stop_reason']} · throttles {row['throttles']} · "
        f"retries {record.get('retries', 0)}"
    )
    if record.get("context_actions") is not None:
        meta += f" · context keeps {record['context_actions']} recent action(s)"
    body = [f'<div class="call"><p class="meta">{_e(meta)}</p>']
    if note := call.sent_note():
        body.append(f'<p class="{"sent" if call.rebuilt_as_sent else "sent differs"}">{_e(note)}</p>')
    if call.rebuilt.carried_turns:
        carried = call.rebuilt.request.messages[: call.carried]
        body.append(
            f"<details><summary>earlier turns carried by the memory: "
            f"{_e(', '.join(map(str, call.rebuilt.carried_turns)))}</summary>"
            + "".join(_message_html(message_as_json(m)) for m in carried)
            + "</details>"
        )
    body += [_message_html(m, call.sent_pictures) for m in call.call.request_messages]
    if response.get("thinking"):
        body.append(
            f'<div class="msg answer"><span class="role">reasoning</span><pre>{_e(response["thinking"])}</pre></div>'
        )
    if response.get("text"):
        body.append(
            f'<div class="msg answer"><span class="role">assistant</span><pre>{_e(response["text"])}</pre></div>'
        )
    for c in response.get("tool_calls") or ():
        body.append(
            f'<div class="msg answer"><span class="role">tool call {_e(str(c.get("id")))}</span>'
            f"<pre>{_e(c['name'])} {_e(_shown(c.get('arguments')))}</pre></div>"
        )
    return "".join(body) + "</div>"


def _message_html(message: dict, sent: Mapping[str, pictures.Picture] = {}) -> str:
    """A message; one that carried a picture shows it as sent (``sent``: the call's pictures by hash)."""
    role = message["role"] + (f" ({message['name']})" if message.get("name") else "")
    shown = ""
    if (record := message.get("picture")) and (picture := sent.get(record["sha256"])) is not None:
        shown = (
            f'<img class="picture" src="data:{pictures.MEDIA_TYPE};base64,'
            f'{base64.b64encode(picture.png).decode()}" width="{picture.width}" height="{picture.height}" '
            f'alt="{_e(record["view"])} view at step {record["step"]}, as the model was sent it">'
        )
    return (
        f'<div class="msg"><span class="role">{_e(role)}</span><pre>{_e(_shown(message.get("content")))}</pre>'
        f"{shown}</div>"
    )


def _e(value: str) -> str:
    return html.escape(terminal_safe(value, lines=True))


def page(transcript: Transcript) -> str:
    """The transcript as a page of its own (no network; its one script opens and closes every turn): the
    header, then the conversation."""
    e = transcript.experiment
    agent = e.get("agent_label") or f"{e['llm_provider']}/{e['model_name']}"
    title = _e(f"transcript of experiment {e['experiment_id']}: {agent} on {e['maze']}")
    css = "body { font-family: sans-serif; margin: 16px; color: #111827; }\n" + assets.text("transcript.css")
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
        f"<style>{css}</style>\n</head>\n<body>\n<h1>{title}</h1>\n{header_html(transcript)}\n"
        f'<section id="conversation" aria-label="conversation">\n{conversation_html(transcript)}\n</section>\n'
        f"{assets.inline_script('transcript.js')}\n</body>\n</html>\n"
    )


def json_value(value: object) -> str:
    """Bytes in a wire body (Bedrock's image block) as the base64 the service's JSON carries; the rest as text."""
    return base64.b64encode(value).decode() if isinstance(value, bytes) else str(value)


FORMATS = ("html", "text", "jsonl")


def render(transcript: Transcript, form: str) -> str:
    if form == "jsonl":
        return "".join(json.dumps(line, default=json_value) + "\n" for line in transcript.lines())
    return text(transcript) if form == "text" else page(transcript)
