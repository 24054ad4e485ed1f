"""The experiments database, one of three kinds behind one interface (``Database``): an RDS PostgreSQL 16 instance
behind RDS Proxy (the standard profile, ``InstanceDatabase``), Aurora PostgreSQL Serverless v2 that pauses at 0 ACU
when nothing runs (the lean profile, ``ServerlessDatabase``), or a database the researcher already has
(``ImportedDatabase``). The two the stack makes live in isolated subnets, encrypted, with TLS required.

Three sets of credentials, each a Secrets Manager secret: the owner (the master user: the migrations), the
application role ``oriole_app`` (the functions) and the read-only role ``oriole_reader`` (researchers' SQL). The
migrations create both roles; the Migrations function gives them their logins with these passwords.

Connection budget (standard): a ``db.t4g.small`` (2 GiB) accepts about 180 connections (``max_connections`` is
``DBInstanceClassMemory / 9531392``). The proxy may use at most ``PROXY_CONNECTIONS_PERCENT`` of them for the
functions, however many warm containers there are (each holds one client connection to the proxy; a server
connection is borrowed per statement, since every statement is its own transaction); the rest stays for the
migrations' owner session, researchers and RDS itself. Migration 0012 sets ``idle_session_timeout`` on the
application role alone: a session of the functions' that a frozen container forgot ends after 10 idle minutes,
while a researcher's psql session (the reader, the owner) stays open.

The lean profile has no proxy (it costs $22 a month, and a proxy holds connections that keep Aurora from pausing):
each warm container holds one connection of its own, which the same 10 idle minutes close, after which Aurora
pauses (``PAUSE_AFTER``). A paused database resumes on the next connection in about 15 seconds; the functions and
the migrations wait for it (``oriole.store.db``: their connect budget is their invocation's remaining time).

Engine versions are full versions (``ENGINE_VERSION``, ``AURORA_VERSION``), with automatic minor upgrades on. RDS
creates a database only at a version ``DescribeDBEngineVersions`` lists as available (a full ``major.minor``; a
major alone is not a listed version, and cfn-lint's W3691 refuses ``16`` since minors of it are deprecated).
CloudFormation sends ``EngineVersion`` to RDS on an update only when the template's value changed, so a later
deploy that keeps the pin never asks for an older minor than the one RDS upgraded the database to. Raise a pin only
to a version at or above the database's: RDS refuses a downgrade and the update rolls back. Aurora pauses at 0 ACU
from PostgreSQL 16.3 on.

Deletion protection comes last (``infra.deletion_protection``): CloudFormation creates the database unprotected,
and a custom resource that depends on every other resource of the stack turns protection on once everything else
exists, waiting for the database to be available. A first create that fails on the way therefore rolls back to
nothing: the database, unprotected, is deleted (after its final snapshot), never left in ``ROLLBACK_FAILED``.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.alarms import ABOVE, BELOW, PERIOD, AlarmSpec
from infra.deletion_protection import ProtectedDatabase
from infra.network import sending_ports
from infra.settings import ExistingDatabase, log_retention

DATABASE_NAME = "oriole"
OWNER, APP_ROLE, READER_ROLE = "oriole", "oriole_app", "oriole_reader"
PORT = 5432
PROXY_CONNECTIONS_PERCENT = 75
MAX_CONNECTIONS_ESTIMATE = 180  # db.t4g.small, see the module docstring: what the connection alarm judges
ENGINE_VERSION = rds.PostgresEngineVersion.VER_16_13  # a full version RDS creates; see the module docstring
ENGINE = rds.DatabaseInstanceEngine.postgres(version=ENGINE_VERSION)
# Aurora PostgreSQL pauses at 0 ACU from 16.3 on; the CDK's constant for 16.13 does not say so, this one does.
AURORA_VERSION = rds.AuroraPostgresEngineVersion.of("16.13", "16", serverless_v2_auto_pause_supported=True)
AURORA = rds.DatabaseClusterEngine.aurora_postgres(version=AURORA_VERSION)
PAUSE_AFTER = Duration.minutes(5)  # Aurora's shortest: the database pauses 5 minutes after its last connection
ROLE_SECRETS = {"AppSecret": APP_ROLE, "ReaderSecret": READER_ROLE}  # construct id -> role
SERVER_PARAMETERS = {"rds.force_ssl": "1", "log_min_duration_statement": "1000"}
CA_BUNDLE = "amazon-trust-services.pem"  # in oriole/certs: the trust anchors of the proxy's certificate
CPU_CREDITS_LOW = 20
FREE_STORAGE_LOW_BYTES = 2 * 1024**3
ACU_UTILIZATION_HIGH = 90  # percent of maxAcu


class Database(Construct):
    """What the rest of the deployment knows of its database, whatever its kind: ``vpc``, ``client_security_group``
    (give it to whatever must connect), ``secret`` (the owner's connection JSON), ``app_secret`` and
    ``reader_secret`` (the roles'; None for an imported database), ``proxy_endpoint`` (the host the functions
    connect to instead of the secret's; None without a proxy), ``ca_bundle`` (the shipped file the server's
    certificate is verified against, or None), ``endpoint`` (the server's address, for outputs and the port
    forward; None when only the secret knows it).

    The client group lives here, with the database, so the orchestrator stack depends on the data stack and never
    the other way round. It may send HTTPS and the allow-listed model servers' ports anywhere, and PostgreSQL to
    the database: nothing else."""

    vpc: ec2.IVpc
    security_group: ec2.ISecurityGroup
    client_security_group: ec2.SecurityGroup
    secret: secretsmanager.ISecret
    app_secret: secretsmanager.ISecret | None
    reader_secret: secretsmanager.ISecret | None
    proxy_endpoint: str | None
    ca_bundle: str | None
    endpoint: str | None

    def alarms(self) -> list[AlarmSpec]:
        """The database's own alarms (none for one the stack does not manage)."""
        return []

    def _add_clients(self, egress_ports: tuple[int, ...]) -> None:
        self.client_security_group = ec2.SecurityGroup(
            self,
            "Clients",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="Oriole functions: may connect to the database, and send HTTPS and to model servers",
        )
        for port in sending_ports(egress_ports):
            self.client_security_group.add_egress_rule(ec2.Peer.any_ipv4(), port, "AWS APIs and model servers")
        self.allow_client(self.client_security_group, "Oriole clients (the functions) to PostgreSQL")

    def allow_client(self, group: ec2.ISecurityGroup, description: str) -> None:
        """Let ``group`` (the functions', the bastion's) connect to PostgreSQL, directly or through the proxy."""
        self.security_group.connections.allow_from(group, ec2.Port.tcp(PORT), description)


class ManagedDatabase(Database):
    """A database the stack makes: its security group, the owner's generated credentials, the roles' secrets, and
    what deletion protection protects (``protected``)."""

    protected: ProtectedDatabase
    endpoint: str

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        egress_ports: tuple[int, ...],
        deletion_protection: bool,
        log_retention_days: int,
    ):
        super().__init__(scope, construct_id)
        self.vpc = vpc
        self.deletion_protection = deletion_protection
        self.log_retention = log_retention(log_retention_days)  # of the server's log export too
        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description="Oriole database: reachable only from its clients",
        )
        self._add_clients(egress_ports)
        self.ca_bundle = CA_BUNDLE

    @property
    def removal_policy(self) -> RemovalPolicy:
        return RemovalPolicy.SNAPSHOT if self.deletion_protection else RemovalPolicy.DESTROY

    def _add_role_secrets(self, target: rds.DatabaseInstance | rds.DatabaseCluster) -> None:
        """Generated passwords for the roles the migrations create, with the server's host, port and dbname."""
        app, reader = (rds.DatabaseSecret(self, name, username=role) for name, role in ROLE_SECRETS.items())
        for secret in (app, reader):
            secret.attach(target)
        self.app_secret, self.reader_secret = app, reader


