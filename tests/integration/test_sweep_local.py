"""Sweeps through the sweep state machine under moto (the ASL file that deploys, the real tasks, PostgreSQL): the
caps per provider hold, also while an item's checks fail, a failing experiment does not fail the sweep, an item
retries a full database and a throttled start, resume starts nothing, the spend cap skips the rest, stopping the
sweep starts nothing more and leaves no row open, and the report's Wilson intervals are those of the stored
outcomes. Task faults are injected at the runner's routing table, as in the fault table."""

from __future__ import annotations

import io
import json
import math
import time
import uuid
from datetime import UTC, datetime

import pytest
from rich.console import Console

from oriole.core.sweep_plan import next_check_wait
from oriole.flows import sweep_flow
from oriole.store import Store, db
from oriole_workstation import sweep_runs
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws
from oriole_workstation.sweep_progress import SweepProgress
from tests.integration.conftest import TIME_SCALE, Local
from tests.integration.test_fault_table import failing
from tests.ollama_server import ScriptedOllama, slow, tool_calls

# a sweep's own history, whatever its size: the items run as child executions; each of its maps (a provider's or a
# lane's) adds a few events, used or not
PARENT_EVENTS = 80


def max_overlap(rows: list[dict]) -> int:
    """The most experiments that were running at the same moment, from their stored start and end times."""
    events = sorted(
        [(r["started_at"], 1) for r in rows] + [(r["completed_at"], -1) for r in rows], key=lambda e: (e[0], e[1])
    )
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


def experiments(store: Store, sweep_id: str) -> list[dict]:
    return store.conn.execute(
        "SELECT e.id, e.agent_id, e.comment, e.status, e.llm_provider, e.model_name, e.started_at, e.completed_at, "
        "       e.origin_execution_arn, e.cost_usd FROM experiments e WHERE agent_id LIKE %s ORDER BY id",
        (sweep_id + "/%",),
    ).fetchall()


def started_experiments(store: Store, sweep_id: str) -> list[dict]:
    """The sweep's experiments once one exists: an item starts its experiment's execution, which writes the row a
    moment later (a loaded machine's moment can be long)."""
    deadline = time.monotonic() + 300
    while not (rows := experiments(store, sweep_id)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return rows


@pytest.fixture
def local(database_url):
    """A LocalAws of the test's own (the CLI tests of this module start theirs; moto's are not nested)."""
    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE) as aws:
        yield Local(aws, Results(conn))
    conn.close()


def run_sweep(local: Local, sweep: dict) -> tuple[dict, dict | None]:
    """Submit a sweep to the local sweep state machine and follow it as `oriole sweep` does."""
    sweep = {"wait_seconds": 1, **sweep}
    arn, _ = sweep_runs.submit(local.aws.sfn, local.aws.sweep_state_machine_arn, sweep)
    progress = SweepProgress(
        Console(file=io.StringIO()),
        sweep["id"],
        [],
        0,
        sweep_runs.first_id(local.results, sweep["id"]),
        show_lines=False,
    )
    with progress:
        execution = sweep_runs.follow_local(local.aws, arn, sweep["id"], local.results, progress, lambda running: None)
    return execution, json.loads(execution["output"]) if execution["status"] == "SUCCEEDED" else None


