"""The state machine, from the one ASL file with the function versions substituted, plus the EventBridge
rule that sends every terminal status change to the status-change finalizer (so an execution that times
out or is aborted still closes its experiment) and the schedule of the reconciler (which closes what a lost
status change left open).

The file is read here and given inline with ``TimeoutSeconds`` set from ``max-execution-seconds``:
``DefinitionBody.from_file`` uploads the file untouched, so the execution timeout would be lost.

Each task calls a published version of its function, never ``$LATEST``: an execution keeps the definition
it started with, so it keeps calling the code it started with while a deploy publishes new versions (the
old ones are retained). A successor execution started after a deploy runs the new code.

Logging: level ERROR with the execution data, into ``/aws/vendedlogs/states/<name>`` (the prefix AWS
recommends for vended logs, whose resource policy size it keeps small). Every failed state is logged with
its input and error; the routine transitions, five per turn, are not (X-Ray traces them, and the
database holds every turn): level ALL would log each payload twice per state for nothing.
"""

from __future__ import annotations

import json

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.settings import log_retention
from oriole import flows
from oriole.statuses import TERMINAL_EXECUTION_STATUSES

LOG_GROUP_PREFIX = "/aws/vendedlogs/states/"
RECONCILE_EVERY = Duration.minutes(15)


def definition(timeout_seconds: int) -> str:
    """The ASL file with the execution timeout; ``${...}`` placeholders stay for the substitutions."""
    return json.dumps(flows.definition(timeout_seconds=timeout_seconds), indent=2)


def state_machine_name(stack: Stack) -> str:
    return f"{stack.stack_name}-experiment"


class ExperimentStateMachine(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: dict[str, lambda_.Function],
        status_finalizer: lambda_.IFunction,
        dead_letters: sqs.IQueue,
        reconciler: lambda_.IFunction,
        timeout_seconds: int,
        log_retention_days: int,
    ):
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        name = state_machine_name(stack)
        log_group = logs.LogGroup(
            self,
            "Logs",
            log_group_name=LOG_GROUP_PREFIX + name,
            retention=log_retention(log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=name,
            definition_body=sfn.DefinitionBody.from_string(definition(timeout_seconds)),
            definition_substitutions={
                placeholder: fn.current_version.function_arn for placeholder, fn in functions.items()
            },
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ERROR, include_execution_data=True),
        )
        for fn in functions.values():
            fn.grant_invoke(self.state_machine)  # the function and every version of it
        events.Rule(
            self,
            "StatusChanges",
            description="Close the experiment of any execution that ends, whatever ended it",
            event_pattern=events.EventPattern(
                source=["aws.states"],
                detail_type=["Step Functions Execution Status Change"],
                detail={
                    "stateMachineArn": [self.state_machine.state_machine_arn],
                    "status": list(TERMINAL_EXECUTION_STATUSES),
                },
            ),
            targets=[
                targets.LambdaFunction(
                    status_finalizer, retry_attempts=8, max_event_age=Duration.hours(6), dead_letter_queue=dead_letters
                )
            ],
        )
        events.Rule(
            self,
            "Reconcile",
            description="Close experiments whose execution ended without closing them",
            schedule=events.Schedule.rate(RECONCILE_EVERY),
            targets=[targets.LambdaFunction(reconciler, retry_attempts=2, dead_letter_queue=dead_letters)],
        )
