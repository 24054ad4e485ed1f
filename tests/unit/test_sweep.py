"""Sweeps without a database or a state machine: the file, the matrix, the plan and the index each map item
carries, what resume leaves to run, the caps per provider, and the input and summary the command line makes."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from oriole.catalog import CATALOG
from oriole.core import mazeset, sweep_plan
from oriole.errors import InvalidConfig, SweepFileError
from oriole.provider_registry import NAMES, PROVIDERS
from oriole_workstation import sweep_runs


def spec(**fields) -> sweep_plan.SweepFile:
    return sweep_plan.SweepFile.model_validate(
        {"id": "s1", "agents": ["baseline/explorer"], "mazes": ["perfect-7"], **fields}
    )


def test_a_toml_file_loads_and_a_json_file_too(tmp_path):
    toml = tmp_path / "ladder.toml"
    toml.write_text(
        'id = "ladder"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7", 102]\nrepetitions = 2\n'
        "[[configs]]\nmaxMoves = 100\n"
    )
    loaded = sweep_runs.load(toml)
    assert (loaded.id, loaded.repetitions, loaded.configs, loaded.prompts) == ("ladder", 2, [{"maxMoves": 100}], ["v1"])
    json_file = tmp_path / "s.json"
    json_file.write_text('{"id": "j", "agents": ["ollama/qwen2.5:7b"], "mazes": ["sparse-60"]}')
    assert sweep_runs.load(json_file).agents == ["ollama/qwen2.5:7b"]


@pytest.mark.parametrize(
    "text, message",
    [
        ('id = "x"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\nrepetiton = 2\n', "repetiton: unknown field"),
        ('id = "has space"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\n', "id: String should match"),
        ('id = "x"\nagents = []\nmazes = ["perfect-7"]\n', "agents: List should have at least 1 item"),
        ('id = "x"\nagents = ["baseline/oracle"\n', "is not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_with_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(SweepFileError, match=message):
        sweep_runs.load(path)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(SweepFileError, match=r"cannot read .*nope\.toml"):
        sweep_runs.load(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    "fields, error, message",
    [
        ({"agents": ["azure/gpt"]}, SweepFileError, "provider one of bedrock, ollama, openai, baseline"),
        ({"agents": ["baseline/genius"]}, SweepFileError, "the baselines are random"),
        ({"agents": ["ollama"]}, SweepFileError, "must be provider/model"),
        ({"mazes": ["nowhere-60"]}, SweepFileError, "nowhere-60"),
        ({"configs": [{"maxMovez": 3}]}, InvalidConfig, "unknown config key"),
        (
            {"agents": ["ollama/q"], "grid": {"temperature": [0.0, "hot"]}},
            InvalidConfig,
            "config.temperature must be a number",
        ),
    ],
)
def test_the_whole_matrix_is_checked_before_anything_starts(fields, error, message):
    with pytest.raises(error, match=message):
        sweep_plan.plan(spec(**fields))


def test_the_plan_crosses_every_dimension_first_repetitions_first():
    planned = sweep_plan.plan(
        spec(
            agents=["baseline/explorer", "ollama/qwen2.5:7b"],
            prompts=["v1", "v2"],
            mazes=["perfect-7", 102],
            configs=[{}, {"maxMoves": 50}],
            grid={"visionRange": [1, 2]},
            repetitions=3,
        )
    )
    assert len(planned) == 2 * 2 * 2 * 2 * 2 * 3
    assert [p.repetition for p in planned] == sorted(p.repetition for p in planned)
    first = {p.cell for p in planned if p.repetition == 1}
    assert len(first) == 32 and first == {p.cell for p in planned if p.repetition == 3}
    assert {p.cell.maze for p in planned} == {"perfect-7", "perfect-9"}  # ids resolve to the names
    assert {p.cell.config_json for p in planned} == {
        '{"visionRange": 1}',
        '{"visionRange": 2}',
        '{"maxMoves": 50, "visionRange": 1}',
        '{"maxMoves": 50, "visionRange": 2}',
    }


def test_openai_agents_keep_the_slashes_of_their_model_and_are_capped_at_4():
    planned = sweep_plan.plan(
        spec(
            agents=["openai/Qwen/Qwen3-8B", "openai/gpt-4.1-mini"],
            configs=[{"baseUrl": "http://gpu-box:8000/v1", "parallelToolCalls": True}],
        )
    )
    inputs = [p.execution_input(spec()) for p in planned]
    assert [(i["llmProvider"], i["modelName"]) for i in inputs] == [
        ("openai", "Qwen/Qwen3-8B"),
        ("openai", "gpt-4.1-mini"),
    ]
    assert inputs[0]["config"] == {
        "baseUrl": "http://gpu-box:8000/v1",
        "parallelToolCalls": True,
        "seed": planned[0].seed(spec()),
    }
    assert sweep_plan.caps(spec(), ["openai"])["openai"] == 4


def test_cells_have_stable_distinct_keys_and_tag_their_experiments():
    a, b = sweep_plan.plan(spec(configs=[{}, {"maxMoves": 50}]))
    assert a.cell.key == sweep_plan.plan(spec(configs=[{}]))[0].cell.key and a.cell.key != b.cell.key
    execution_input = b.execution_input(spec(comment="pilot run"))
    assert execution_input == {
        "mazeId": "perfect-7",
        "llmProvider": "baseline",
        "modelName": "explorer",
        "promptVersion": "v1",
        "agentId": f"s1/{b.cell.key}/r1",
        "comment": "sweep:s1 pilot run",
        "config": {"maxMoves": 50, "seed": b.seed(spec())},
        "sweepId": "s1",
    }
    assert b.execution_name("s1", 0) == b.execution_name("s1", 0) == f"s1-{b.cell.key}-r1-a0"  # a retry meets it
    assert b.execution_name("s1", 1) != b.execution_name("s1", 0)  # a new attempt after a failure is a new one
    longest = sweep_plan.Planned(b.cell, 1000).execution_name("a" * 40, 999)
    assert len(longest) <= 80 and longest.replace("-", "").isalnum()  # Step Functions' limits on a name


def test_resume_skips_what_ended_reruns_what_was_stopped_and_failures_only_when_asked():
    planned = sweep_plan.plan(
        spec(mazes=["perfect-7", "perfect-9", "perfect-11", "perfect-15", "perfect-21", "perfect-31"])
    )
    ids = [p.agent_id("s1") for p in planned]
    rows = [
        {"id": 1, "agent_id": ids[0], "status": "succeeded", "ending": "success"},
        {"id": 2, "agent_id": ids[1], "status": "timed_out", "ending": "agent"},
        {"id": 3, "agent_id": ids[2], "status": "failed", "ending": "error"},
        {"id": 4, "agent_id": ids[3], "status": "aborted", "ending": "error"},
        {"id": 5, "agent_id": ids[3], "status": "running", "ending": None},
        {"id": 6, "agent_id": "s10/other/r1", "status": "running", "ending": None},
        {"id": 7, "agent_id": ids[5], "status": "failed", "ending": "agent"},
    ]  # stalled: a run, never again
    rows = [
        sweep_plan.SweepExperiment(
            **row, origin_execution_arn="arn", last_execution_arn="arn", tokens=0, cost_usd=0.0, failure_reason=None
        )
        for row in rows
    ]
    assert sweep_plan.pending("s1", planned, rows, retry_failed=False) == [3, 4]  # 3: stopped, run again
    assert sweep_plan.pending("s1", planned, rows, retry_failed=True) == [2, 3, 4]


def test_a_repetition_knows_whether_it_ended_and_which_attempt_comes_next():
    def state(*statuses, retry=False):
        endings = {"succeeded": "success", "timed_out": "agent", "failed": "error", "aborted": "error"}
        return sweep_plan.repetition(
            [
                sweep_plan.SweepExperiment(i, "s1/cell/r1", s, endings.get(s), "arn", "arn", 0, 0.0, None)
                for i, s in enumerate(statuses)
            ],
            retry,
        )

    assert state() == sweep_plan.Repetition(None, 0)
    assert state("running") == sweep_plan.Repetition(None, 0)  # open: started again under the same name, i.e. followed
    assert state("failed", "succeeded", retry=True) == sweep_plan.Repetition("succeeded", 1)
    assert state("failed", "aborted") == sweep_plan.Repetition(None, 2)  # stopped last: a plain resume reruns it
    assert state("aborted", "failed") == sweep_plan.Repetition("failed", 2)  # failed last: only with retry
    assert state("failed", "aborted", retry=True) == sweep_plan.Repetition(None, 2)  # attempt a2 is a new execution
    assert state("aborted", "aborted", "succeeded") == sweep_plan.Repetition("succeeded", 2)


def test_a_cell_is_the_same_cell_whatever_its_server_or_timeouts():
    """Fixing a mistyped URL (or a timeout) resumes the same cells with the same seeds: transport settings are
    not part of a cell's identity, and the lines that name a cell leave them out."""
    wrong, right = (
        sweep_plan.plan(
            spec(
                agents=[{"provider": "openai", "model": "m", "config": {"baseUrl": url, **extra}}],
                configs=[{"temperature": 0.5}],
                repetitions=2,
            )
        )
        for url, extra in (("http://gpu-box:80/v1", {}), ("http://gpu-box:8000/v1", {"requestTimeoutSeconds": 30}))
    )
    assert [(p.agent_id("s1"), p.seed(spec())) for p in wrong] == [(p.agent_id("s1"), p.seed(spec())) for p in right]
    assert right[0].execution_input(spec())["config"]["baseUrl"] == "http://gpu-box:8000/v1"  # still sent
    assert right[0].cell.describe() == "openai/m v1 perfect-7 temperature=0.5"
    assert sweep_plan.plan(spec(configs=[{"seed": 1}, {"seed": 2}]))[0].cell.key != (
        sweep_plan.plan(spec(configs=[{"seed": 2}]))[0].cell.key
    )  # a fixed seed is part of the cell


