"""The state machine, from the one ASL file with the function ARNs substituted, plus the EventBridge
rule that sends every terminal status change to the status-change finalizer (so an execution that
times out or is aborted still closes its experiment).

The file is read here and given inline with ``TimeoutSeconds`` set from ``max-execution-seconds``:
``DefinitionBody.from_file`` uploads the file untouched, so the execution timeout would be lost.
"""

from __future__ import annotations

import json

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.settings import log_retention
from oriole import flows
from oriole.progress import TERMINAL_EXECUTION_STATUSES


def definition(timeout_seconds: int) -> str:
    """The ASL file with the execution timeout; ``${...}`` placeholders stay for the substitutions."""
    return json.dumps(flows.definition(timeout_seconds=timeout_seconds), indent=2)


def state_machine_name(stack: Stack) -> str:
    return f"{stack.stack_name}-experiment"


class ExperimentStateMachine(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, functions: dict[str, lambda_.IFunction],
                 status_finalizer: lambda_.IFunction, timeout_seconds: int, log_retention_days: int):
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        log_group = logs.LogGroup(self, "Logs", retention=log_retention(log_retention_days),
                                  removal_policy=RemovalPolicy.DESTROY)
        self.state_machine = sfn.StateMachine(
            self, "StateMachine",
            state_machine_name=state_machine_name(stack),
            definition_body=sfn.DefinitionBody.from_string(definition(timeout_seconds)),
            definition_substitutions={placeholder: fn.function_arn for placeholder, fn in functions.items()},
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
        )
        for fn in functions.values():
            fn.grant_invoke(self.state_machine)
        events.Rule(
            self, "StatusChanges",
            description="Close the experiment of any execution that ends, whatever ended it",
            event_pattern=events.EventPattern(
                source=["aws.states"], detail_type=["Step Functions Execution Status Change"],
                detail={"stateMachineArn": [self.state_machine.state_machine_arn],
                        "status": list(TERMINAL_EXECUTION_STATUSES)},
            ),
            targets=[targets.LambdaFunction(status_finalizer, retry_attempts=8,
                                            max_event_age=Duration.hours(6))],
        )
