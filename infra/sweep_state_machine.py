"""The sweep state machine, from its one ASL file (``oriole/flows/sweep.asl.json``) with the function ARNs and
the experiment state machine's ARN substituted, and what it and its tasks may do: its distributed maps start,
describe and stop child executions of this state machine; StartRepetition starts executions of the experiment
state machine, CheckRepetition describes them, SummarizeSweep lists the failed ones (PlanSweep's read of the
prompt versions is granted with the other Parameter Store reads, in ``functions.py``). ARNs are built from the
state machines' names, so no policy waits on the resource it names.

No execution timeout: a sweep runs as long as its experiments do, each of which has its own.
"""

from __future__ import annotations

import json

from aws_cdk import ArnFormat, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.settings import log_retention
from infra.state_machine import LOG_GROUP_PREFIX
from oriole import flows

# Paste-ready console input: the docs' worked example (sweeps/baseline-ladder.toml) as JSON.
EXAMPLE_SWEEP_INPUT = json.dumps(
    {
        "id": "baseline-ladder",
        "agents": ["baseline/random", "baseline/wall-follower", "baseline/explorer", "baseline/oracle"],
        "mazes": ["perfect-7", "perfect-9", "perfect-11", "perfect-15", "perfect-21", "perfect-31"],
        "repetitions": 3,
        "configs": [{"maxMoves": 2000}],
        "comment": "worked example",
    }
)


def sweep_state_machine_name(stack: Stack) -> str:
    return f"{stack.stack_name}-sweep"


def _arn(stack: Stack, resource: str, name: str) -> str:
    return stack.format_arn(
        service="states", resource=resource, resource_name=name, arn_format=ArnFormat.COLON_RESOURCE_NAME
    )


class SweepStateMachine(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: dict[str, lambda_.Function],
        experiment_state_machine_name: str,
        log_retention_days: int,
    ):
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        name = sweep_state_machine_name(stack)
        experiment = _arn(stack, "stateMachine", experiment_state_machine_name)
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
            definition_body=sfn.DefinitionBody.from_string(json.dumps(flows.definition(flows.SWEEP), indent=2)),
            definition_substitutions={
                **{
                    placeholder: fn.current_version.function_arn  # published, never $LATEST
                    for placeholder, fn in functions.items()
                },
                flows.EXPERIMENT_STATE_MACHINE: experiment,
            },
            tracing_enabled=True,
            logs=sfn.LogOptions(destination=log_group, level=sfn.LogLevel.ERROR, include_execution_data=True),
        )
        for fn in functions.values():
            fn.grant_invoke(self.state_machine)  # the function and every version of it
        self._grant_distributed_maps(stack, name)
        self._grant_tasks(stack, functions, experiment, experiment_state_machine_name)

    def _grant_distributed_maps(self, stack: Stack, name: str) -> None:
        """A distributed map runs each item as a child execution of this state machine
        (``execution:<name>/<map run>:<id>``); a redriven sweep (the console's Redrive, ``aws stepfunctions
        redrive-execution``) redrives its map runs, which redrive their failed children."""
        self.state_machine.add_to_role_policy(
            iam.PolicyStatement(actions=["states:StartExecution"], resources=[_arn(stack, "stateMachine", name)])
        )
        self.state_machine.add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:DescribeExecution", "states:StopExecution", "states:RedriveExecution"],
                resources=[_arn(stack, "execution", f"{name}/*"), _arn(stack, "execution", f"{name}:*")],
            )
        )

    @staticmethod
    def _grant_tasks(
        stack: Stack, functions: dict[str, lambda_.Function], experiment: str, experiment_name: str
    ) -> None:
        functions["StartRepetitionFunctionArn"].add_to_role_policy(
            iam.PolicyStatement(actions=["states:StartExecution"], resources=[experiment])
        )
        functions["CheckRepetitionFunctionArn"].add_to_role_policy(
            iam.PolicyStatement(
                actions=["states:DescribeExecution"], resources=[_arn(stack, "execution", f"{experiment_name}:*")]
            )
        )
        functions["SummarizeSweepFunctionArn"].add_to_role_policy(
            iam.PolicyStatement(actions=["states:ListExecutions"], resources=[experiment])
        )