def test_one_model_on_two_servers_is_two_agents_by_their_labels_and_one_agent_on_two_urls_one_cell_twice():
    twins = [
        {"label": f"box{n}", "provider": "openai", "model": "m", "config": {"baseUrl": f"http://box{n}:8000/v1"}}
        for n in (1, 2)
    ]
    one, two = sweep_plan.plan(spec(agents=twins))
    assert (one.cell.label, two.cell.label) == ("box1", "box2") and one.cell.key != two.cell.key
    renamed = sweep_plan.plan(spec(agents=[{**twins[0], "label": "first box"}]))[0]
    assert renamed.cell.key != one.cell.key  # the label is the agent in every report: another label, another agent
    urls = [{"baseUrl": "http://a:8000/v1"}, {"baseUrl": "http://b:8000/v1"}]
    with pytest.raises(SweepFileError, match="configurations that differ only in baseUrl, not part of a cell"):
        sweep_plan.plan(spec(agents=["openai/m"], configs=urls))


@pytest.mark.parametrize("seed", range(8))
def test_a_setting_written_out_at_its_default_is_the_default_cell_twice(seed):
    """Issue 37: a configuration is compared by its resolved value, defaults included."""
    rng = random.Random(seed)
    provider = rng.choice(["ollama", "openai", "bedrock", "baseline"])
    agent = {"baseline": "baseline/explorer", "bedrock": "bedrock/amazon.nova-lite-v1:0"}.get(provider, f"{provider}/m")
    keys = [p for p in CATALOG if p.overridable and p.experimental and provider in p.providers]
    written = {p.key: p.default for p in rng.sample(keys, rng.randint(1, 3))}
    other = {"maxMoves": rng.randint(1, 9000)}
    configs = rng.choice([[{}, written], [written, {}], [{**other, **written}, other]])
    with pytest.raises(SweepFileError, match=r"comes out twice .*a setting written out at its default"):
        sweep_plan.cells(spec(agents=[agent], configs=configs))


