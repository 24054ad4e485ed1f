"""The Lambda functions: one per state-machine task, the status-change finalizer and the migration
trigger, all from one code asset, in the VPC, traced, with bounded log retention and the least
privilege each one needs."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.bundling import ARCHITECTURE, RUNTIME, code_asset
from infra.settings import log_retention
from oriole import flows
from oriole.catalog import PREFIX
from oriole.handlers import FUNCTIONS

STATUS_FINALIZER = "oriole.handlers.execution_status.handler"
MIGRATIONS = "oriole.handlers.migrate.handler"
MODEL_TASKS = ("InvokeBedrockAgent", "InvokeOllamaAgent")
WHOLE_SWEEP_TASKS = ("PlanSweep", "SummarizeSweep")  # each reads a whole sweep (up to 20,000 experiments)
NO_DATABASE = ("ContinueAsNew",)


def task_name(placeholder: str) -> str:
    """``StartExperimentFunctionArn`` -> ``StartExperiment``: the construct id and the state's name."""
    return placeholder.removesuffix("FunctionArn")


class Functions(Construct):
    """``by_placeholder`` maps each ASL placeholder to its function; ``status_finalizer`` and
    ``migrations`` are the two functions outside the flow."""

    def __init__(self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc, subnets: ec2.SubnetSelection | None,
                 security_group: ec2.ISecurityGroup, database_secret: secretsmanager.ISecret,
                 log_retention_days: int):
        super().__init__(scope, construct_id)
        self.security_group = security_group
        self._code = code_asset(skip_bundling=bool(self.node.try_get_context("skipBundling")))
        self._common = {
            "runtime": RUNTIME, "architecture": ARCHITECTURE, "vpc": vpc, "vpc_subnets": subnets,
            "security_groups": [self.security_group], "tracing": lambda_.Tracing.ACTIVE,
        }
        self._environment = {
            "DATABASE_SECRET_ARN": database_secret.secret_arn,
            "POWERTOOLS_SERVICE_NAME": "oriole",
            "POWERTOOLS_METRICS_NAMESPACE": "Oriole",
            "POWERTOOLS_LOG_LEVEL": "INFO",
        }
        self._retention = log_retention_days
        self.by_placeholder: dict[str, lambda_.Function] = {}
        for placeholder, handler in FUNCTIONS.items():
            name = task_name(placeholder)
            timeout = Duration.minutes(5) if name in MODEL_TASKS + WHOLE_SWEEP_TASKS else Duration.seconds(60)
            self.by_placeholder[placeholder] = self._function(name, handler, timeout)
        self.status_finalizer = self._function("ExecutionStatusFinalizer", STATUS_FINALIZER, Duration.seconds(60))
        self.migrations = self._function("Migrations", MIGRATIONS, Duration.minutes(5))
        for function in self.database_users:
            database_secret.grant_read(function)

    def _function(self, name: str, handler: str, timeout: Duration) -> lambda_.Function:
        log_group = logs.LogGroup(self, f"{name}Logs", retention=log_retention(self._retention),
                                  removal_policy=RemovalPolicy.DESTROY)
        return lambda_.Function(self, name, code=self._code, handler=handler, timeout=timeout, memory_size=512,
                                environment=dict(self._environment), log_group=log_group,
                                description=f"Oriole {name}", **self._common)

    @property
    def database_users(self) -> list[lambda_.Function]:
        flow = [f for p, f in self.by_placeholder.items() if task_name(p) not in NO_DATABASE]
        return [*flow, self.status_finalizer, self.migrations]

    def for_flow(self, flow: str) -> dict[str, lambda_.Function]:
        """The functions one flow's ASL file invokes, by placeholder: what its state machine may invoke."""
        return {p: f for p, f in self.by_placeholder.items() if p in flows.functions(flow)}

    def task(self, name: str) -> lambda_.Function:
        return self.by_placeholder[f"{name}FunctionArn"]

    def grant_parameters(self) -> None:
        """StartExperiment reads the catalog and the prompts (by path, once per experiment): only under the prefix."""
        stack = Stack.of(self)
        self.task("StartExperiment").add_to_role_policy(iam.PolicyStatement(
            actions=["ssm:GetParametersByPath", "ssm:GetParameters", "ssm:GetParameter"],
            resources=[stack.format_arn(service="ssm", resource="parameter", resource_name=PREFIX.lstrip("/")),
                       stack.format_arn(service="ssm", resource="parameter",
                                        resource_name=PREFIX.lstrip("/") + "/*")],
        ))

    def grant_bedrock(self, model_ids: tuple[str, ...]) -> None:
        """Invoke only the configured models: foundation models in any region (cross-region inference
        routes there) and this account's inference profiles of the same ids."""
        if not model_ids:
            return
        stack = Stack.of(self)
        resources = []
        for model_id in model_ids:
            resources.append(f"arn:{stack.partition}:bedrock:*::foundation-model/{_base_model(model_id)}")
            resources.append(stack.format_arn(service="bedrock", resource="inference-profile",
                                              resource_name=model_id))
        self.task("InvokeBedrockAgent").add_to_role_policy(iam.PolicyStatement(
            actions=["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"], resources=resources))

    def grant_ollama_key(self, secret_arn: str | None) -> None:
        if not secret_arn:
            return
        secret = secretsmanager.Secret.from_secret_complete_arn(self, "OllamaApiKey", secret_arn)
        function = self.task("InvokeOllamaAgent")
        secret.grant_read(function)
        function.add_environment("OLLAMA_API_KEY_SECRET_ARN", secret_arn)

    def grant_executions(self, state_machine_arn: str, execution_arns: str) -> None:
        """ContinueAsNew starts the successor execution of this one state machine and nothing else; the
        status-change finalizer may describe its executions (to see whether a successor is running)."""
        self.task("ContinueAsNew").add_to_role_policy(iam.PolicyStatement(
            actions=["states:StartExecution"], resources=[state_machine_arn]))
        self.status_finalizer.add_to_role_policy(iam.PolicyStatement(
            actions=["states:DescribeExecution"], resources=[execution_arns]))


def _base_model(model_id: str) -> str:
    """``us.anthropic.claude-...`` (a cross-region profile id) -> ``anthropic.claude-...``."""
    head, _, rest = model_id.partition(".")
    return rest if head in ("us", "eu", "apac", "global", "us-gov") and rest else model_id

