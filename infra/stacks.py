"""The two stacks: data (network and database, long-lived) and orchestrator (functions, parameters,
state machine, migrations, monitoring), so the orchestrator can be redeployed or torn down without
touching the results."""

from __future__ import annotations

from aws_cdk import ArnFormat, CfnOutput, Duration, Stack, triggers
from constructs import Construct

from infra.database import PORT_FORWARD_DOCUMENT, Database
from infra.functions import MIGRATIONS_SECONDS, Functions
from infra.monitoring import Monitoring
from infra.network import Network
from infra.parameters import Parameters
from infra.settings import Settings
from infra.state_machine import ExperimentStateMachine, state_machine_name
from infra.sweep_state_machine import EXAMPLE_SWEEP_INPUT, SweepStateMachine, sweep_state_machine_name
from oriole import flows
from oriole.catalog import parameter_prefix
from oriole.provider_registry import PROVIDERS

# A trigger waits for its function's whole timeout and a little more: a slow first migration must finish, not
# time the trigger out and roll the stack back.
TRIGGER_MARGIN_SECONDS = 60
EXAMPLE_INPUT = (
    '{"mazeId": "perfect-11", "llmProvider": "baseline", "modelName": "explorer", "config": {"maxMoves": 500}}'
)


class DataStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        if settings.existing_database:
            self.network = None
            self.database = Database(
                self, "Database", vpc=None, subnets=None, deletion_protection=False, existing=settings.existing_database
            )
            return
        self.network = Network(self, "Network", egress=settings.egress, log_retention_days=settings.log_retention_days)
        self.database = Database(
            self,
            "Database",
            vpc=self.network.vpc,
            subnets=self.network.database_subnets,
            deletion_protection=settings.deletion_protection,
        )
        CfnOutput(self, "DatabaseEndpoint", value=self.database.endpoint)
        CfnOutput(
            self,
            "DatabaseSecretArn",
            value=self.database.secret.secret_arn,
            description="The owner's credentials (migrations only)",
        )
        CfnOutput(
            self,
            "ReaderSecretArn",
            value=self.database.reader_secret.secret_arn,
            description="The read-only role's credentials: psql and oriole report --aws",
        )
        CfnOutput(self, "DatabaseProxyEndpoint", value=self.database.proxy.endpoint)
        CfnOutput(self, "DatabaseInstanceId", value=self.database.instance.instance_identifier)
        if settings.bastion:  # Session Manager reaches it through the NAT gateway or its interface endpoints
            bastion = self.database.add_bastion(self.network.function_subnets)
            CfnOutput(
                self,
                "PsqlPortForward",
                description="Run this, then psql on localhost:5432 (docs: how-to)",
                value=f"aws ssm start-session --target {bastion.instance_id} --document-name "
                f"{PORT_FORWARD_DOCUMENT} --parameters "
                f"host={self.database.endpoint},portNumber=5432,localPortNumber=5432",
            )
            CfnOutput(
                self,
                "AnalystPolicyArn",
                value=self.database.analyst_policy(bastion).managed_policy_arn,
                description="Attach to researchers: the port forward and the read-only role's secret",
            )
        self.database.protect(self, settings.log_retention_days)


class OrchestratorStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, data: DataStack, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        database = data.database
        self.functions = Functions(
            self,
            "Functions",
            database=database,
            subnets=data.network.function_subnets if data.network else None,
            deployment_name=settings.deployment,
            log_retention_days=settings.log_retention_days,
        )
        prefix = parameter_prefix(settings.deployment)
        first = {
            PROVIDERS[name].servers.key: servers.urls[0]
            for name, servers in settings.model_servers.items()
            if servers.urls
        }  # a provider's first allowed server is its parameter's value
        Parameters(self, "Parameters", prefix=prefix, values=first)
        self.functions.grant_parameters(prefix)
        self.functions.grant_bedrock(settings.bedrock_model_ids)
        self.functions.mark_vision_models(settings.vision_models)
        for name, servers in settings.model_servers.items():
            self.functions.allow_model_servers(
                PROVIDERS[name], servers.urls, servers.api_key_secret_arn, servers.api_key_kms_key_arn
            )
        name = state_machine_name(self)
        self.functions.grant_executions(
            self.format_arn(
                service="states", resource="stateMachine", resource_name=name, arn_format=ArnFormat.COLON_RESOURCE_NAME
            ),
            self.format_arn(
                service="states",
                resource="execution",
                resource_name=f"{name}:*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
            settings.max_execution_seconds,
        )
        flow = ExperimentStateMachine(
            self,
            "Flow",
            functions=self.functions.for_flow(flows.EXPERIMENT),
            status_finalizer=self.functions.status_finalizer,
            dead_letters=self.functions.dead_letters,
            reconciler=self.functions.reconciler,
            timeout_seconds=settings.max_execution_seconds,
            log_retention_days=settings.log_retention_days,
        )
        self.sweeps = SweepStateMachine(
            self,
            "Sweeps",
            functions=self.functions.for_flow(flows.SWEEP),
            experiment_state_machine_name=name,
            log_retention_days=settings.log_retention_days,
        )
        triggers.Trigger(
            self,
            "MigrateOnDeploy",
            handler=self.functions.migrations,
            execute_on_handler_change=True,
            execute_after=[database],
            timeout=Duration.seconds(MIGRATIONS_SECONDS + TRIGGER_MARGIN_SECONDS),
        )
        self._prune_versions(settings, flow)
        Monitoring(
            self,
            "Monitoring",
            state_machine=flow.state_machine,
            functions=[*self.functions.by_placeholder.values(), self.functions.status_finalizer],
            dead_letters=self.functions.dead_letters,
            database=database.instance,
            alarm_email=settings.alarm_email,
        )
        self._outputs(flow, settings)

    def _prune_versions(self, settings: Settings, flow: ExperimentStateMachine) -> None:
        """After each deploy that changes the code, delete the versions no execution can call any more."""
        sweeps = sweep_state_machine_name(self)
        pruner = self.functions.add_version_pruner(
            self.format_arn(
                service="states",
                resource="stateMachine",
                resource_name=sweeps,
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
            self.format_arn(
                service="states",
                resource="execution",
                resource_name=f"{sweeps}:*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
            settings.max_execution_seconds,
        )
        triggers.Trigger(
            self,
            "PruneVersionsOnDeploy",
            handler=pruner,
            execute_on_handler_change=True,
            execute_after=[flow.state_machine, self.sweeps.state_machine],
            timeout=Duration.seconds(pruner.timeout.to_seconds() + TRIGGER_MARGIN_SECONDS),
        )

    def _outputs(self, flow: ExperimentStateMachine, settings: Settings) -> None:
        arn = flow.state_machine.state_machine_arn
        CfnOutput(self, "StateMachineArn", value=arn)
        CfnOutput(
            self,
            "StateMachineConsole",
            value=f"https://{self.region}.console.aws.amazon.com/states/home"
            f"?region={self.region}#/statemachines/view/{arn}",
        )
        CfnOutput(self, "ExampleExecutionInput", value=EXAMPLE_INPUT)
        CfnOutput(self, "SweepStateMachineArn", value=self.sweeps.state_machine.state_machine_arn)
        CfnOutput(
            self,
            "ExampleSweepInput",
            value=EXAMPLE_SWEEP_INPUT,
            description="Paste into the sweep state machine's Start execution (the worked example)",
        )
        CfnOutput(self, "MigrationsFunction", value=self.functions.migrations.function_name)
        CfnOutput(
            self,
            "Deployment",
            value=settings.deployment,
            description=f"Set ORIOLE_DEPLOYMENT={settings.deployment} for the CLI when it is not Oriole",
        )