@pytest.mark.parametrize(
    "fields",
    [
        {
            "agents": ["baseline/explorer", "ollama/qwen2.5:7b"],
            "prompts": ["v1", "v2"],
            "repetitions": 3,
            "mazes": ["perfect-7", {"family": "perfect", "size": 9, "samples": 3}],
            "grid": {"visionRange": [1, 2]},
        },
        {"repetitions": 7},
    ],
)
def test_every_plan_index_gives_back_its_entry_without_the_plan(fields):
    """What a map item does: it gets an index and recomputes its experiment from the sweep alone."""
    planned = sweep_plan.plan(spec(**fields))
    matrix = sweep_plan.cells(spec(**fields))
    assert [sweep_plan.planned_at(matrix, index) for index in range(len(planned))] == planned
    assert len({item.execution_name("s1", 0) for item in planned}) == len(planned)


@pytest.mark.parametrize(
    "fields, used, expected",
    [
        ({}, ["baseline"], {"bedrock": 4, "ollama": 1, "openai": 4, "baseline": 8}),
        (
            {"provider_concurrency": {"baseline": 3, "ollama": 2}},
            ["baseline"],
            {"bedrock": 4, "ollama": 2, "openai": 4, "baseline": 3},
        ),
        ({"concurrency": 2}, ["baseline"], {"bedrock": 2, "ollama": 1, "openai": 2, "baseline": 2}),
        (
            {"concurrency": 6},
            ["bedrock", "ollama", "baseline"],
            {"bedrock": 2, "ollama": 1, "openai": 4, "baseline": 3},
        ),
        (
            {"concurrency": 2},
            ["bedrock", "ollama", "baseline"],
            {"bedrock": 1, "ollama": 1, "openai": 2, "baseline": 1},
        ),
    ],
)
def test_caps_per_provider_share_out_a_total(fields, used, expected):
    caps = sweep_plan.caps(spec(**fields), used)
    assert caps == expected | dict.fromkeys(sweep_plan.LANES, 1)  # a lane no server uses: 1, never read
    if "concurrency" in fields and fields["concurrency"] >= len(used):
        assert sum(caps[p] for p in used) <= fields["concurrency"]


