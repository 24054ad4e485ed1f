"""Sweeps without a database or a state machine: the file, the matrix, what resume leaves to run, and
the scheduler's caps (in all, per provider, spend) over a launcher that only counts."""

from __future__ import annotations

import io
import threading
import time
from types import SimpleNamespace

import pytest
from pydantic import ValidationError
from rich.console import Console

from oriole import mazeset
from oriole.errors import InvalidConfig
from oriole_workstation import sweep
from oriole_workstation.launcher import RunResult


def spec(**fields) -> sweep.SweepFile:
    return sweep.SweepFile.model_validate({"id": "s1", "agents": ["baseline/explorer"], "mazes": ["perfect-7"],
                                          **fields})


def test_a_toml_file_loads_and_a_json_file_too(tmp_path):
    toml = tmp_path / "ladder.toml"
    toml.write_text('id = "ladder"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7", 102]\nrepetitions = 2\n'
                    "[[configs]]\nmaxMoves = 100\n")
    loaded = sweep.load(toml)
    assert (loaded.id, loaded.repetitions, loaded.configs, loaded.prompts) == ("ladder", 2, [{"maxMoves": 100}], ["v1"])
    json_file = tmp_path / "s.json"
    json_file.write_text('{"id": "j", "agents": ["ollama/qwen2.5:7b"], "mazes": ["sparse-60"]}')
    assert sweep.load(json_file).agents == ["ollama/qwen2.5:7b"]


@pytest.mark.parametrize("text, message", [
    ('id = "x"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\nrepetiton = 2\n', "repetiton: Extra inputs"),
    ('id = "has space"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\n', "id: String should match"),
    ('id = "x"\nagents = []\nmazes = ["perfect-7"]\n', "agents: List should have at least 1 item"),
    ('id = "x"\nagents = ["baseline/oracle"\n', "is not valid TOML"),
])
def test_a_bad_file_is_refused_with_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(sweep.SweepFileError, match=message):
        sweep.load(path)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(sweep.SweepFileError, match=r"cannot read .*nope\.toml"):
        sweep.load(tmp_path / "nope.toml")


@pytest.mark.parametrize("fields, error, message", [
    ({"agents": ["azure/gpt"]}, sweep.SweepFileError, "provider one of bedrock, ollama, openai, baseline"),
    ({"agents": ["baseline/genius"]}, sweep.SweepFileError, "the baselines are random"),
    ({"agents": ["ollama"]}, sweep.SweepFileError, "must be provider/model"),
    ({"mazes": ["nowhere-60"]}, sweep.SweepFileError, "nowhere-60"),
    ({"configs": [{"maxMovez": 3}]}, InvalidConfig, "unknown config key"),
    ({"grid": {"temperature": [0.0, "hot"]}}, InvalidConfig, "config.temperature must be a number"),
])
def test_the_whole_matrix_is_checked_before_anything_starts(fields, error, message):
    with pytest.raises(error, match=message):
        sweep.plan(spec(**fields))


def test_the_plan_crosses_every_dimension_first_repetitions_first():
    planned = sweep.plan(spec(agents=["baseline/explorer", "ollama/qwen2.5:7b"], prompts=["v1", "v2"],
                              mazes=["perfect-7", 102], configs=[{}, {"maxMoves": 50}],
                              grid={"visionRange": [1, 2]}, repetitions=3))
    assert len(planned) == 2 * 2 * 2 * 2 * 2 * 3
    assert [p.repetition for p in planned] == sorted(p.repetition for p in planned)
    first = {p.cell for p in planned if p.repetition == 1}
    assert len(first) == 32 and first == {p.cell for p in planned if p.repetition == 3}
    assert {p.cell.maze for p in planned} == {"perfect-7", "perfect-9"}  # ids resolve to the names
    assert {p.cell.config_json for p in planned} == {
        '{"visionRange": 1}', '{"visionRange": 2}', '{"maxMoves": 50, "visionRange": 1}',
        '{"maxMoves": 50, "visionRange": 2}'}


def test_openai_agents_keep_the_slashes_of_their_model_and_are_capped_at_4_on_aws():
    planned = sweep.plan(spec(agents=["openai/Qwen/Qwen3-8B", "openai/gpt-4.1-mini"],
                              configs=[{"baseUrl": "http://gpu-box:8000/v1", "parallelToolCalls": True}]))
    inputs = [p.execution_input("s", None) for p in planned]
    assert [(i["llmProvider"], i["modelName"]) for i in inputs] == [("openai", "Qwen/Qwen3-8B"),
                                                                    ("openai", "gpt-4.1-mini")]
    assert inputs[0]["config"] == {"baseUrl": "http://gpu-box:8000/v1", "parallelToolCalls": True}
    assert sweep.provider_caps(spec(), [], aws=True)["openai"] == 4
    assert sweep.provider_caps(spec(), ["openai=2"], aws=False) == {"openai": 2}


