"""The two stacks: data (network and database, long-lived) and orchestrator (functions, parameters,
state machine, migrations, monitoring), so the orchestrator can be redeployed or torn down without
touching the results."""

from __future__ import annotations

from typing import Any

from aws_cdk import ArnFormat, CfnOutput, Duration, Stack, triggers
from constructs import Construct

from infra.access import PortForward, bastion, relay
from infra.database import Database, ImportedDatabase, InstanceDatabase, ManagedDatabase, ServerlessDatabase
from infra.deletion_protection import DeletionProtection
from infra.functions import MIGRATIONS_SECONDS, PRUNER_SECONDS, Functions
from infra.log_groups import expire_log_groups
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
    """The network and the database of the profile (``settings.profile``), or an imported database; the
    researchers' port forward; deletion protection last."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, **kwargs: Any):
        super().__init__(scope, construct_id, **kwargs)
        ports = settings.model_server_ports
        self.network: Network | None = None
        if settings.existing_database:
            self.database: Database = ImportedDatabase(
                self, "Database", existing=settings.existing_database, egress_ports=ports
            )
            return
        self.network = Network(
            self,
            "Network",
            egress=settings.egress,
            availability_zones=settings.availability_zones,
            egress_ports=ports,
            log_retention_days=settings.log_retention_days,
        )
        managed = self._database(settings, self.network)
        self.database = managed
        assert managed.reader_secret is not None
        CfnOutput(self, "DatabaseEndpoint", value=managed.endpoint)
        CfnOutput(
            self,
            "DatabaseSecretArn",
            value=managed.secret.secret_arn,
            description="The owner's credentials (migrations only)",
        )
        CfnOutput(
            self,
            "ReaderSecretArn",
            value=managed.reader_secret.secret_arn,
            description="The read-only role's credentials: psql and oriole report --aws",
        )
        if managed.proxy_endpoint is not None:
            CfnOutput(self, "DatabaseProxyEndpoint", value=managed.proxy_endpoint)
        protected = managed.protected
        CfnOutput(
            self, "DatabaseIdentifier", value=protected.identifier, description=f"The database's {protected.kind}"
        )
        if settings.bastion:  # Session Manager reaches it through the NAT or its interface endpoints
            instance = (
                relay(self.network.nat_instance, managed)
                if self.network.nat_instance is not None
                else bastion(self, managed, self.network.function_subnets)
            )
            PortForward(self, "PortForward", database=managed, instance=instance)
        expire_log_groups(self, settings.log_retention_days)
        DeletionProtection(
            self,
            "DatabaseDeletionProtection",
            database=protected,
            enabled=settings.deletion_protection,
            log_retention_days=settings.log_retention_days,
        )

    def _database(self, settings: Settings, network: Network) -> ManagedDatabase:
        if settings.profile.serverless:
            return ServerlessDatabase(
                self,
                "Database",
                vpc=network.vpc,
                subnets=network.database_subnets,
                egress_ports=settings.model_server_ports,
                deletion_protection=settings.deletion_protection,
                log_retention_days=settings.log_retention_days,
                max_acu=settings.max_acu,
            )
        return InstanceDatabase(
            self,
            "Database",
            vpc=network.vpc,
            subnets=network.database_subnets,
            egress_ports=settings.model_server_ports,
            deletion_protection=settings.deletion_protection,
            log_retention_days=settings.log_retention_days,
        )


class OrchestratorStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings, data: DataStack, **kwargs: Any):
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
            model_servers.key: servers.urls[0]
            for name, servers in settings.model_servers.items()
            if servers.urls and (model_servers := PROVIDERS[name].servers) is not None
        }  # a provider's first allowed server is its parameter's value
        Parameters(self, "Parameters", prefix=prefix, values=first, log_retention_days=settings.log_retention_days)
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
            sweeps=self.sweeps.state_machine,
            dead_letters=self.functions.dead_letters,
            alarms=[*database.alarms(), *(data.network.alarms() if data.network else [])],
            settings=settings,
        )
        self._outputs(flow, settings)
        expire_log_groups(self, settings.log_retention_days)

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
            timeout=Duration.seconds(PRUNER_SECONDS + TRIGGER_MARGIN_SECONDS),
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
        CfnOutput(  # what `oriole check --aws` invokes: the finalizer's dead letters, the reconciler's run
            self, "StatusFinalizerFunction", value=self.functions.status_finalizer.function_name
        )
        CfnOutput(self, "ReconcilerFunction", value=self.functions.reconciler.function_name)
        CfnOutput(
            self,
            "Deployment",
            value=settings.deployment,
            description=f"Set ORIOLE_DEPLOYMENT={settings.deployment} for the CLI when it is not Oriole",
        )
