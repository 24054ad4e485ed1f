"""cdk-nag AwsSolutions findings that stay, each with the reason it is accepted. Everything else is fixed
in the constructs; a new finding fails ``tests/infra``."""

from __future__ import annotations

from aws_cdk import Stack
from cdk_nag import NagPackSuppression, NagSuppressions

_LAMBDA_MANAGED = [
    "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole",
    "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole",
]


def suppress_data(stack: Stack) -> None:
    NagSuppressions.add_stack_suppressions(
        stack,
        [
            NagPackSuppression(
                id="AwsSolutions-RDS3",
                reason=(
                    "Single-AZ on purpose: experiments are resumable research workloads; multi-AZ doubles the "
                    "database cost. Enable it on the instance if your runs cannot tolerate a failover window."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-RDS11",
                reason=(
                    "The database is only reachable from the functions' security group in isolated subnets; "
                    "a non-default port adds no protection there and breaks every client's defaults."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-SMG4",
                reason=(
                    "Rotation needs a rotation function with network access to the database; the secret is read "
                    "only by the functions, with TLS required. Add rotation with instance.add_rotation_single_user()."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-EC28",
                reason=(
                    "The bastion only relays Session Manager port forwards; detailed monitoring would bill for nothing."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-EC29",
                reason=("The bastion holds no state: it can be terminated and redeployed at any time."),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=["Action::ssmmessages:*", "Action::ec2messages:*", "Resource::*"],
                reason=(
                    "The bastion's Session Manager agent permissions as CDK's BastionHostLinux grants them; the "
                    "messaging APIs accept no resource scope."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-RDS10",
                reason=(
                    "Deletion protection is on, but set after the first create succeeded: the "
                    "DatabaseDeletionProtection custom resource turns it on once every other resource of the stack "
                    "exists, so that a failed first create can still delete the database "
                    "(infra/deletion_protection.py)."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-RDS6",
                reason=(
                    "The functions and researchers sign in with passwords from Secrets Manager (psycopg, TLS "
                    "required); IAM authentication would add a token call per connection and a per-role grant."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM4",
                applies_to=_LAMBDA_MANAGED[:1],
                reason=(
                    "The AWS-managed minimal Lambda policy (its own CloudWatch log group) of the functions of CDK's "
                    "custom resources: deletion protection's handler and provider, the default security group's "
                    "restriction, and the log retention."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[{"regex": "/^Resource::<DatabaseDeletionProtectionHandler.+\\.Arn>:\\*$/"}],
                reason="CDK's provider framework invokes deletion protection's handler, any version of it.",
            ),
            NagPackSuppression(
                id="AwsSolutions-L1",
                reason=(
                    "CDK's provider framework (deletion protection's) picks its own Node.js runtime; the handler "
                    "itself runs the same Python as the functions."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=["Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>:session/*"],
                reason=(
                    "The analyst policy: Session Manager sessions get their ids when they start; ending and resuming "
                    "are limited to the caller's own sessions by their session-id tag, the data channel to sessions of "
                    "this account and region."
                ),
            ),
        ],
    )


def suppress_orchestrator(stack: Stack) -> None:
    NagSuppressions.add_stack_suppressions(
        stack,
        [
            NagPackSuppression(
                id="AwsSolutions-IAM4",
                applies_to=_LAMBDA_MANAGED,
                reason=(
                    "AWS-managed minimal Lambda policies: CloudWatch Logs for the function's own log group and the "
                    "ENI permissions a function in a VPC needs (ec2:CreateNetworkInterface has no resource scope)."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=["Resource::*"],
                reason=(
                    "X-Ray (xray:PutTraceSegments, PutTelemetryRecords), the state machine's log delivery "
                    "(logs:CreateLogDelivery and friends) and PlanSweep's lambda:GetAccountSettings (the account's "
                    "concurrency) accept no resource scope."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[{"regex": "/^Resource::<Functions.+\\.Arn>:\\*$/"}],
                reason=(
                    "lambda:InvokeFunction on the flow's own functions, any version or alias of "
                    "them; lambda:DeleteFunction on their versions only, for the version pruner."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[
                    {
                        "regex": "/^Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:function:"
                        "[A-Za-z0-9]+Orchestrator-VersionPruner:\\*$/"
                    }
                ],
                reason="The version pruner deletes its own old versions (qualified ARNs only, never the function).",
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[
                    {
                        "regex": (
                            "/^Resource::arn:<AWS::Partition>:ssm:<AWS::Region>:<AWS::AccountId>"
                            ":parameter/[a-z0-9]+/\\*$/"
                        )
                    }
                ],
                reason=(
                    "StartExperiment reads the catalog, the chosen prompt and the model's price by name: read-only, "
                    "under the deployment's prefix only (prompt and model names are chosen per experiment)."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[{"regex": "/^Resource::<ParametersValuesHandler.+\\.Arn>:\\*$/"}],
                reason="CDK's provider framework invokes the parameter values' handler, any version of it.",
            ),
            NagPackSuppression(
                id="AwsSolutions-L1",
                reason=(
                    "CDK's provider frameworks (the parameter values', the triggers') pick their own Node.js runtime; "
                    "the handlers themselves run the same Python as the functions."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-SQS3",
                reason=(
                    "FinalizerDeadLetters is itself a dead-letter queue: the on-failure destination of the "
                    "status-change "
                    "finalizer and the dead-letter queue of the EventBridge targets (cdk-nag sees only SQS redrive)."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-SF1",
                reason=(
                    "Level ERROR on purpose: every failed state is logged with its input and error; the five routine "
                    "transitions of each turn are traced by X-Ray and stored as turns in the database, so level ALL "
                    "would only duplicate each payload in CloudWatch Logs at a cost."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[
                    {
                        "regex": "/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>"
                        ":execution:.+-experiment:\\*$/"
                    }
                ],
                reason=(
                    "The status-change finalizer and a sweep's CheckRepetition describe executions of the "
                    "experiment state machine (names are per run)."
                ),
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[
                    {
                        "regex": "/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>"
                        ":execution:.+-sweep[/:]\\*$/"
                    }
                ],
                reason="The sweep's distributed maps describe and stop the child executions they start, of this one "
                "state machine (their names are made per map run); the version pruner reads the definitions "
                "of its running executions.",
            ),
            NagPackSuppression(
                id="AwsSolutions-IAM5",
                applies_to=[{"regex": "/^Resource::arn:<AWS::Partition>:bedrock:\\*::foundation-model/.+$/"}],
                reason=(
                    "Only the configured model ids; any region, because cross-region inference profiles route the "
                    "call to the foundation model in another region."
                ),
            ),
        ],
    )