def test_a_sweep_runs_its_matrix_under_the_cap_and_resumes_by_starting_nothing(cli, store, tmp_path, monkeypatch):
    sweep_id = f"it-{uuid.uuid4().hex[:8]}"
    planned_before = []
    submit = sweep_runs.submit

    def watched_submit(sfn, arn, execution_input):  # what `oriole watch --sweep ID` finds as the run begins
        planned_before.append(Results(store.conn).sweep_plan(sweep_id))
        return submit(sfn, arn, execution_input)

    monkeypatch.setattr(sweep_runs, "submit", watched_submit)
    file = tmp_path / "sweep.toml"
    file.write_text(
        f'id = "{sweep_id}"\nagents = ["baseline/random", "baseline/explorer"]\n'
        'mazes = ["perfect-7", "perfect-9", "perfect-11"]\nrepetitions = 2\nconcurrency = 2\n'
        'comment = "integration"\n[[configs]]\nmaxMoves = 60\n'
    )
    planned = cli("sweep", str(file), "--dry-run")
    assert planned.exit_code == 0 and len(planned.stdout.splitlines()) == 12 and experiments(store, sweep_id) == []
    first = cli("sweep", str(file))
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("12 planned: 0 already done, ")
    assert planned_before[0] is not None and planned_before[0].planned == 12  # planned before its state machine ran
    rows = experiments(store, sweep_id)
    assert len(rows) == 12 and len({r["agent_id"] for r in rows}) == 12
    assert all(r["status"] in ("succeeded", "timed_out") for r in rows)
    assert {r["comment"] for r in rows} == {f"sweep:{sweep_id} integration"}
    assert max_overlap(rows) == 2  # the cap held, and was used
    assert all(r["origin_execution_arn"].endswith("-a0") for r in rows)  # deterministic names, first attempts
    report = [line.split() for line in first.stdout.splitlines() if line.startswith("baseline/")]
    assert sorted((line[0], line[2], line[3]) for line in report) == sorted(  # agent, maze size, runs
        (agent, size, "2") for agent in ("baseline/explorer", "baseline/random") for size in ("7x7", "9x9", "11x11")
    )
    again = cli("sweep", str(file))
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("12 planned: 12 already done; spent $0.0000")
    assert "12 already done, 0 to run" in again.stderr
    assert len(experiments(store, sweep_id)) == 12
    status = cli("sweep", "status", sweep_id)
    assert status.exit_code == 0, status.output
    head, endings, spent = status.stdout.splitlines()
    assert head.startswith(f"sweep {sweep_id}: 12 planned, 12 done, 0 running, 0 left (planned ")
    assert endings.startswith("done: ") and "timed out" not in endings and spent == "spent $0.0000 · 0 tokens"
    typo = cli("sweep", "status", sweep_id[:-1])
    assert (
        typo.exit_code == 2 and f"no sweep {sweep_id[:-1]}: no experiment, no plan (closest: {sweep_id}" in typo.stderr
    )


