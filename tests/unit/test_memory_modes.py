"""Memory modes: each one class behind ``MemoryMode``, named by one entry of ``oriole.memory_registry`` (the table the
catalog's choices come from, and that the turn's load asks instead of naming modes). A new mode is one class and one
table entry: ``LastTurnMemory`` below is added that way and played through a turn."""

from __future__ import annotations

from typing import ClassVar

from oriole import catalog, memory_registry
from oriole.core import memory
from oriole.core.maze import Maze
from oriole.core.mazeset import get_maze
from oriole.core.memory import ConversationMemory, MemoryMode, StoredTurn
from oriole.core.turn import ExperimentState, Turn, TurnState
from oriole.core.turn_loop import ModelRequest, ModelResponse
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import ExperimentStatus
from oriole.store.turn_rows import COLUMNS


class LastTurnMemory(ConversationMemory):
    """A mode added by a test: the messages of the one turn before, whatever historyTurns says."""

    carries_turns: ClassVar[bool] = True

    def carried(self) -> list[StoredTurn]:
        return list(self.remembered.earlier_turns[-1:])


class Recorder:
    """An agent that remembers the requests it was given and ends the turn at once (no tool call)."""

    context_budget = None
    settings: ClassVar[dict] = {}

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def respond(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text="thinking", stop_reason="end_turn")


def earlier(number: int) -> StoredTurn:
    said = {"request": [{"role": "user", "content": f"turn {number}"}], "response": {"text": f"answer {number}"}}
    return StoredTurn(number, [said], [], 10)


def state(maze: Maze, history_mode: str, turns: int = 3) -> TurnState:
    columns = {column: 0 for column in COLUMNS} | {
        "status": ExperimentStatus.RUNNING,
        "llm_provider": "ollama",
        "model_name": "m",
        "prompt_text": "p",
        "config": ExperimentConfig.of({"historyMode": history_mode, "historyTurns": 10}),
        "agent_state": {},
        "memory": {},
        "current_x": maze.start[0],
        "current_y": maze.start[1],
        "turn_count": turns,
        "goal_found": False,
        "moves_at_last_recall": None,
        "goal_first_seen_step": None,
        "goal_reached_step": None,
        "gave_up_reason": None,
        "replay_of": None,
    }
    return TurnState(ExperimentState(**columns), (), earlier_turns=tuple(earlier(n) for n in range(1, turns + 1)))


def carried_texts(request: ModelRequest) -> list[str]:
    """The earlier turns' user messages a request carried (the turn's own context is a dict)."""
    return [m.content for m in request.messages if m.role == "user" and isinstance(m.content, str)]


def test_the_catalogs_choices_are_the_tables_and_each_entry_is_a_mode_class():
    assert catalog.BY_KEY["historyMode"].choices == tuple(memory_registry.MEMORY_MODES)
    compaction = catalog.BY_KEY["compaction"]  # map is retired: a stored snapshot may hold it, a new input not
    assert compaction.choices == ("model",) and dict(compaction.retired_choices).keys() == {"map"}
    assert (*compaction.choices, *dict(compaction.retired_choices)) == tuple(memory_registry.COMPACTIONS)
    for name, entry in memory_registry.MEMORY_MODES.items():
        assert entry.description in catalog.BY_KEY["historyMode"].description
        mode: type[MemoryMode] = memory.memory_mode(name)
        assert isinstance(mode.carries_turns, bool) and callable(mode.recollect) and callable(mode.remember)


def test_the_turns_load_asks_the_modes_which_carry_earlier_turns():
    assert memory.carrying_modes() == ("conversation", "summary")


def test_a_mode_carries_exactly_the_turns_it_says():
    maze = get_maze("perfect-7").maze
    for mode, expected in (("actions", []), ("conversation", ["turn 1", "turn 2", "turn 3"])):
        agent = Recorder()
        Turn(state(maze, mode), maze).play(agent)
        assert carried_texts(agent.requests[0]) == expected, mode


def test_a_new_memory_mode_is_one_class_and_one_table_entry(monkeypatch):
    entry = memory_registry.Entry("last-turn", f"{__name__}.LastTurnMemory", "the messages of the turn before")
    monkeypatch.setitem(memory_registry.MEMORY_MODES, entry.name, entry)
    assert "last-turn" in memory.carrying_modes()  # the turn's load would read its earlier turns
    maze = get_maze("perfect-7").maze
    agent = Recorder()
    played = Turn(state(maze, "last-turn"), maze).play(agent)
    assert carried_texts(agent.requests[0]) == ["turn 3"] and played.carried == (3,)
    assert played.memory == {}  # it keeps nothing beyond the stored turns