def two_servers(**caps) -> sweep_plan.SweepFile:
    """Two OpenAI-compatible servers (one agent each), a baseline, and ``server_concurrency``."""
    return spec(
        agents=[
            {"provider": "openai", "model": "m", "label": "box-a", "config": {"baseUrl": "http://box-a:8000/v1"}},
            {"provider": "openai", "model": "m", "label": "box-b", "config": {"baseUrl": "HTTP://Box-B:8000/v1/"}},
            "baseline/oracle",
        ],
        server_concurrency=caps,
    )


def test_a_capped_server_runs_in_a_lane_of_its_own_with_its_cap_beside_its_provider():
    file = two_servers(**{"http://box-b:8000/v1": 3})
    matrix = sweep_plan.cells(file)
    lanes = sweep_plan.capped_lanes(file, matrix)
    # the agent's spelling and the cap's are one server
    assert lanes == [sweep_plan.Lane("lane1", 3, "http://box-b:8000/v1", 3)]
    assert [sweep_plan.lane_of(cell, lanes) for cell in matrix] == ["openai", "lane1", "baseline"]
    caps = sweep_plan.caps(file, ["openai", "lane1", "baseline"], lanes=lanes)
    assert (caps["openai"], caps["lane1"], caps["baseline"]) == (4, 3, 8)  # box-a keeps the provider's cap
    shared = sweep_plan.caps(file.model_copy(update={"concurrency": 4}), ["openai", "lane1"], lanes=lanes)
    assert shared["openai"] + shared["lane1"] <= 4 and min(shared["openai"], shared["lane1"]) >= 1


def capped_agents(server_caps: dict[str, int], *caps: int | None) -> sweep_plan.SweepFile:
    """Three agents of one OpenAI-compatible server (``caps``: each one's own concurrency) and a baseline."""
    return spec(
        agents=[
            {
                "provider": "openai",
                "model": f"m{n}",
                "config": {"baseUrl": "http://box:8000/v1"},
                **({} if cap is None else {"concurrency": cap}),
            }
            for n, cap in enumerate(caps)
        ]
        + [{"provider": "baseline", "model": "oracle", "concurrency": 2}],
        server_concurrency=server_caps,
    )


def test_an_agents_own_cap_is_a_lane_of_its_own_beside_its_provider_even_above_the_providers_cap():
    file = capped_agents({}, 6, None)
    matrix = sweep_plan.cells(file)
    lanes = sweep_plan.capped_lanes(file, matrix)
    assert lanes == [
        sweep_plan.Lane("lane1", 6, agent="openai/m0"),
        sweep_plan.Lane("lane2", 2, agent="baseline/oracle"),
    ]
    assert [sweep_plan.lane_of(cell, lanes) for cell in matrix] == ["lane1", "openai", "lane2"]
    caps = sweep_plan.caps(file, ["lane1", "openai", "lane2"], lanes=lanes)
    assert (caps["lane1"], caps["openai"], caps["lane2"]) == (6, 4, 2)
    shared = sweep_plan.caps(file.model_copy(update={"concurrency": 5}), ["lane1", "openai", "lane2"], lanes=lanes)
    assert sum(shared[group] for group in ("lane1", "openai", "lane2")) == 5