def wilson(successes: int, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson score interval, from its formula."""
    p, n = successes / trials, trials
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def test_the_sweeps_report_gives_the_wilson_interval_of_its_stored_outcomes(cli, store, tmp_path):
    sweep_id = f"wilson-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "wilson.toml"
    file.write_text(
        f'id = "{sweep_id}"\nagents = ["baseline/random", "baseline/oracle"]\nmazes = ["perfect-9"]\n'
        "repetitions = 5\nconcurrency = 3\n[[configs]]\nmaxMoves = 30\n"
    )
    assert cli("sweep", str(file), "--quiet").exit_code == 0
    rows = experiments(store, sweep_id)
    report = json.loads(cli("report", "--tag", f"sweep:{sweep_id}", "--format", "json").stdout)
    assert {r["model_name"] for r in report} == {"random", "oracle"}
    for line in report:
        mine = [r for r in rows if r["model_name"] == line["model_name"]]
        successes = sum(r["status"] == "succeeded" for r in mine)
        low, high = wilson(successes, len(mine))
        assert (line["runs"], line["successes"]) == (len(mine), successes)
        assert float(line["success_rate_low"]) == pytest.approx(low, abs=5e-5)
        assert float(line["success_rate_high"]) == pytest.approx(high, abs=5e-5)


def test_each_provider_keeps_its_cap_and_a_failing_experiment_does_not_fail_the_sweep(local, store):
    sweep_id = f"caps-{uuid.uuid4().hex[:8]}"
    nobody = {
        "provider": "ollama",
        "model": "nobody-listens",
        "config": {"endpoint": "http://127.0.0.1:9", "requestTimeoutSeconds": 1},
    }
    sweep = {
        "id": sweep_id,
        "agents": ["baseline/oracle", "baseline/explorer", nobody],
        "mazes": ["perfect-7", "perfect-9"],
        "repetitions": 2,
        "provider_concurrency": {"baseline": 2, "ollama": 1},
        "pause_after_errors": 0,  # every one of them fails; none paused (tests/integration/test_sweep_servers.py)
    }
    execution, summary = run_sweep(local, sweep)
    assert execution["status"] == "SUCCEEDED"
    assert (summary["planned"], summary["succeeded"], summary["failed"], summary["skipped"]) == (12, 8, 4, 0)
    rows = experiments(store, sweep_id)
    baselines = [r for r in rows if r["llm_provider"] == "baseline"]
    ollama = [r for r in rows if r["llm_provider"] == "ollama"]
    assert len(baselines) == 8 and max_overlap(baselines) == 2
    assert len(ollama) == 4 and max_overlap(ollama) == 1 and {r["status"] for r in ollama} == {"failed"}
    assert len(local.aws.history(execution["executionArn"])) < PARENT_EVENTS

    _, again = run_sweep(local, sweep)  # resume: the failures count as done unless retried
    assert (again["alreadyDone"], again["failed"]) == (12, 0) and len(experiments(store, sweep_id)) == 12
    _, retried = run_sweep(local, {**sweep, "agents": [nobody], "retry_failed": True})
    assert (retried["planned"], retried["alreadyDone"], retried["failed"]) == (4, 0, 4)
    second = [r for r in experiments(store, sweep_id) if r["id"] > max(r["id"] for r in rows)]
    assert len(second) == 4 and all(r["origin_execution_arn"].endswith("-a1") for r in second)


def test_the_spend_limit_skips_what_is_left_and_the_command_says_so(cli, store, tmp_path):
    sweep_id = f"spend-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "spend.toml"
    file.write_text(
        f'id = "{sweep_id}"\nagents = ["baseline/oracle"]\nmazes = ["perfect-7"]\nrepetitions = 2\n'
        "spend_limit_usd = 1.5\n"
    )
    assert cli("sweep", str(file), "--quiet").exit_code == 0  # baselines cost nothing: under the limit
    store.conn.execute("UPDATE experiments SET cost_usd = 1 WHERE agent_id LIKE %s", (sweep_id + "/%",))
    file.write_text(file.read_text().replace("repetitions = 2", "repetitions = 5"))
    result = cli("sweep", str(file), "--quiet")
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("5 planned: 2 already done, 3 skipped; spent $2.0000")
    assert len(experiments(store, sweep_id)) == 2


def test_stopping_a_sweep_starts_nothing_more_and_its_running_experiments_finish(local, store):
    sweep_id = f"stop-{uuid.uuid4().hex[:8]}"
    sweep = {
        "id": sweep_id,
        "agents": ["baseline/explorer"],
        "mazes": ["perfect-31"],
        "repetitions": 20,
        "concurrency": 2,
        "wait_seconds": 1,
    }
    arn, _ = sweep_runs.submit(local.aws.sfn, local.aws.sweep_state_machine_arn, sweep)
    started_experiments(store, sweep_id)
    local.aws.sfn.stop_execution(executionArn=arn)
    stopped_at = experiments(store, sweep_id)
    progress = SweepProgress(Console(file=io.StringIO()), sweep_id, [], 0, 0, show_lines=False)
    with progress:
        execution = sweep_runs.follow_local(local.aws, arn, sweep_id, local.results, progress, lambda running: None)
    assert execution["status"] == "ABORTED"
    rows = experiments(store, sweep_id)
    assert all(r["completed_at"] is not None for r in rows)  # they finished: no row stays open
    time.sleep(2)  # longer than an item's wait: a map item still alive would have started its next experiment
    assert experiments(store, sweep_id) == rows
    assert 1 <= len(rows) <= len(stopped_at) + 2  # at most the starts under way as it stopped


def test_a_plain_resume_runs_again_what_a_double_ctrl_c_left_to_doctor(local, store):
    """Ctrl-C twice: the sweep stops and its running experiments are left; `oriole doctor --fix` closes them as
    aborted. Running the file again (no --retry-failed) runs exactly those repetitions again, as new attempts."""
    sweep_id = f"recover-{uuid.uuid4().hex[:8]}"
    sweep = {
        "id": sweep_id,
        "agents": ["baseline/explorer"],
        "mazes": ["perfect-31"],
        "repetitions": 4,
        "concurrency": 2,
        "wait_seconds": 1,
    }
    arn, _ = sweep_runs.submit(local.aws.sfn, local.aws.sweep_state_machine_arn, sweep)
    deadline = time.monotonic() + 30
    while len(experiments(store, sweep_id)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    local.aws.sfn.stop_execution(executionArn=arn)  # the first Ctrl-C
    for row in experiments(store, sweep_id):  # the second: what ran is left, and doctor closes it as its end
        if row["completed_at"] is None:
            local.aws.sfn.stop_execution(executionArn=row["origin_execution_arn"])
    progress = SweepProgress(Console(file=io.StringIO()), sweep_id, [], 0, 0, show_lines=False)
    with progress:
        sweep_runs.follow_local(local.aws, arn, sweep_id, local.results, progress, lambda running: None)
    stopped = {r["agent_id"] for r in experiments(store, sweep_id) if r["status"] == "aborted"}
    assert stopped and all(r["completed_at"] is not None for r in experiments(store, sweep_id))

    _, again = run_sweep(local, sweep)
    assert again["errors"] == 0 and again["successes"] + again["agentFailures"] == 4 - again["alreadyDone"]
    latest = {r["agent_id"]: r for r in experiments(store, sweep_id)}  # by repetition, its latest attempt
    assert len(latest) == 4 and all(r["status"] != "aborted" for r in latest.values())
    assert all(latest[agent]["origin_execution_arn"].endswith("-a1") for agent in stopped)  # a new attempt each


def test_an_item_started_twice_starts_one_experiment_and_follows_it(local, store):
    """A retried StartRepetition (a Lambda retry, a redriven child) meets the execution the first one started."""
    from oriole.handlers import sweep_tasks as tasks
    from oriole_workstation.runner import LambdaContext

    sweep = {"id": f"twice-{uuid.uuid4().hex[:8]}", "agents": ["baseline/oracle"], "mazes": ["perfect-9"]}
    store.record_sweep_plan(sweep["id"], 1, sweep)  # PlanSweep ran: an experiment joins only a planned sweep
    event = {"sweep": sweep, "index": 0, "experimentStateMachineArn": local.aws.state_machine_arn}
    context = LambdaContext("oriole-StartRepetition", "arn:aws:lambda:us-east-1:123456789012:function:x", "r")
    first, second = tasks.start_repetition(event, context), tasks.start_repetition(event, context)
    assert first == second and first["outcome"] == "started" and first["executionArn"].endswith("-r1-a0")
    local.follow(first["executionArn"])
    assert [r["status"] for r in experiments(store, sweep["id"])] == ["succeeded"]
    check = tasks.check_repetition(
        {"executionArn": first["executionArn"], "waitSeconds": 1, "followedSeconds": 5}, context
    )
    assert check == {"closed": True, "outcome": "succeeded", "waitSeconds": 1, "followedSeconds": 5}
    assert tasks.start_repetition(event, context) == {"outcome": "succeeded", "executionArn": None}  # resumed: done


def test_a_sweep_over_maze_samples_plays_that_many_different_mazes_and_resumes_on_the_same_ones(cli, store, tmp_path):
    sweep_id = f"samples-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "samples.toml"
    file.write_text(
        f'id = "{sweep_id}"\nagents = ["baseline/oracle"]\n'
        'mazes = [{ family = "perfect", size = 9, samples = 4 }]\nconcurrency = 2\n'
    )
    first = cli("sweep", str(file))
    assert first.exit_code == 0, first.output
    mazes = store.conn.execute(
        "SELECT m.name, m.content_hash, m.source, m.shortest_path_length, e.action_count, e.status "
        "FROM experiments e JOIN mazes m ON m.id = e.maze_id WHERE e.agent_id LIKE %s",
        (sweep_id + "/%",),
    ).fetchall()
    assert len(mazes) == 4 and len({m["content_hash"] for m in mazes}) == 4
    assert all(m["name"].startswith("perfect-9@") and m["source"] == "generated" for m in mazes)
    assert all(m["status"] == "succeeded" and m["action_count"] == m["shortest_path_length"] for m in mazes)
    again = cli("sweep", str(file))
    assert again.exit_code == 0 and again.stdout.startswith("4 planned: 4 already done")


START, CHECK = "oriole-StartRepetition", "oriole-CheckRepetition"


def test_an_item_retries_a_full_database_and_a_throttled_start_as_the_experiment_flow_does(local, store):
    """DatabaseBusy and StartExecutionThrottled are retried (they ended the item, its repetition skipped)."""
    sweep = {
        "id": f"retry-{uuid.uuid4().hex[:8]}",
        "agents": ["baseline/oracle"],
        "mazes": ["perfect-7"],
        "repetitions": 3,
        "provider_concurrency": {"baseline": 1},
    }
    with (
        failing(local, START, "DatabaseBusy", after=False) as busy,
        failing(local, START, "StartExecutionThrottled", after=False, on_call=3) as throttled,
        failing(local, CHECK, "DatabaseBusy", after=False, on_call=2) as busy_check,
    ):
        execution, summary = run_sweep(local, sweep)
    assert (len(busy), len(throttled), len(busy_check)) == (1, 1, 1)
    assert execution["status"] == "SUCCEEDED"
    assert (summary["planned"], summary["succeeded"], summary["skipped"]) == (3, 3, 0)
    assert len(experiments(store, sweep["id"])) == 3


def test_the_cap_holds_while_an_items_checks_fail_and_the_sweep_completes(local, store):
    """A check failing past its retries (here DescribeExecution throttled beyond botocore's retries, which the
    flow does not retry) used to end its item while its experiment ran, so the next one started beside it. Now
    the item waits and checks again: never more than the cap at once, every repetition run."""
    sweep = {
        "id": f"hold-{uuid.uuid4().hex[:8]}",
        "agents": ["baseline/oracle"],
        "mazes": ["perfect-31"],
        "repetitions": 3,
        "configs": [{"maxActionsPerTurn": 1}],
        "provider_concurrency": {"baseline": 1},
    }
    checked_at = []
    with failing(local, CHECK, "ClientError", after=False, times=3) as injected:
        real = local.aws._handlers[CHECK]

        def timed(event, context):
            checked_at.append(datetime.now(UTC))
            return real(event, context)

        local.aws._handlers[CHECK] = timed
        try:
            execution, summary = run_sweep(local, sweep)
        finally:
            local.aws._handlers[CHECK] = real
    assert len(injected) == 3
    rows = experiments(store, sweep["id"])
    assert len(rows) == 3 and max_overlap(rows) == 1
    assert checked_at[0] < rows[0]["completed_at"]  # the first experiment ran while its check failed
    assert execution["status"] == "SUCCEEDED" and (summary["succeeded"], summary["skipped"]) == (3, 0)


BASELINE_ITEM = sweep_flow.LABELS["baseline"]


def item_state_machine(local, max_failed_checks: int = sweep_flow.MAX_FAILED_CHECKS) -> str:
    """The deployed baseline map's item flow as a state machine of its own (an item is a child execution on AWS),
    with its bound on failed checks in a row."""
    described = local.aws.sfn.describe_state_machine(stateMachineArn=local.aws.sweep_state_machine_arn)
    [processor] = [
        state["ItemProcessor"]
        for branch in json.loads(described["definition"])["States"]["RunRepetitions"]["Branches"]
        for state in branch["States"].values()
        if state["ItemsPath"] == "$.indices.baseline"
    ]
    processor.pop("ProcessorConfig")
    [bound] = processor["States"][BASELINE_ITEM + "MayCheckAgain"]["Choices"]
    assert bound["NumericLessThan"] == sweep_flow.MAX_FAILED_CHECKS
    bound["NumericLessThan"] = max_failed_checks
    return local.aws.sfn.create_state_machine(
        name=f"oriole-item-{uuid.uuid4().hex[:6]}", definition=json.dumps(processor), roleArn=described["roleArn"]
    )["stateMachineArn"]


def run_item(local, item: str, item_input: dict) -> tuple[dict, list[dict]]:
    """Start one item's execution, wait for its end: the execution as described, and its history."""
    arn = local.aws.sfn.start_execution(stateMachineArn=item, input=json.dumps(item_input))["executionArn"]
    deadline = time.monotonic() + 300  # a bound for a hang, far above a loaded machine's minute
    while (ended := local.aws.sfn.describe_execution(executionArn=arn))[
        "status"
    ] == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.1)
    return ended, local.aws.history(arn)