class InstanceDatabase(ManagedDatabase):
    """The standard profile's: a ``db.t4g.small`` RDS instance (20 GB gp3 growing to 200 GB, 7-day backups) behind
    RDS Proxy, which the functions reach with TLS verified against ``CA_BUNDLE``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        subnets: ec2.SubnetSelection,
        egress_ports: tuple[int, ...],
        deletion_protection: bool,
        log_retention_days: int,
    ):
        super().__init__(
            scope,
            construct_id,
            vpc=vpc,
            egress_ports=egress_ports,
            deletion_protection=deletion_protection,
            log_retention_days=log_retention_days,
        )
        parameters = rds.ParameterGroup(self, "Parameters", engine=ENGINE, parameters=SERVER_PARAMETERS)
        self.instance = rds.DatabaseInstance(
            self,
            "Instance",
            engine=ENGINE,
            instance_type=ec2.InstanceType.of(ec2.InstanceClass.BURSTABLE4_GRAVITON, ec2.InstanceSize.SMALL),
            vpc=vpc,
            vpc_subnets=subnets,
            security_groups=[self.security_group],
            credentials=rds.Credentials.from_generated_secret(OWNER),
            database_name=DATABASE_NAME,
            parameter_group=parameters,
            storage_encrypted=True,
            storage_type=rds.StorageType.GP3,
            allocated_storage=20,
            max_allocated_storage=200,
            publicly_accessible=False,
            multi_az=False,
            backup_retention=Duration.days(7),
            # no deletion_protection here: DeletionProtection turns it on after the first create succeeded
            removal_policy=self.removal_policy,
            cloudwatch_logs_exports=["postgresql"],
            cloudwatch_logs_retention=self.log_retention,
            auto_minor_version_upgrade=True,
            port=PORT,
        )
        assert self.instance.secret is not None  # made from generated credentials
        self.secret = self.instance.secret
        self.endpoint = self.instance.db_instance_endpoint_address
        self._add_role_secrets(self.instance)
        self.proxy = self._add_proxy(subnets)
        self.proxy_endpoint = self.proxy.endpoint
        self.protected = ProtectedDatabase("instance", self.instance.instance_identifier, self.instance.instance_arn)

    def _add_proxy(self, subnets: ec2.SubnetSelection) -> rds.DatabaseProxy:
        """The proxy the functions connect through: TLS required, the owner's and the application role's
        credentials, at most ``PROXY_CONNECTIONS_PERCENT`` of the server's connections."""
        group = ec2.SecurityGroup(
            self,
            "ProxySecurityGroup",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="Oriole database proxy: from the functions to the database",
        )
        group.connections.allow_from(self.client_security_group, ec2.Port.tcp(PORT), "Oriole functions to the proxy")
        assert self.app_secret is not None
        return self.instance.add_proxy(  # the proxy lets itself into the database's security group
            "Proxy",
            db_proxy_name=f"{Stack.of(self).stack_name.lower()}-proxy",
            vpc=self.vpc,
            vpc_subnets=subnets,
            security_groups=[group],
            secrets=[self.secret, self.app_secret],
            require_tls=True,
            iam_auth=False,
            max_connections_percent=PROXY_CONNECTIONS_PERCENT,
            borrow_timeout=Duration.seconds(120),
            idle_client_timeout=Duration.minutes(10),
            debug_logging=False,
        )

    def alarms(self) -> list[AlarmSpec]:
        budget = MAX_CONNECTIONS_ESTIMATE * PROXY_CONNECTIONS_PERCENT // 100
        proxy_failures = cloudwatch.Metric(
            namespace="AWS/RDS",
            metric_name="DatabaseConnectionsSetupFailed",
            dimensions_map={"ProxyName": self.proxy.db_proxy_name},
            statistic="Sum",
            period=PERIOD,
        )
        return [
            AlarmSpec(
                "DatabaseConnections",
                self.instance.metric_database_connections(period=PERIOD, statistic="Maximum"),
                budget,
                ABOVE,
                f"The database holds {budget} connections or more: the proxy's whole share",
            ),
            AlarmSpec(
                "DatabaseCpuCredits",
                self.instance.metric("CPUCreditBalance", period=PERIOD, statistic="Minimum"),
                CPU_CREDITS_LOW,
                BELOW,
                "The burstable database is running out of CPU credits",
            ),
            AlarmSpec(
                "DatabaseFreeStorage",
                self.instance.metric_free_storage_space(period=PERIOD, statistic="Minimum"),
                FREE_STORAGE_LOW_BYTES,
                BELOW,
                "The database has less than 2 GiB of storage left",
            ),
            AlarmSpec(
                "ProxyConnectionsFailed",
                proxy_failures,
                1,
                ABOVE,
                "RDS Proxy could not open a connection to the database (its credentials, or the database is down)",
            ),
        ]