def test_agents_of_a_capped_server_share_its_cap_with_its_other_agents():
    file = capped_agents({"http://box:8000/v1": 4}, 3, 2, None)
    lanes = sweep_plan.capped_lanes(file, sweep_plan.cells(file))
    assert [(lane.name, lane.cap, lane.server_cap, lane.agent) for lane in lanes] == [
        ("lane1", 3, 4, "openai/m0"),
        ("lane2", 2, 4, "openai/m1"),
        ("lane3", 2, None, "baseline/oracle"),
        ("lane4", 4, 4, None),  # the server's other agent: m2
    ]
    caps = sweep_plan.caps(file, ["lane1", "lane2", "lane3", "lane4"], lanes=lanes)
    assert caps["lane1"] + caps["lane2"] + caps["lane4"] == 4 and caps["lane3"] == 2
    assert caps["lane1"] <= 3 and caps["lane2"] <= 2 and min(caps.values()) >= 1
    resumed = sweep_plan.caps(file, ["lane1"], lanes=lanes)  # only m0 left to run: its own cap, within the server's
    assert resumed["lane1"] == 3


@pytest.mark.parametrize(
    "server_caps, caps, message",
    [
        (
            {"http://box:8000/v1": 2},
            (3, None),
            "agent openai/m0: concurrency = 3 is above the cap of its server http://box:8000/v1 (server_concurrency "
            "2): lower the agent's to at most 2, or raise the server's",
        ),
        (
            {"http://box:8000/v1": 2},
            (1, 1, None),
            "server_concurrency caps http://box:8000/v1 at 2, fewer than the lanes that share it, each running at "
            "least one experiment at once (openai/m0, openai/m1, its other agents)",
        ),
        ({}, (1, 1, 1, 1), "the sweep caps 5 groups of experiments on their own (agent openai/m0, "),
    ],
)
def test_an_agents_cap_that_cannot_hold_is_refused_with_what_to_change(server_caps, caps, message):
    with pytest.raises(SweepFileError, match=re.escape(message)):
        sweep_plan.cells(capped_agents(server_caps, *caps))


SERVERS = ["http://gpu-a:11434", "http://gpu-b:11434", "HTTP://GPU-A:11434/"]
CAPPED_AGENTS = st.lists(
    st.tuples(st.sampled_from(["ollama", "baseline"]), st.sampled_from(SERVERS), st.none() | st.integers(1, 6)),
    min_size=1,
    max_size=4,
)


@given(
    agents=CAPPED_AGENTS,
    server_caps=st.dictionaries(st.sampled_from(SERVERS[:2]), st.integers(1, 6), max_size=2),
    total=st.none() | st.integers(1, 12),
    left=st.sets(st.sampled_from([*sweep_plan.LANES, "ollama", "baseline"])),
)
@settings(max_examples=300, deadline=None)  # the first call draws a maze: slow on a loaded machine
def test_every_cap_holds_together_or_the_file_is_refused(agents, server_caps, total, left):
    """Whatever agents, servers and caps a file names, PlanSweep's caps keep each capped agent within its own cap,
    each capped server's lanes within the server's, and every map the run uses within the total, whether the run
    uses every map or only some (``left``: a resume)."""
    file = spec(
        agents=[
            {
                "label": f"a{n}",
                "provider": provider,
                "model": f"q{n}" if provider == "ollama" else PROVIDERS["baseline"].models[n % 4],
                **({"config": {"endpoint": server}} if provider == "ollama" else {}),
                **({} if cap is None else {"concurrency": cap}),
            }
            for n, (provider, server, cap) in enumerate(agents)
        ],
        server_concurrency=server_caps,
        concurrency=total,
    )
    try:
        lanes = sweep_plan.capped_lanes(file, sweep_plan.cells(file))
    except SweepFileError:
        return
    for used in ({*NAMES, *sweep_plan.LANES}, left):
        _caps_hold(lanes, used, sweep_plan.caps(file, used, lanes=lanes), total)


def _caps_hold(lanes: list[sweep_plan.Lane], used: set[str], caps: dict[str, int], total: int | None) -> None:
    running = [group for group in caps if group in used]
    assert all(caps[group] >= 1 for group in caps)
    for lane in lanes:
        assert caps[lane.name] <= lane.cap
        if lane.server_cap is not None:
            assert sum(caps[other.name] for other in lanes if other.server == lane.server and other.name in used) <= (
                lane.server_cap
            )
    if total is not None and total >= len(running):
        assert sum(caps[group] for group in running) <= total