def entered(history: list[dict], state: str) -> list[dict]:
    """The inputs with which ``state`` (of the baseline item) was entered, in order."""
    return [
        json.loads(e["stateEnteredEventDetails"]["input"])
        for e in history
        if e.get("stateEnteredEventDetails", {}).get("name") == BASELINE_ITEM + state
    ]


def test_an_item_whose_checks_keep_failing_gives_up_after_the_bound(local, store):
    """The bound: after MAX_FAILED_CHECKS failed checks in a row the item stops waiting (GaveUpChecking) instead
    of waiting forever; run here as the deployed baseline map's item flow with a bound of 2. A failed check keeps
    the wait and counts it as followed."""
    item = item_state_machine(local, max_failed_checks=2)
    sweep = {"id": f"lost-{uuid.uuid4().hex[:8]}", "agents": ["baseline/oracle"], "mazes": ["perfect-7"]}
    store.record_sweep_plan(sweep["id"], 1, sweep)  # PlanSweep's record: the item's experiment joins its sweep
    with failing(local, CHECK, "ClientError", after=False, times=10) as injected:
        ended, history = run_item(local, item, sweep_flow.item_input(0, sweep, wait_seconds=1))
    assert len(injected) == 2
    assert (ended["status"], json.loads(ended["output"])) == ("SUCCEEDED", {})
    states = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert states[-3:] == [BASELINE_ITEM + state for state in ("CheckFailed", "MayCheckAgain", "GaveUpChecking")]
    assert entered(history, "GaveUpChecking")[0]["check"] == {"failedChecks": 2, "waitSeconds": 1, "followedSeconds": 2}
    [row] = started_experiments(store, sweep["id"])
    local.follow(row["origin_execution_arn"])  # the experiment itself runs to its end