class ServerlessDatabase(ManagedDatabase):
    """The lean profile's: an Aurora PostgreSQL Serverless v2 cluster of one writer, from 0 ACU (paused, billed for
    its storage alone) to ``max_acu``, 7-day backups, no proxy."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        subnets: ec2.SubnetSelection,
        egress_ports: tuple[int, ...],
        deletion_protection: bool,
        log_retention_days: int,
        max_acu: float,
    ):
        super().__init__(
            scope,
            construct_id,
            vpc=vpc,
            egress_ports=egress_ports,
            deletion_protection=deletion_protection,
            log_retention_days=log_retention_days,
        )
        self.cluster = rds.DatabaseCluster(
            self,
            "Cluster",
            engine=AURORA,
            writer=rds.ClusterInstance.serverless_v2("Writer", auto_minor_version_upgrade=True),
            serverless_v2_min_capacity=0,
            serverless_v2_max_capacity=max_acu,
            serverless_v2_auto_pause_duration=PAUSE_AFTER,
            vpc=vpc,
            vpc_subnets=subnets,
            security_groups=[self.security_group],
            credentials=rds.Credentials.from_generated_secret(OWNER),
            default_database_name=DATABASE_NAME,
            parameters=SERVER_PARAMETERS,
            storage_encrypted=True,
            backup=rds.BackupProps(retention=Duration.days(7)),
            # no deletion_protection here: DeletionProtection turns it on after the first create succeeded
            removal_policy=self.removal_policy,
            cloudwatch_logs_exports=["postgresql"],
            cloudwatch_logs_retention=self.log_retention,
            port=PORT,
        )
        assert self.cluster.secret is not None  # made from generated credentials
        self.secret = self.cluster.secret
        self.endpoint = self.cluster.cluster_endpoint.hostname
        self._add_role_secrets(self.cluster)
        self.proxy_endpoint = None
        self.ca_bundle = None  # TLS required (rds.force_ssl); the functions connect with sslmode=require
        self.protected = ProtectedDatabase("cluster", self.cluster.cluster_identifier, self.cluster.cluster_arn)

    def alarms(self) -> list[AlarmSpec]:
        return [
            AlarmSpec(
                "DatabaseCapacity",
                self.cluster.metric_acu_utilization(period=PERIOD, statistic="Maximum"),
                ACU_UTILIZATION_HIGH,
                ABOVE,
                f"The database ran at {ACU_UTILIZATION_HIGH}% of its most capacity: raise maxAcu",
            )
        ]


class ImportedDatabase(Database):
    """A database the researcher already runs (``existingDatabaseSecretArn``): the functions connect with its secret,
    TLS required, verified against ``existingDatabaseCaBundle`` when one is named."""

    def __init__(
        self, scope: Construct, construct_id: str, *, existing: ExistingDatabase, egress_ports: tuple[int, ...]
    ):
        super().__init__(scope, construct_id)
        self.vpc = ec2.Vpc.from_vpc_attributes(
            self,
            "Vpc",
            vpc_id=existing.vpc_id,
            availability_zones=list(existing.availability_zones),
            private_subnet_ids=list(existing.subnet_ids),
        )
        self.security_group = ec2.SecurityGroup.from_security_group_id(
            self, "SecurityGroup", existing.security_group_id, mutable=True
        )
        self._add_clients(egress_ports)
        self.secret = secretsmanager.Secret.from_secret_complete_arn(self, "Secret", existing.secret_arn)
        self.app_secret = self.reader_secret = None
        self.proxy_endpoint = None
        self.ca_bundle = existing.ca_bundle
        self.endpoint = None  # the host is in the secret; CloudFormation outputs cannot read secrets
