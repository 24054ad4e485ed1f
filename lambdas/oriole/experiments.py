"""The experiment lifecycle, one function per state-machine task.

Handlers call these with their event and the adapters they need (the store, a parameter reader, an
agent factory); here the event is validated, the core is called and the result is written. Each
function is safe to retry: a retried start, turn or finalize finds its earlier work and returns it.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from oriole import catalog, inputs, mazeset, progress
from oriole.baselines import BASELINE_NAMES, make_baseline
from oriole.config import parse_pricing, resolve
from oriole.errors import (
    ExperimentNotFound,
    ExperimentNotRunning,
    InvalidExecutionInput,
    ModelThrottled,
    TurnOutOfOrder,
    UnknownPromptVersion,
)
from oriole.maze import goal_visible, vision
from oriole.store import NewExperiment, Store, StoredMaze, stored_maze
from oriole.tools import INVALID_ACTION, Memory, Rules, WorldState
from oriole.turn_loop import Agent, ModelCall, TurnOutcome, message_as_json, run_turn, turn_context

AgentFactory = Callable[[dict, StoredMaze], Agent]
_MAZE_CACHE: dict[int, StoredMaze] = {}  # experiment id -> its maze; a warm container skips the grid
_MAZE_CACHE_SIZE = 64


def _state(experiment_id: int, provider: str, turn_number: int, part: int) -> dict:
    """The small state the execution carries between tasks: ids and counters, never history."""
    return {"experimentId": experiment_id, "llmProvider": provider, "turnNumber": turn_number,
            "turnInExecution": 1, "part": part}


def start(event: Mapping, store: Store, read_parameters: Callable[[], Mapping[str, str]]) -> dict:
    """StartExperiment: validate the input, snapshot the configuration, create the experiment row.

    A successor execution (input ``{"experimentId": N}``) attaches itself to its experiment instead.
    Nothing is written until every check has passed, so a bad input leaves no row behind.
    """
    raw, execution_arn = event.get("input"), event.get("executionArn")
    if not isinstance(execution_arn, str) or not execution_arn:
        raise InvalidExecutionInput("StartExperiment needs the executionArn from the context object")
    if isinstance(raw, dict) and "experimentId" in raw:
        return _resume(inputs.parse(inputs.Continuation, raw, "continuation input"), execution_arn, store)
    request = inputs.parse(inputs.ExecutionInput, raw, "execution input")
    entry = mazeset.get_maze(request.mazeId)
    if request.llmProvider == "baseline" and request.modelName not in BASELINE_NAMES:
        raise InvalidExecutionInput(f"modelName {request.modelName!r} is not a baseline agent; "
                                    f"expected one of {', '.join(BASELINE_NAMES)}")
    stored = read_parameters()
    config = resolve(stored, request.config)
    prompt = stored.get(catalog.prompt_name(request.promptVersion))
    if not prompt:
        known = sorted(n.rsplit("/", 1)[-1] for n in stored if n.startswith(catalog.PROMPTS_PATH + "/"))
        raise UnknownPromptVersion(f"no prompt at {catalog.prompt_name(request.promptVersion)}; stored versions: "
                                   f"{', '.join(known) or 'none'}")
    if config["seed"] == -1:
        config["seed"] = secrets.randbelow(2**31)
    pricing = catalog.pricing_name(request.modelName)
    config["pricing"] = parse_pricing(pricing, stored.get(pricing)) if request.llmProvider != "baseline" else None
    maze = entry.maze
    row = store.create_experiment(NewExperiment(
        maze_id=entry.id, llm_provider=request.llmProvider, model_name=request.modelName,
        prompt_version=request.promptVersion, prompt_text=prompt, prompt_hash=catalog.prompt_hash(prompt),
        agent_id=request.agentId, comment=request.comment, config=config, seed=config["seed"],
        start=maze.start, goal_first_seen_step=0 if goal_visible(vision(maze, maze.start, config["visionRange"]))
        else None, execution_arn=execution_arn,
    ))
    return _state(row["id"], row["llm_provider"], row["turn_count"] + 1, part=1)


def _resume(request: inputs.Continuation, execution_arn: str, store: Store) -> dict:
    row = store.attach_execution(request.experimentId, execution_arn)
    if row is None:
        raise ExperimentNotFound(f"experiment {request.experimentId} does not exist; cannot continue it")
    if row["status"] != "running":
        raise ExperimentNotRunning(f"experiment {request.experimentId} is already {row['status']}")
    return _state(row["id"], row["llm_provider"], row["turn_count"] + 1, part=row["parts"])


def _cache_maze(experiment_id: int, maze: StoredMaze) -> None:
    if len(_MAZE_CACHE) >= _MAZE_CACHE_SIZE:
        _MAZE_CACHE.clear()
    _MAZE_CACHE[experiment_id] = maze


def baseline_agent(row: dict, maze: StoredMaze) -> Agent:
    return make_baseline(row["model_name"], maze.maze, row["seed"], row["agent_state"])


def play_turn(event: Mapping, store: Store, agent_factory: AgentFactory) -> dict:
    """One agent task: load the experiment, play one turn, write it in one statement.

    A turn that is already committed (a retry after a lost response) is returned from the database
    without calling the agent again.
    """
    request = inputs.parse(inputs.TurnRequest, dict(event), "agent task input")
    experiment_id, turn_number = request.experimentId, request.turnNumber
    maze = _MAZE_CACHE.get(experiment_id)
    row = store.load_turn(experiment_id, turn_number, with_maze=maze is None)
    if row is None:
        raise ExperimentNotFound(f"experiment {experiment_id} does not exist")
    if row["committed_turn"]:
        return _turn_result(turn_number, row["committed_turn"], row)
    if row["status"] != "running":
        raise ExperimentNotRunning(f"experiment {experiment_id} is {row['status']}; turn {turn_number} not played")
    if row["turn_count"] != turn_number - 1:
        raise TurnOutOfOrder(f"experiment {experiment_id} has {row['turn_count']} turns; "
                             f"turn {turn_number} cannot be next")
    if maze is None:
        maze = stored_maze(row["maze"])
        _cache_maze(experiment_id, maze)
    return _play(row, maze, turn_number, store, agent_factory(row, maze))


def _play(row: dict, maze: StoredMaze, turn_number: int, store: Store, agent: Agent) -> dict:
    config = row["config"]
    started_at = datetime.now(UTC)
    world = WorldState(
        position=(row["current_x"], row["current_y"]), step=row["action_count"], moves=row["move_count"],
        failed_moves=row["failed_move_count"], recalls=row["recall_count"], invalid_calls=row["invalid_call_count"],
        moves_at_last_recall=row["moves_at_last_recall"], goal_found=row["goal_found"],
        goal_first_seen_step=row["goal_first_seen_step"], goal_reached_step=row["goal_reached_step"],
    )
    game = Rules(maze.maze, config["visionRange"], config["goalCondition"], config["recallInterval"],
                 config["maxRecallActions"])
    recent = row["recent_actions"]
    memory = Memory(config["maxRecallActions"],
                    [((a["to_x"], a["to_y"]), a["tiles_seen"]) for a in recent[-config["maxRecallActions"]:]])
    history = [_history_entry(a) for a in recent[-config["historyActions"]:]] if config["historyActions"] else []
    remaining = config["maxMoves"] - world.step
    per_turn = config["maxActionsPerTurn"]
    budget, budget_reason = (per_turn, "action_budget") if per_turn < remaining else (remaining, "max_moves")
    context_budget = config["numCtx"] if row["llm_provider"] == "ollama" else None
    try:
        outcome = run_turn(agent, row["prompt_text"], world, game, memory,
                           turn_context(world, game, history, config["maxMoves"]), budget, budget_reason,
                           context_budget)
    except ModelThrottled as err:
        store.record_throttles(row["id"], err.throttles)
        raise
    turn = _turn_row(outcome, world, started_at, config.get("pricing"))
    committed = store.commit_turn(row["id"], turn_number, turn, [_action_row(a) for a in outcome.actions],
                                  [_call_row(i, call) for i, call in enumerate(outcome.calls, 1)],
                                  _experiment_update(outcome, world, row, getattr(agent, "state", {})))
    if not committed:  # another attempt of this turn committed first: its result is the truth
        stored = store.load_turn(row["id"], turn_number, with_maze=False)
        if stored is None or not stored["committed_turn"]:
            raise TurnOutOfOrder(f"experiment {row['id']} changed while turn {turn_number} was played "
                                 f"and the turn was not written; retry the task")
        return _turn_result(turn_number, stored["committed_turn"], stored)
    return {"turnNumber": turn_number, "actions": len(outcome.actions), "endReason": outcome.end_reason,
            "goalFound": world.goal_found, "position": list(world.position),
            "inputTokens": turn["input_tokens"], "outputTokens": turn["output_tokens"]}


def _history_entry(action: dict) -> dict:
    entry = {"step": action["step_number"], "action": action["action_type"],
             "position": [action["to_x"], action["to_y"]], "success": action["success"]}
    if action["error"]:
        entry["error"] = action["error"]
    return entry


def cost_usd(input_tokens: int, output_tokens: int, pricing: dict | None) -> float:
    """Dollars for the tokens at the prices captured in the snapshot (0 without a pricing entry)."""
    if not pricing:
        return 0.0
    return (input_tokens * pricing["inputPerMTok"] + output_tokens * pricing["outputPerMTok"]) / 1_000_000


def _turn_row(outcome: TurnOutcome, world: WorldState, started_at: datetime, pricing: dict | None) -> dict:
    usage = outcome.usage
    return {"first_step": world.step - len(outcome.actions) + 1, "action_count": len(outcome.actions),
            "model_calls": len(outcome.calls), "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens, "latency_ms": usage.latency_ms, "throttles": outcome.throttles,
            "cost_usd": round(cost_usd(usage.input_tokens, usage.output_tokens, pricing), 6),
            "end_reason": outcome.end_reason, "started_at": started_at}


def _call_row(index: int, call: ModelCall) -> dict:
    r = call.response
    return {"call_index": index, "request_messages": [message_as_json(m) for m in call.new_messages],
            "response": {"text": r.text, "thinking": r.thinking,
                         "tool_calls": [{"id": c.call_id, "name": c.name, "arguments": c.arguments}
                                        for c in r.tool_calls]},
            "input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens,
            "latency_ms": r.usage.latency_ms, "stop_reason": r.stop_reason, "durations": r.durations,
            "throttles": r.throttles}


def _action_row(a) -> dict:
    return {"step_number": a.step_number, "action_type": a.action_type, "tool_name": a.tool_name,
            "arguments": a.arguments, "reasoning": a.reasoning, "from_x": a.from_pos[0], "from_y": a.from_pos[1],
            "to_x": a.to_pos[0], "to_y": a.to_pos[1], "success": a.success, "error": a.error,
            "tiles_seen": a.tiles_seen, "goal_visible": a.goal_visible}


def _experiment_update(outcome: TurnOutcome, world: WorldState, row: dict, agent_state: dict) -> dict:
    """Counter increments for this turn (the SQL adds them; tokens and cost come from the turn row), the
    new position and goal steps, and whether the turn stalled (no valid action: the stall rule's count)."""
    return {
        "x": world.position[0], "y": world.position[1], "action_count": len(outcome.actions),
        "move_count": world.moves - row["move_count"],
        "failed_move_count": world.failed_moves - row["failed_move_count"],
        "recall_count": world.recalls - row["recall_count"],
        "invalid_call_count": world.invalid_calls - row["invalid_call_count"],
        "moves_at_last_recall": world.moves_at_last_recall, "goal_found": world.goal_found,
        "goal_first_seen_step": world.goal_first_seen_step, "goal_reached_step": world.goal_reached_step,
        "agent_state": agent_state,
        "stalled": all(a.action_type == INVALID_ACTION for a in outcome.actions),
    }


def _turn_result(turn_number: int, turn: dict, row: dict) -> dict:
    return {"turnNumber": turn_number, "actions": turn["action_count"], "endReason": turn["end_reason"],
            "goalFound": row["goal_found"], "position": [row["current_x"], row["current_y"]],
            "inputTokens": turn["input_tokens"], "outputTokens": turn["output_tokens"]}


def check_progress(event: Mapping, store: Store) -> dict:
    """CheckProgress: read the experiment's counters and decide what the state machine does next."""
    request = inputs.parse(inputs.ProgressRequest, dict(event), "CheckProgress input")
    row = store.progress(request.experimentId)
    if row is None:
        raise ExperimentNotFound(f"experiment {request.experimentId} does not exist")
    if row["status"] != "running":
        raise ExperimentNotRunning(f"experiment {request.experimentId} is already {row['status']}")
    decision = progress.decide(
        progress.Progress(row["goal_found"], row["action_count"], row["elapsed_seconds"], request.turnInExecution,
                          row["stalled_turns"]),
        row["config"],
    )
    return {"decision": decision.decision, "reason": decision.reason, "actions": row["action_count"],
            "goalFound": row["goal_found"]}


def finalize(event: Mapping, store: Store, status: str) -> dict:
    """FinalizeSuccess / FinalizeTimeout / FinalizeFailure: close the experiment once.

    For a failure the reason is the one the state machine passes (a stalled agent), else it is built from
    the caught error (its name and message). A failed StartExperiment passes the execution input: a
    successor's names its experiment; a rejected new input has no experiment to close.
    """
    experiment_id = event.get("experimentId")
    if experiment_id is None and isinstance(event.get("input"), dict):
        experiment_id = event["input"].get("experimentId")
    if status == "failed":
        reason = event.get("reason") or failure_reason(event.get("error") or {})
    else:
        reason = event.get("reason") if status != "succeeded" else None
    if not isinstance(experiment_id, int):
        return {"experimentId": None, "status": status, "closed": False, "failureReason": reason}
    closed = store.finalize(experiment_id, status, reason)
    return {"experimentId": experiment_id, "status": status, "closed": closed, "failureReason": reason}


def failure_reason(error: Mapping) -> str:
    """``Error: message`` from a Step Functions Catch result, unwrapping a Lambda error payload."""
    name = error.get("Error") or "UnknownError"
    cause = error.get("Cause") or ""
    try:
        payload = json.loads(cause)
    except (TypeError, json.JSONDecodeError):
        payload = None
    message = payload.get("errorMessage", cause) if isinstance(payload, dict) else cause
    return f"{name}: {message}" if message else name


_CLOSED_BY_EXECUTION = {"FAILED": ("failed", "failed"), "TIMED_OUT": ("timed_out", "reached its execution timeout"),
                        "ABORTED": ("aborted", "was stopped")}


def close_after_execution(detail: Mapping, store: Store, execution_status: Callable[[str], str | None]) -> dict:
    """The status-change finalizer: close the experiment of an execution that ended while it was open.

    ``detail`` is the detail of Step Functions' "Execution Status Change" event (EventBridge on AWS, the
    local runner's ``wait`` locally, ``oriole doctor``). The state machine closes its experiment on every
    path it can catch; this covers the rest: the execution timed out or was aborted, the failure path
    itself failed, or a successor execution never started (``execution_status`` tells whether the
    successor named in a handed-over execution's output is running; None when it does not exist).

    Only the execution that carries the experiment counts: its latest, or its next successor that ended
    before attaching itself. The end of an earlier part, a closed experiment or a repeated event change
    nothing, and the close itself only applies while that execution is still the latest.
    """
    arn, status, name = detail.get("executionArn"), detail.get("status"), detail.get("name") or ""
    hint = _json_object(detail.get("input")).get("experimentId")
    row = store.experiment_for_execution(arn, hint if type(hint) is int else None)
    result = {"executionArn": arn, "status": status, "experimentId": row["id"] if row else None, "closed": False,
              "failureReason": None}
    if row is None or row["completed"]:
        return result
    arns = row["execution_arns"]
    unattached = arn not in arns and name == progress.successor_name(row["id"], len(arns) + 1)
    if arn != arns[-1] and not unattached:
        return result
    if status == "SUCCEEDED":
        successor = (_json_object(detail.get("output")).get("continuation") or {}).get("successorExecutionArn")
        successor_status = execution_status(successor) if successor else None
        if successor_status == "RUNNING":
            return result  # it attaches itself when it starts; its own end is reported in turn
        new_status, reason = "failed", _continuation_reason(name, successor, successor_status)
    elif status in _CLOSED_BY_EXECUTION:
        new_status, what = _CLOSED_BY_EXECUTION[status]
        reason = f"execution {status}: {name} {what}"
        error, cause = detail.get("error"), detail.get("cause")
        if error or cause:
            reason += f" ({failure_reason({'Error': error, 'Cause': cause}) if error else cause})"
    else:
        return result
    closed = store.finalize(row["id"], new_status, reason, last_execution=arns[-1])
    return {**result, "closed": closed, "failureReason": reason if closed else None}


def _continuation_reason(name: str, successor: str | None, successor_status: str | None) -> str:
    if successor is None:
        return f"continuation did not start: execution {name} ended with the experiment open and no successor"
    state = f"already ended ({successor_status})" if successor_status else "does not exist"
    return f"continuation did not start: execution {name} handed over to {successor.rsplit(':', 1)[-1]}, which {state}"


def _json_object(text: object) -> dict:
    """An event's JSON text (input, output) as a dict; anything else (absent, truncated, a list) as {}."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