@pytest.mark.parametrize("cap", [0, -1, 1001, 1.5, "2", True])
def test_an_agents_cap_is_a_whole_number_from_1_to_the_most(cap):
    with pytest.raises(SweepFileError, match=r"agents\.0\..*concurrency"):
        sweep_plan.validate(
            sweep_plan.SweepFile,
            {
                "id": "s",
                "mazes": ["perfect-7"],
                "agents": [{"provider": "baseline", "model": "oracle", "concurrency": cap}],
            },
            "sweep.toml",
        )


@pytest.mark.parametrize(
    "caps, message",
    [
        (
            {"http://box-c:8000/v1": 1},
            "server_concurrency names http://box-c:8000/v1, which no agent of the sweep "
            "sends to; its model servers: http://box-a:8000/v1, http://box-b:8000/v1",
        ),
        ({"box-a": 1}, "server_concurrency: 'box-a'"),
        ({"http://box-a:8000/v1": 1, "http://BOX-A:8000/v1/": 2}, "names one server twice"),
    ],
)
def test_a_server_cap_names_a_server_the_sweep_uses_once(caps, message):
    with pytest.raises(SweepFileError, match=re.escape(message)):
        sweep_plan.cells(two_servers(**caps))


def test_at_most_four_servers_have_caps_of_their_own():
    with pytest.raises(ValidationError, match="server_concurrency"):
        two_servers(**{f"http://box-{n}:8000/v1": 1 for n in range(5)})


def test_the_command_line_makes_the_input_the_console_takes():
    file = spec(provider_concurrency={"ollama": 2}, comment="pilot")
    caps = sweep_runs.provider_caps(file, ["bedrock=3", "ollama=1"])
    data = sweep_runs.run_input(file, concurrency=5, provider_concurrency=caps, retry_failed=True, wait_seconds=1)
    assert data["provider_concurrency"] == {"ollama": 1, "bedrock": 3} and data["concurrency"] == 5
    assert (data["retry_failed"], data["wait_seconds"], data["comment"]) == (True, 1, "pilot")
    assert sweep_plan.validate(sweep_plan.SweepRun, data, "input") == sweep_plan.SweepRun.model_validate(data)
    assert (
        sweep_runs.run_input(file, concurrency=None, provider_concurrency={}, retry_failed=False, wait_seconds=None)[
            "wait_seconds"
        ]
        == 30
    )  # the run's default on AWS
    with pytest.raises(SweepFileError, match="PROVIDER=N"):
        sweep_runs.provider_caps(file, ["gpu=2"])


def test_the_summary_line_counts_each_ending_of_the_run():
    summary = {
        "planned": 9,
        "alreadyDone": 4,
        "succeeded": 2,
        "timedOut": 2,
        "failed": 1,
        "aborted": 0,
        "running": 0,
        "rejected": 0,
        "skipped": 0,
        "successes": 2,
        "agentFailures": 1,
        "censored": 1,
        "errors": 1,
        "spentUsd": 0.25,
    }
    assert sweep_runs.summary_line(summary) == (
        "9 planned: 4 already done, 2 succeeded, 1 agent failure, 1 censored, 1 error; spent $0.2500\n"
    )
    nothing = {**summary, "alreadyDone": 9, **dict.fromkeys(("successes", "agentFailures", "censored", "errors"), 0)}
    assert sweep_runs.summary_line(nothing) == "9 planned: 9 already done; spent $0.2500\n"


def test_maze_samples_expand_to_seeded_names_derived_from_the_sweep_id():
    data = {
        "id": "samples",
        "agents": ["baseline/oracle"],
        "mazes": [
            {"family": "perfect", "size": 11, "samples": 30},
            {"family": "dense", "size": 21, "samples": 3},
            "perfect-7",
        ],
    }
    spec = sweep_plan.SweepFile.model_validate(data)
    names = sweep_plan.maze_names(spec)
    assert len(names) == 34 == len(set(names)) and sweep_plan.size(spec) == 34
    assert all(n.startswith("perfect-11@") for n in names[:30]) and names[-1] == "perfect-7"
    assert sweep_plan.maze_names(spec) == names  # resuming draws the same mazes
    other = sweep_plan.SweepFile.model_validate({**data, "id": "another"})
    assert set(sweep_plan.maze_names(other)).isdisjoint(names[:33])  # another sweep, other mazes
    assert len({mazeset.seeded(n).content_hash for n in names[:30]}) == 30


