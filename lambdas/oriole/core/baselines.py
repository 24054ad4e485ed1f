"""Baseline agents: reference lines that need no model.

They answer the same model requests an LLM gets, through the same turn loop and tools, one tool call
per answer, and read only what the tools returned (the oracle alone is given the true maze, as the
optimal calibration line). Their memory between turns is a small JSON state stored on the experiment.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from oriole.core.known_map import GOAL, OPEN, UNKNOWN, WALL, KnownMap
from oriole.core.maze import DIRECTIONS, Maze, Position, optimal_moves, shortest_path
from oriole.core.tools import ToolCall
from oriole.core.turn_loop import ModelRequest, ModelResponse
from oriole.provider_registry import BASELINE, PROVIDERS
from oriole.text import JsonObject

_CLOCKWISE = ("north", "east", "south", "west")


def latest_observation(request: ModelRequest) -> JsonObject:
    """The newest tool result or turn context that says where the agent is."""
    for message in reversed(request.messages):
        if isinstance(message.content, dict) and "position" in message.content:
            return message.content
    raise ValueError("no observation in the request: the turn context must carry the position")


def _step_towards(start: Position, target: Position) -> str:
    delta = (target[0] - start[0], target[1] - start[1])
    return next(d for d, v in DIRECTIONS.items() if v == delta)


class Baseline:
    """Common plumbing: one move per answer, with a reasoning line, and a JSON state.

    ``state["size"]`` is the maze's width and height, which every agent is told in its turn context.
    """

    name = "baseline"
    context_budget: int | None = None  # a baseline reads only the newest observation

    def __init__(self, state: JsonObject):
        self.state = state

    @property
    def settings(self) -> JsonObject:
        """A baseline sends nothing to a model: its name is all there is to record."""
        return {"agent": self.name}

    def blocked(self, observation: JsonObject) -> set[str]:
        """Directions known to fail from here: a wall in sight, or the edge of the maze."""
        x, y = observation["position"]
        width, height = self.state["size"]
        walls = {tuple(w) for w in (observation.get("visible") or {}).get("walls", ())}
        return {
            d
            for d, (dx, dy) in DIRECTIONS.items()
            if (x + dx, y + dy) in walls or not (0 <= x + dx < width and 0 <= y + dy < height)
        }

    def choose(self, observation: JsonObject) -> tuple[str, str]:
        raise NotImplementedError

    def respond(self, request: ModelRequest) -> ModelResponse:
        if not request.tools:  # asked to write (a summary), not to act: a baseline has nothing to say
            return ModelResponse(stop_reason="end_turn")
        observation = latest_observation(request)
        direction, reasoning = self.choose(observation)
        self.state["calls"] = self.state.get("calls", 0) + 1
        call = ToolCall(f"move_{direction}", {"reasoning": reasoning}, call_id=f"{self.name}-{self.state['calls']}")
        return ModelResponse(tool_calls=(call,), stop_reason="tool_use")


class RandomAgent(Baseline):
    """Uniformly random among the moves not known to hit a wall; seeded, so a run replays exactly."""

    name = "random"

    def __init__(self, seed: int, state: JsonObject):
        super().__init__(state)
        self.seed = seed

    def choose(self, observation: JsonObject) -> tuple[str, str]:
        blocked = self.blocked(observation)
        legal = [d for d in DIRECTIONS if d not in blocked]
        rng = random.Random(f"{self.seed}:{self.state.get('calls', 0)}")
        return rng.choice(legal or list(DIRECTIONS)), "random legal move"


class WallFollower(Baseline):
    """The right-hand rule: keep a wall on the right; turns right, else straight, else left, else back."""

    name = "wall-follower"

    def choose(self, observation: JsonObject) -> tuple[str, str]:
        pos = tuple(observation["position"])
        failed_here = set()
        if not observation.get("success", True) and self.state.get("tried_from") == list(pos):
            failed_here = set(self.state.get("failed_here", [])) | {self.state["heading"]}
        blocked = self.blocked(observation) | failed_here
        heading = _CLOCKWISE.index(self.state.get("heading", "north"))
        for turn in (1, 0, -1, 2):
            direction = _CLOCKWISE[(heading + turn) % 4]
            if direction not in blocked:
                break
        self.state.update(heading=direction, tried_from=list(pos), failed_here=sorted(failed_here))
        return direction, "keep the wall on my right"


class Explorer(Baseline):
    """Frontier exploration on the map it has seen: go to the goal once seen, else to the nearest
    known open tile that borders unknown ground, moving only over tiles it has seen."""

    name = "explorer"

    def choose(self, observation: JsonObject) -> tuple[str, str]:
        known = KnownMap(self.state["size"], self.state.get("map"))
        pos = tuple(observation["position"])
        last = self.state.get("last")
        if not observation.get("success", True) and last and last[0] == list(pos):
            dx, dy = DIRECTIONS[last[1]]
            known.set((pos[0] + dx, pos[1] + dy), WALL)
        known.learn(observation)
        known.set(pos, GOAL if known.get(pos) == GOAL else OPEN)
        direction, reasoning = self._plan(known, pos)
        self.state.update(map=str(known), last=[list(pos), direction])
        return direction, reasoning

    def _plan(self, known: KnownMap, pos: Position) -> tuple[str, str]:
        goal = known.goal()
        if goal is not None:
            path = shortest_path(pos, goal.__eq__, known.open_neighbours)
            if path and len(path) > 1:
                return _step_towards(pos, path[1]), "the goal is in sight: shortest known path"
        for direction, (dx, dy) in DIRECTIONS.items():
            if known.get((pos[0] + dx, pos[1] + dy)) == UNKNOWN:
                return direction, "step into unexplored ground"
        path = shortest_path(pos, self._is_frontier(known), known.open_neighbours)
        if path and len(path) > 1:
            return _step_towards(pos, path[1]), "head for the nearest unexplored frontier"
        return random.Random(str(pos)).choice(list(DIRECTIONS)), "nothing left to explore"

    @staticmethod
    def _is_frontier(known: KnownMap) -> Callable[[Position], bool]:
        def frontier(pos: Position) -> bool:
            return any(known.get((pos[0] + dx, pos[1] + dy)) == UNKNOWN for dx, dy in DIRECTIONS.values())

        return frontier


class Oracle(Baseline):
    """Breadth-first search on the true maze to the goal condition (standing on the goal, or seeing it with the
    experiment's vision range): the optimal run, a calibration line for every metric (``maze.optimal_moves``)."""

    name = "oracle"

    def __init__(self, maze: Maze, state: JsonObject, goal_condition: str, vision_range: int):
        super().__init__(state)
        self.maze, self.goal_condition, self.vision_range = maze, goal_condition, vision_range

    def choose(self, observation: JsonObject) -> tuple[str, str]:
        pos: Position = (observation["position"][0], observation["position"][1])
        moves = optimal_moves(self.goal_condition, self.maze, self.vision_range, pos)
        return moves[0], "optimal path on the true maze"


BASELINE_NAMES = PROVIDERS[BASELINE].models  # the registry's; make_baseline builds each


def make_baseline(
    name: str, maze: Maze, seed: int, state: JsonObject | None, *, goal_condition: str, vision_range: int
) -> Baseline:
    """Build a baseline agent, restoring the state it saved at the end of its last turn; the oracle heads for the
    experiment's goal condition (with its vision range, under ``sight``)."""
    state = {**(state or {}), "size": [maze.width, maze.height]}
    if name == "random":
        return RandomAgent(seed, state)
    if name == "wall-follower":
        return WallFollower(state)
    if name == "explorer":
        return Explorer(state)
    if name == "oracle":
        return Oracle(maze, state, goal_condition, vision_range)
    raise ValueError(f"unknown baseline agent {name!r}; expected one of {', '.join(BASELINE_NAMES)}")