def test_an_items_waits_grow_with_the_time_it_has_followed_its_experiment(local, store):
    """An item told it has followed its experiment for 30 s already: each look adds the wait just done to the time
    followed (in the flow) and answers the next wait, a tenth of it (oriole.core.sweep_plan.next_check_wait), until the
    experiment is closed. The experiment cannot end before the second wait whatever the machine's speed: its model
    answers its one call after 3 s (the first wait is 1 s), and gives up. (Its sweep is recorded as planned: an
    experiment of a sweep no one planned is rejected at once, which is what made this test depend on timing.)"""
    item = item_state_machine(local)
    give_up = tool_calls(("give_up", {"reason": "the test has seen two waits"}))
    with ScriptedOllama(slow(3, give_up), models=["scripted"]) as server:
        sweep = {
            "id": f"grow-{uuid.uuid4().hex[:8]}",
            "agents": ["ollama/scripted"],
            "mazes": ["perfect-7"],
            "configs": [{"endpoint": server.url, "enableGiveUp": True}],
        }
        store.record_sweep_plan(sweep["id"], 1, sweep)  # PlanSweep's record: the item's experiment joins its sweep
        started = sweep_flow.item_input(0, sweep, wait_seconds=1)
        started["check"]["followedSeconds"] = 30
        ended, history = run_item(local, item, started)
    assert ended["status"] == "SUCCEEDED"
    checks = [state["check"] for state in entered(history, "WaitForExperiment")]
    [row] = started_experiments(store, sweep["id"])
    assert row["status"] == "failed" and len(server.requests) == 1  # it ran, and gave up after its one slow call
    assert len(checks) >= 2, "the experiment ended before a second wait"
    followed, wait = 30, 1
    for check in checks:
        assert (check["followedSeconds"], check["waitSeconds"]) == (followed, wait)
        followed += wait
        wait = next_check_wait(followed, 1)
    assert checks[1]["waitSeconds"] == 3  # a tenth of 31 s, where the sweep's wait is 1 s
