"""Both state machines: the ASL files with their substitutions, published function versions, logs, the execution
timeout, the status-change finalizer and the reconciler beside the experiment flow, the sweep flow's maps."""

from __future__ import annotations

import json

import pytest

from oriole import flows
from oriole.core.sweep_plan import LANES
from oriole.provider_registry import NAMES
from tests.infra.conftest import synthesize
from tests.infra.templates import function_ids, one_function_env, policies_of, resources, state_machine

ASL = flows.definition()


def test_state_machine_is_the_asl_file_with_substitutions_and_the_execution_timeout(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    deployed = json.loads(sm["DefinitionString"])
    assert deployed == {**ASL, "TimeoutSeconds": 3600}
    assert sm["TracingConfiguration"] == {"Enabled": True}
    assert sm["LoggingConfiguration"]["Level"] == "ERROR" and sm["LoggingConfiguration"]["IncludeExecutionData"]


def test_the_state_machine_calls_published_versions_never_latest(templates):
    """A deploy must not change the code under a running execution: each task names a version, whose
    resource is retained when a newer one replaces it."""
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    versions = resources(orchestrator, "AWS::Lambda::Version")
    ids = function_ids(orchestrator)
    for placeholder, value in sm["DefinitionSubstitutions"].items():
        version = versions[value["Ref"]]
        assert version["Properties"]["FunctionName"] == {"Ref": ids[placeholder.removesuffix("FunctionArn")]}
        assert version["DeletionPolicy"] == "Retain"
    assert set(sm["DefinitionSubstitutions"]) == set(flows.functions(flows.EXPERIMENT))


def test_the_state_machine_logs_under_vendedlogs(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    [destination] = sm["LoggingConfiguration"]["Destinations"]
    group_id = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    group = resources(orchestrator, "AWS::Logs::LogGroup")[group_id]["Properties"]
    assert group["LogGroupName"] == "/aws/vendedlogs/states/OrioleOrchestrator-experiment"


def test_status_changes_reach_the_finalizer_and_what_it_cannot_process_is_kept(templates):
    """The finalizer is invoked asynchronously: what fails after Lambda's retries goes to its on-failure
    destination, what EventBridge cannot deliver to the target's dead-letter queue: one queue, alarmed."""
    _, orchestrator = templates
    rules = {k: r["Properties"] for k, r in resources(orchestrator, "AWS::Events::Rule").items()}
    [rule] = [r for r in rules.values() if "EventPattern" in r]
    assert rule["EventPattern"]["detail-type"] == ["Step Functions Execution Status Change"]
    assert set(rule["EventPattern"]["detail"]["status"]) == {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}
    ids = function_ids(orchestrator)
    [target] = rule["Targets"]
    assert ids["ExecutionStatusFinalizer"] in json.dumps(target["Arn"])
    [queue_id] = resources(orchestrator, "AWS::SQS::Queue")
    assert queue_id in json.dumps(target["DeadLetterConfig"])
    [invoke_config] = resources(orchestrator, "AWS::Lambda::EventInvokeConfig").values()
    assert invoke_config["Properties"]["FunctionName"] == {"Ref": ids["ExecutionStatusFinalizer"]}
    assert queue_id in json.dumps(invoke_config["Properties"]["DestinationConfig"]["OnFailure"])
    alarms = [a["Properties"] for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()]
    assert any(
        a.get("MetricName") == "ApproximateNumberOfMessagesVisible" and queue_id in json.dumps(a) for a in alarms
    )


def test_a_schedule_runs_the_reconciler_on_its_own_state_machine(templates):
    _, orchestrator = templates
    [schedule] = [
        r["Properties"]
        for r in resources(orchestrator, "AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"]
    ]
    assert schedule["ScheduleExpression"] == "rate(15 minutes)"
    assert function_ids(orchestrator)["Reconciler"] in json.dumps(schedule["Targets"])
    env = one_function_env(orchestrator, "Reconciler")
    assert "stateMachine:OrioleOrchestrator-experiment" in json.dumps(env["ORIOLE_STATE_MACHINE_ARN"])
    describe = [
        s for s in policies_of(orchestrator, "FunctionsReconciler") if s["Action"] == "states:DescribeExecution"
    ]
    assert len(describe) == 1


def test_the_execution_timeout_sits_above_the_graceful_duration_limit_with_room_for_a_turn(default_stacks):
    """A plain deploy: the experiment's own clock (maxDurationMinutes, from when StartExperiment ran) ends it
    through FinalizeTimeout before Step Functions' timeout, even with a whole model task still to run."""
    from aws_cdk.assertions import Template

    from oriole.catalog import BY_KEY, MODEL_TASK_SECONDS

    sm = state_machine(Template.from_stack(default_stacks[1]), flows.EXPERIMENT)
    timeout = json.loads(sm["DefinitionString"])["TimeoutSeconds"]
    assert timeout > BY_KEY["maxDurationMinutes"].default * 60 + MODEL_TASK_SECONDS
    env = one_function_env(Template.from_stack(default_stacks[1]), "CheckProgress")
    assert env["ORIOLE_EXECUTION_TIMEOUT_SECONDS"] == str(timeout)  # to continue as new before it


def test_an_execution_timeout_too_short_for_a_turn_is_refused_at_synth():
    with pytest.raises(ValueError, match=r"maxExecutionSeconds.*at least"):
        synthesize(maxExecutionSeconds=600)


def test_a_second_state_machine_runs_sweeps_with_a_capped_distributed_map_per_provider_and_server_lane(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.SWEEP)
    deployed = json.loads(sm["DefinitionString"])
    assert deployed == flows.definition(flows.SWEEP) and "TimeoutSeconds" not in deployed
    maps = [branch["States"][branch["StartAt"]] for branch in deployed["States"]["RunRepetitions"]["Branches"]]
    assert len(maps) == len(NAMES) + len(LANES)
    for state in maps:
        assert state["Type"] == "Map" and state["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
        assert state["MaxConcurrencyPath"].startswith("$.caps.")
    substitutions = sm["DefinitionSubstitutions"]
    assert set(substitutions) == {*flows.functions(flows.SWEEP), flows.EXPERIMENT_STATE_MACHINE}
    for placeholder in flows.functions(flows.SWEEP):  # a published version of the task's function, never $LATEST
        assert placeholder.removesuffix("FunctionArn") in json.dumps(substitutions[placeholder])
        assert "CurrentVersion" in json.dumps(substitutions[placeholder])
    assert "stateMachine:OrioleOrchestrator-experiment" in json.dumps(substitutions[flows.EXPERIMENT_STATE_MACHINE])
    assert sm["TracingConfiguration"] == {"Enabled": True} and sm["LoggingConfiguration"]["Level"] == "ERROR"


def test_the_example_sweep_input_is_a_sweep_the_state_machine_accepts(templates):
    from oriole.core import sweep_plan

    _, orchestrator = templates
    example = json.loads(orchestrator.to_json()["Outputs"]["ExampleSweepInput"]["Value"])
    run = sweep_plan.validate(sweep_plan.SweepRun, example, "example")
    assert len(sweep_plan.plan(run)) == 72 and run.wait_seconds == 30