@pytest.mark.parametrize(
    "sample, message",
    [
        ({"family": "labyrinth", "size": 11, "samples": 2}, "unknown maze family"),
        ({"family": "perfect", "size": 12, "samples": 2}, "odd size"),
        ({"family": "perfect", "size": 11, "samples": 0}, "greater than or equal to 1"),
        ({"family": "perfect", "size": 7, "samples": 40}, "only 14 different mazes"),
    ],
)
def test_bad_maze_samples_are_refused_before_anything_starts(sample, message):
    with pytest.raises((SweepFileError, ValidationError), match=message):
        sweep_plan.plan(
            sweep_plan.SweepFile.model_validate({"id": "s", "agents": ["baseline/oracle"], "mazes": [sample]})
        )


def test_the_first_ctrl_c_while_following_a_sweep_only_marks_it_and_the_second_interrupts():
    """The first Ctrl-C must not interrupt a statement on its way (the connection would be left busy and the sweep
    could no longer be followed); the second stops the command; the previous handler comes back after."""
    import os
    import signal
    import threading

    from oriole_workstation.sweep_runs import FirstCtrlC

    before = signal.getsignal(signal.SIGINT)
    with FirstCtrlC() as ctrl_c:
        os.kill(os.getpid(), signal.SIGINT)
        assert ctrl_c.pressed.wait(5)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            threading.Event().wait(5)  # the handler runs in this wait and raises; 5 s only if it never does
    assert signal.getsignal(signal.SIGINT) is before


# A sweep file that sets nothing where it plays no part, and the cell keys it had before the catalog said which
# settings depend on others (computed on main at c2cfcee): resume finds its experiments by these.
RESUMABLE = {
    "id": "resumable",
    "agents": [
        "baseline/explorer",
        {"label": "qwen", "provider": "ollama", "model": "qwen3:8b", "config": {"endpoint": "http://gpu:11434"}},
        {"provider": "openai", "model": "gpt-4.1-mini", "config": {"textToolCalls": True}},
    ],
    "mazes": ["perfect-7", "perfect-9"],
    "configs": [
        {},
        {"agents": ["qwen", "openai/gpt-4.1-mini"], "historyMode": "summary", "historyTurns": 2, "compaction": "model"},
        {"agents": ["qwen"], "observation": "both", "imageView": "map", "mapAid": True},
    ],
    "grid": {"visionRange": [1, 3]},
}
RESUMABLE_KEYS = [
    "4d691f455675",
    "1f16bfa93124",
    "eb3dd61361f2",
    "f2d920e9c1a2",
    "fd6b5ac2209e",
    "944eba16f446",
    "d74d0a2c8df7",
    "6502b5598c06",
    "0ffd4d50e704",
    "e94b9b6d45d6",
    "9bddebb2c52e",
    "75703f0e9505",
    "b3ef12b6d916",
    "b6866b0d530d",
    "dc45e798ec4d",
    "b1cd945f191f",
    "44bf22ff93fc",
    "226a360a705b",
    "2483c8e8b3ab",
    "91ece8b52f64",
    "30b4e9fd058e",
    "7747269bc851",
    "f001614cc8a0",
    "d6f8f19c1d58",
]


def test_the_cells_of_a_sweep_that_sets_nothing_idle_keep_their_keys():
    assert [cell.key for cell in sweep_plan.cells(sweep_plan.SweepFile.model_validate(RESUMABLE))] == RESUMABLE_KEYS


@pytest.mark.parametrize(
    "fields, message",
    [
        (
            {"agents": ["ollama/q"], "grid": {"historyMode": ["actions", "conversation"], "historyTurns": [2, 10]}},
            'agent ollama/q with historyMode="actions" historyTurns=2: config.historyTurns applies only with '
            "historyMode = conversation or summary (here historyMode is actions)",
        ),
        (
            {
                "agents": [{"provider": "openai", "model": "m", "config": {"textToolCalls": True}}],
                "configs": [{"parallelToolCalls": True}],
            },
            "parallelToolCalls applies only with textToolCalls = false",
        ),
        ({"agents": ["ollama/q"], "configs": [{"imageView": "map"}]}, "imageView applies only with observation"),
    ],
)
def test_a_cell_that_sets_a_key_where_it_plays_no_part_is_refused_naming_the_agent_and_what_it_needs(fields, message):
    with pytest.raises(InvalidConfig) as refused:
        sweep_plan.plan(spec(**fields))
    assert message in str(refused.value)
