"""The Lambda functions: one per state-machine task, the status-change finalizer, the reconciler and the
migration trigger, all from one code asset, in the VPC, traced, with bounded log retention and the least
privilege each one needs.

Every function is published as a version for each code or configuration change; the state machine calls
those versions (see ``state_machine.py``), so a deploy never changes the code under a running execution,
and the code's identity (``ORIOLE_CODE_VERSION``: the package version and the asset's hash; the commit synthesized
and whether its checkout held uncommitted changes: ``oriole.code_identity``) is recorded on each experiment.
"""

from __future__ import annotations

import json

from aws_cdk import ArnFormat, CfnCondition, Duration, Fn, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.bundling import ARCHITECTURE, RUNTIME, code_asset, code_environment
from infra.database import APP_ROLE, READER_ROLE, Database
from infra.settings import log_retention
from oriole import catalog, flows
from oriole.environment import (
    BEDROCK_MODEL_IDS,
    CONNECT_PATIENCE,
    DATABASE_CA,
    DATABASE_HOST,
    DEPLOYMENT,
    EXECUTION_TIMEOUT,
    PRUNED_FUNCTIONS,
    REQUIRE_SPEND_LIMIT,
    ROLE_SECRETS,
    STACK_ID,
    STATE_MACHINE_ARN,
    SWEEP_STATE_MACHINE_ARN,
    VISION_MODELS,
)
from oriole.handlers import DEPLOYED, FUNCTIONS, task_name
from oriole.lifecycle import deployment
from oriole.provider_registry import PROVIDERS, Provider

MODEL_TASKS = tuple(p.task for p in PROVIDERS.values() if p.calls_model)  # a turn of model calls: Lambda's longest
WHOLE_SWEEP_TASKS = ("PlanSweep", "SummarizeSweep")  # each reads a whole sweep (up to 20,000 experiments)
WHOLE_SWEEP_SECONDS = 300
TASK_SECONDS = 60
MIGRATIONS_SECONDS = 300  # the migrations trigger waits longer than this (stacks.py)
PRUNER_SECONDS = 300  # the version pruner's, which its trigger waits for too
# How long a task waits for its database (oriole.store.db: never past its invocation's remaining time): Aurora
# resumes from a pause in about 15 s, in 30 s or more after a long one; a proxy's target may still be starting.
CONNECT_PATIENCE_SECONDS = 120
# A version a running execution calls must outlive the deploy that publishes the next one; the version pruner
# deletes it once no execution can call it any more.
RETAINED_VERSIONS = lambda_.VersionOptions(removal_policy=RemovalPolicy.RETAIN)


def geography(scope: Construct) -> str:
    """The stack region's geographic inference-profile prefix (``oriole.lifecycle.deployment.GEOGRAPHIES``), resolved
    by CloudFormation from the region's first word; ``global`` where no geography applies."""
    stack = Stack.of(scope)
    word = Fn.select(0, Fn.split("-", stack.region))
    value = deployment.GLOBAL
    for region_word, prefix in sorted(deployment.GEOGRAPHIES.items()):
        name = f"BedrockGeography{region_word.capitalize()}"
        condition = stack.node.try_find_child(name)
        if not isinstance(condition, CfnCondition):
            condition = CfnCondition(stack, name, expression=Fn.condition_equals(word, region_word))
        value = Fn.condition_if(condition.logical_id, prefix, value).to_string()
    return value