def test_cells_have_stable_distinct_keys_and_tag_their_experiments():
    a, b = sweep.plan(spec(configs=[{}, {"maxMoves": 50}]))
    assert a.cell.key == sweep.plan(spec(configs=[{}]))[0].cell.key and a.cell.key != b.cell.key
    execution_input = b.execution_input("s1", "pilot run")
    assert execution_input == {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "explorer",
                               "promptVersion": "v1", "agentId": f"s1/{b.cell.key}/r1",
                               "comment": "sweep:s1 pilot run", "config": {"maxMoves": 50}}
    names = {b.execution_name("a" * 40) for _ in range(3)}
    assert len(names) == 3 and all(len(n) <= 80 and n.replace("-", "").isalnum() for n in names)


def test_resume_skips_what_ended_and_reruns_failures_only_when_asked():
    planned = sweep.plan(spec(mazes=["perfect-7", "perfect-9", "perfect-11", "perfect-15", "perfect-21", "perfect-31"]))
    ids = [p.agent_id("s1") for p in planned]
    rows = [{"id": 1, "agent_id": ids[0], "status": "succeeded", "ending": "success"},
            {"id": 2, "agent_id": ids[1], "status": "timed_out", "ending": "agent"},
            {"id": 3, "agent_id": ids[2], "status": "failed", "ending": "error"},
            {"id": 4, "agent_id": ids[3], "status": "aborted", "ending": "error"},
            {"id": 5, "agent_id": ids[3], "status": "running", "ending": None},
            {"id": 6, "agent_id": "s10/other/r1", "status": "running", "ending": None},
            {"id": 7, "agent_id": ids[5], "status": "failed", "ending": "agent"}]  # stalled: a run, never again
    todo = sweep.pending("s1", planned, rows, retry_failed=False)
    assert [(p.cell.maze, row) for p, row in todo] == [("perfect-21", None)]
    again = sweep.pending("s1", planned, rows, retry_failed=True)
    assert [(p.cell.maze, row and row["id"]) for p, row in again] == [
        ("perfect-11", None), ("perfect-15", 5), ("perfect-21", None)]


class CountingLauncher:
    """Starts nothing: records starts and how many experiments (in all, per provider) were waited on at once."""

    def __init__(self, follows_open: bool = False, seconds: float = 0.03):
        self.follows_open, self.seconds = follows_open, seconds
        self.lock = threading.Lock()
        self.started: list[dict] = []
        self.waited: list[str] = []
        self.running: dict[str, int] = {}
        self.peak: dict[str, int] = {}

    def start(self, execution_input: dict, name: str | None = None) -> str:
        with self.lock:
            self.started.append(execution_input)
        return f"arn:{execution_input['llmProvider']}:{name}"

    def follow(self, execution_arn, results, on_progress) -> RunResult:
        provider = execution_arn.split(":")[1]
        with self.lock:
            self.waited.append(execution_arn)
            for key in (provider, "all"):
                self.running[key] = self.running.get(key, 0) + 1
                self.peak[key] = max(self.peak.get(key, 0), self.running[key])
        time.sleep(self.seconds)
        with self.lock:
            for key in (provider, "all"):
                self.running[key] -= 1
        summary = {"experiment_id": len(self.waited), "status": "succeeded", "actions": 3, "failure_reason": None}
        return RunResult(execution_arn, {"status": "SUCCEEDED"}, summary)


class SpendingStore:
    """A store whose sweep spends ``per_start`` dollars for every experiment the launcher started."""

    def __init__(self, launcher: CountingLauncher, per_start: float = 0.0):
        self.launcher, self.per_start = launcher, per_start
        self.conn = SimpleNamespace(close=lambda: None)

    def sweep_spend(self, sweep_id: str) -> float:
        return len(self.launcher.started) * self.per_start


def run(todo, launcher, per_start: float = 0.0, **caps) -> list[sweep.Finished]:
    tracker = sweep.Tracker(Console(file=io.StringIO()), total=len(todo))
    options = {"concurrency": None, "provider_concurrency": {}, "spend_limit": None, **caps}
    with tracker:
        return sweep.execute("s1", todo, launcher, lambda: SpendingStore(launcher, per_start), tracker,
                             follows_open=launcher.follows_open, comment=None, **options)


def mixed(n: int) -> list[tuple[sweep.Planned, None]]:
    planned = sweep.plan(spec(agents=["baseline/explorer", "ollama/qwen2.5:7b", "bedrock/claude"], repetitions=n))
    return [(p, None) for p in planned]


def test_the_caps_in_all_and_per_provider_hold_and_are_used():
    launcher = CountingLauncher()
    results = run(mixed(6), launcher, concurrency=4, provider_concurrency={"ollama": 1, "bedrock": 2})
    assert [r.status for r in results] == ["succeeded"] * 18
    assert launcher.peak["all"] == 4 and launcher.peak["ollama"] == 1 and launcher.peak["bedrock"] == 2


def test_a_provider_at_its_cap_does_not_hold_up_the_others():
    launcher = CountingLauncher(seconds=0.05)
    run(mixed(4), launcher, provider_concurrency={"ollama": 1, "bedrock": 4, "baseline": 4})
    assert launcher.peak["ollama"] == 1 and launcher.peak["all"] >= 5  # the others ran while ollama queued


def test_the_spend_limit_stops_starting_new_experiments():
    launcher = CountingLauncher()
    results = run(mixed(3)[:6], launcher, per_start=0.4, concurrency=1, spend_limit=1.0)
    assert len(launcher.started) == 3  # spent 0.0, 0.4, 0.8 before each start; 1.2 >= 1.0 stops the fourth
    assert [r.status for r in results].count(sweep.NOT_STARTED) == 3
    assert {r.reason for r in results if r.status == sweep.NOT_STARTED} == {"spend limit $1 reached"}


def test_an_open_experiment_is_followed_where_it_still_runs_and_restarted_where_it_cannot():
    [(item, _)] = mixed(1)[:1]
    open_row = {"id": 9, "status": "running", "origin_execution_arn": "arn:baseline:earlier"}
    aws = CountingLauncher(follows_open=True)
    run([(item, open_row)], aws, concurrency=1)
    assert aws.started == [] and aws.waited == ["arn:baseline:earlier"]
    local = CountingLauncher(follows_open=False)
    run([(item, open_row)], local, concurrency=1)
    assert len(local.started) == 1 and local.waited != ["arn:baseline:earlier"]


def test_summary_counts_each_outcome():
    item = sweep.plan(spec())[0]
    results = [sweep.Finished(item, "succeeded", {}), sweep.Finished(item, "timed_out", {}),
               sweep.Finished(item, "succeeded", {})]
    assert sweep.summarize(results, 4, 0.25) == "7 planned: 4 already done, 2 succeeded, 1 timed out; spent $0.2500\n"


def test_maze_samples_expand_to_seeded_names_derived_from_the_sweep_id():
    data = {"id": "samples", "agents": ["baseline/oracle"], "mazes": [
        {"family": "perfect", "size": 11, "samples": 30}, {"family": "dense", "size": 21, "samples": 3}, "perfect-7"]}
    spec = sweep.SweepFile.model_validate(data)
    names = sweep.maze_names(spec)
    assert len(names) == 34 == len(set(names)) and sweep.size(spec) == 34
    assert all(n.startswith("perfect-11@") for n in names[:30]) and names[-1] == "perfect-7"
    assert sweep.maze_names(spec) == names  # resuming draws the same mazes
    other = sweep.SweepFile.model_validate({**data, "id": "another"})
    assert set(sweep.maze_names(other)).isdisjoint(names[:33])  # another sweep, other mazes
    assert len({mazeset.seeded(n).content_hash for n in names[:30]}) == 30


@pytest.mark.parametrize("sample, message", [
    ({"family": "labyrinth", "size": 11, "samples": 2}, "unknown maze family"),
    ({"family": "perfect", "size": 12, "samples": 2}, "odd size"),
    ({"family": "perfect", "size": 11, "samples": 0}, "greater than or equal to 1"),
    ({"family": "perfect", "size": 7, "samples": 40}, "only 14 different mazes"),
])
def test_bad_maze_samples_are_refused_before_anything_starts(sample, message):
    with pytest.raises((sweep.SweepFileError, ValidationError), match=message):
        sweep.plan(sweep.SweepFile.model_validate({"id": "s", "agents": ["baseline/oracle"], "mazes": [sample]}))