class Functions(Construct):
    """``by_placeholder`` maps each ASL placeholder to its function; ``status_finalizer``, ``reconciler``
    and ``migrations`` are the functions outside the flow; ``dead_letters`` holds the status changes the
    finalizer could not process."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        database: Database,
        subnets: ec2.SubnetSelection | None,
        deployment_name: str,
        log_retention_days: int,
    ):
        super().__init__(scope, construct_id)
        self._code = code_asset(skip_bundling=bool(self.node.try_get_context("skipBundling")))
        self._vpc = database.vpc
        self._subnets = subnets
        self._security_groups: list[ec2.ISecurityGroup] = [database.client_security_group]
        self._environment = {
            "POWERTOOLS_SERVICE_NAME": "oriole",
            "POWERTOOLS_METRICS_NAMESPACE": "Oriole",
            "POWERTOOLS_LOG_LEVEL": "INFO",
            DEPLOYMENT: deployment_name,
            **code_environment(),
        }
        self._retention = log_retention_days
        self.by_placeholder: dict[str, lambda_.Function] = {}
        for placeholder in FUNCTIONS:
            name = task_name(placeholder)
            timeout = (
                catalog.MODEL_TASK_SECONDS
                if name in MODEL_TASKS
                else WHOLE_SWEEP_SECONDS
                if name in WHOLE_SWEEP_TASKS
                else TASK_SECONDS
            )
            self.by_placeholder[placeholder] = self._function(name, Duration.seconds(timeout))
        self.dead_letters = sqs.Queue(
            self,
            "FinalizerDeadLetters",
            enforce_ssl=True,
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            retention_period=Duration.days(14),
        )
        self.status_finalizer = self._function(
            "ExecutionStatusFinalizer",
            Duration.seconds(TASK_SECONDS),
            on_failure=destinations.SqsDestination(self.dead_letters),
            retry_attempts=2,
        )
        self.reconciler = self._function("Reconciler", Duration.minutes(5))
        self.migrations = self._function("Migrations", Duration.seconds(MIGRATIONS_SECONDS))
        self._connect(database)

    def _function(
        self,
        name: str,
        timeout: Duration,
        in_vpc: bool = True,
        *,
        function_name: str | None = None,
        on_failure: lambda_.IDestination | None = None,
        retry_attempts: int | None = None,
    ) -> lambda_.Function:
        """The function ``name`` runs its handler in ``oriole.handlers.DEPLOYED`` (a function missing there
        cannot be made: the IAM contract's recorder knows the handlers from that table)."""
        log_group = logs.LogGroup(
            self, f"{name}Logs", retention=log_retention(self._retention), removal_policy=RemovalPolicy.DESTROY
        )
        return lambda_.Function(
            self,
            name,
            code=self._code,
            handler=DEPLOYED[name],
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            tracing=lambda_.Tracing.ACTIVE,
            timeout=timeout,
            memory_size=512,
            environment=dict(self._environment),
            log_group=log_group,
            description=f"Oriole {name}",
            current_version_options=RETAINED_VERSIONS,
            vpc=self._vpc if in_vpc else None,
            vpc_subnets=self._subnets if in_vpc else None,
            security_groups=self._security_groups if in_vpc else None,
            function_name=function_name,
            on_failure=on_failure,
            retry_attempts=retry_attempts,
        )

    def add_version_pruner(
        self, sweep_state_machine_arn: str, sweep_execution_arns: str, timeout_seconds: int
    ) -> lambda_.Function:
        """The function that deletes the published versions no execution can call any more (see
        ``oriole.handlers.versions``) of every function here that publishes versions (the flows' and the
        triggers'), itself included (named, so that its own role can name it). Outside the VPC: it calls only
        Lambda, Step Functions and CloudFormation, which ``egress=endpoints`` gives no endpoint for."""
        stack = Stack.of(self)
        name = f"{stack.stack_name}-VersionPruner"
        pruner = self._function("VersionPruner", Duration.seconds(PRUNER_SECONDS), in_vpc=False, function_name=name)
        versioned = [*self.by_placeholder.values(), self.migrations]
        pruner.add_environment(PRUNED_FUNCTIONS, json.dumps([f.function_name for f in versioned] + [name]))
        pruner.add_environment(EXECUTION_TIMEOUT, str(timeout_seconds))
        pruner.add_environment(SWEEP_STATE_MACHINE_ARN, sweep_state_machine_arn)
        pruner.add_environment(STACK_ID, stack.stack_id)
        arns = [f.function_arn for f in versioned] + [
            stack.format_arn(
                service="lambda", resource="function", resource_name=name, arn_format=ArnFormat.COLON_RESOURCE_NAME
            )
        ]
        for actions, resources in (
            (["lambda:ListVersionsByFunction"], arns),
            (["lambda:DeleteFunction"], [f"{arn}:*" for arn in arns]),  # versions only: never a function
            (["cloudformation:ListStackResources"], [stack.stack_id]),
            (["states:ListExecutions"], [sweep_state_machine_arn]),
            (["states:DescribeStateMachineForExecution"], [sweep_execution_arns]),
        ):
            pruner.add_to_role_policy(iam.PolicyStatement(actions=actions, resources=resources))
        return pruner

    @property
    def database_users(self) -> list[lambda_.Function]:
        """What connects as the application role: every function of the flows (ContinueAsNew records the
        continuation token's hash), the finalizer and the reconciler. The migrations connect as the owner."""
        return [*self.by_placeholder.values(), self.status_finalizer, self.reconciler]

    def _connect(self, database: Database) -> None:
        """Who connects how: through the proxy when there is one (the application role's secret for the functions,
        the owner's for the migrations); with the researcher's secret to an imported database. The server is
        verified against ``ca_bundle`` when there is one, else TLS is required."""
        via_proxy = {DATABASE_HOST: database.proxy_endpoint} if database.proxy_endpoint is not None else {}
        if database.ca_bundle:
            via_proxy[DATABASE_CA] = database.ca_bundle
        functions_secret = database.app_secret or database.secret
        for function in self.database_users:
            self._database_environment(function, functions_secret, via_proxy)
        self._database_environment(self.migrations, database.secret, via_proxy)
        if database.app_secret is not None and database.reader_secret is not None:
            roles = {APP_ROLE: database.app_secret, READER_ROLE: database.reader_secret}
            for secret in roles.values():
                secret.grant_read(self.migrations)
            self.migrations.add_environment(
                ROLE_SECRETS, json.dumps({role: secret.secret_arn for role, secret in roles.items()})
            )

    @staticmethod
    def _database_environment(
        function: lambda_.Function, secret: secretsmanager.ISecret, via_proxy: dict[str, str]
    ) -> None:
        secret.grant_read(function)
        function.add_environment("DATABASE_SECRET_ARN", secret.secret_arn)
        function.add_environment(CONNECT_PATIENCE, str(CONNECT_PATIENCE_SECONDS))
        for key, value in via_proxy.items():
            function.add_environment(key, value)

    def for_flow(self, flow: str) -> dict[str, lambda_.Function]:
        """The functions one flow's ASL file invokes, by placeholder: what its state machine may invoke."""
        return {p: f for p, f in self.by_placeholder.items() if p in flows.functions(flow)}

    def task(self, name: str) -> lambda_.Function:
        return self.by_placeholder[f"{name}FunctionArn"]

    def grant_parameters(self, prefix: str) -> None:
        """Parameter Store, under the deployment's prefix only (from its settings, never from the synthesizing
        shell's environment): StartExperiment reads the catalog, the chosen prompt and the model's price (by
        name, once per experiment); PlanSweep lists the prompt versions and the prices (two paths, not
        recursive) and reads the experiments' cost cap (by name). PlanSweep also learns the account's Lambda
        concurrency, and that a sweep of models needs a spend limit here."""
        stack = Stack.of(self)

        def parameters(name: str) -> str:
            return stack.format_arn(service="ssm", resource="parameter", resource_name=name.lstrip("/"))

        self.task("StartExperiment").add_to_role_policy(
            iam.PolicyStatement(
                actions=["ssm:GetParameters", "ssm:GetParameter"], resources=[parameters(f"{prefix}/*")]
            )
        )
        plan = self.task("PlanSweep")
        plan.add_to_role_policy(
            iam.PolicyStatement(
                actions=["ssm:GetParametersByPath"],
                resources=[parameters(catalog.prompts_path(prefix)), parameters(catalog.pricing_path(prefix))],
            )
        )
        cost_cap = catalog.BY_KEY["maxCostUsd"].path  # what the spend limit counts an experiment at
        plan.add_to_role_policy(
            iam.PolicyStatement(actions=["ssm:GetParameters"], resources=[parameters(f"{prefix}/{cost_cap}")])
        )
        # how many functions the account runs at once: the sweep's caps stay within it (no resource of its own)
        plan.add_to_role_policy(iam.PolicyStatement(actions=["lambda:GetAccountSettings"], resources=["*"]))
        plan.add_environment(REQUIRE_SPEND_LIMIT, "true")  # a sweep of models on AWS has a spend limit

    def mark_vision_models(self, models: tuple[str, ...]) -> None:
        """Tell StartExperiment which models beyond the catalog's accept images (observation image or both)."""
        if models:
            self.task("StartExperiment").add_environment(VISION_MODELS, json.dumps(list(models)))

    def grant_bedrock(self, model_ids: tuple[str, ...]) -> None:
        """Invoke only the configured models, tell StartExperiment which ones they are and let it look them up.

        A base model id is granted through the inference profiles of the deployment's geography and the
        global one (in this region and account), and as the foundation model in any region: a profile routes
        the call to the model in its destination regions (a global profile, to a model ARN without a
        region). A profile id is granted as given, with its foundation model."""
        self.task("StartExperiment").add_environment(BEDROCK_MODEL_IDS, json.dumps(list(model_ids)))
        if not model_ids:
            return
        stack = Stack.of(self)
        profiles, models = [], []
        for model_id in model_ids:
            prefixes = [None] if deployment.profile_prefix(model_id) else [geography(self), deployment.GLOBAL]
            for prefix in prefixes:
                name = model_id if prefix is None else f"{prefix}.{model_id}"
                profiles.append(stack.format_arn(service="bedrock", resource="inference-profile", resource_name=name))
            models.append(f"arn:{stack.partition}:bedrock:*::foundation-model/{deployment.base_model(model_id)}")
        self.task("InvokeBedrockAgent").add_to_role_policy(
            iam.PolicyStatement(
                actions=["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
                resources=[*profiles, *dict.fromkeys(models)],
            )
        )
        # StartExperiment records which build answers (oriole.providers.identity): it looks the models up, never
        # invokes them
        start = self.task("StartExperiment")
        start.add_to_role_policy(iam.PolicyStatement(actions=["bedrock:GetInferenceProfile"], resources=profiles))
        start.add_to_role_policy(
            iam.PolicyStatement(actions=["bedrock:GetFoundationModel"], resources=list(dict.fromkeys(models)))
        )

    def allow_model_servers(
        self, provider: Provider, urls: tuple[str, ...], secret_arn: str | None, kms_key_arn: str | None = None
    ) -> None:
        """The model servers of ``provider`` (Ollama endpoints, OpenAI-compatible base URLs) StartExperiment lets an
        execution name (none listed: none), and the API key its agent task and StartExperiment (asking the server
        which model build it serves) send them. A secret encrypted with a customer-managed key (``kms_key_arn``) is
        readable only with kms:Decrypt on that key, which they get through Secrets Manager only (the
        kms:ViaService condition)."""
        if provider.servers is None or provider.api_key_secret is None:
            raise ValueError(f"provider {provider.name} is sent to no model server")
        start = self.task("StartExperiment")
        start.add_environment(provider.servers.listed, json.dumps(list(urls)))
        if not secret_arn:
            return
        secret = secretsmanager.Secret.from_secret_complete_arn(self, f"{provider.label}ApiKey", secret_arn)
        function = self.task(provider.task)
        # the agent sends the key with every request; StartExperiment with the questions it asks the server once,
        # which build it serves (oriole.providers.identity: the server's listing sits behind the same key)
        for reader in (function, start):
            secret.grant_read(reader)
            if kms_key_arn:
                via_secrets_manager = f"secretsmanager.{Stack.of(self).region}.amazonaws.com"
                reader.add_to_role_policy(
                    iam.PolicyStatement(
                        actions=["kms:Decrypt"],
                        resources=[kms_key_arn],
                        conditions={"StringEquals": {"kms:ViaService": via_secrets_manager}},
                    )
                )
            reader.add_environment(provider.api_key_secret, secret_arn)

    def grant_executions(self, state_machine_arn: str, execution_arns: str, timeout_seconds: int) -> None:
        """ContinueAsNew starts the successor execution of this one state machine and nothing else; the
        status-change finalizer and the reconciler may describe its executions (to see whether one runs), and the
        reconciler list them; CheckProgress learns the execution timeout, to continue as new before it, and the
        reconciler, to know how far back an execution that ended lately may have started."""
        self.task("ContinueAsNew").add_to_role_policy(
            iam.PolicyStatement(actions=["states:StartExecution"], resources=[state_machine_arn])
        )
        for function in (self.status_finalizer, self.reconciler):
            function.add_to_role_policy(
                iam.PolicyStatement(actions=["states:DescribeExecution"], resources=[execution_arns])
            )
        # the reconciler lists the executions first, to leave an idle deployment's database alone
        self.reconciler.add_to_role_policy(
            iam.PolicyStatement(actions=["states:ListExecutions"], resources=[state_machine_arn])
        )
        self.reconciler.add_environment(STATE_MACHINE_ARN, state_machine_arn)
        self.reconciler.add_environment(EXECUTION_TIMEOUT, str(timeout_seconds))
        self.task("CheckProgress").add_environment(EXECUTION_TIMEOUT, str(timeout_seconds))
