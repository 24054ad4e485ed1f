"""The experiments database: RDS PostgreSQL 16 in isolated subnets, encrypted, TLS required, behind an RDS
Proxy that bounds the connections; or, by context, a database the researcher already has.

Three sets of credentials, each a Secrets Manager secret: the owner (the master user: the migrations), the
application role ``oriole_app`` (the functions, through the proxy) and the read-only role ``oriole_reader``
(researchers' SQL). The migrations create both roles; the Migrations function gives them their logins with
these passwords.

Connection budget: a ``db.t4g.small`` (2 GiB) accepts about 180 connections (``max_connections`` is
``DBInstanceClassMemory / 9531392``). The proxy may use at most ``PROXY_CONNECTIONS_PERCENT`` of them for
the functions, however many warm containers there are (each holds one client connection to the proxy; a
server connection is borrowed per statement, since every statement is its own transaction); the rest stays
for the migrations' owner session, researchers and RDS itself. Migration 0012 sets ``idle_session_timeout``
on the application role alone: a session of the functions' that a frozen container forgot ends after 10
idle minutes, while a researcher's psql session (the reader, the owner) stays open.

Engine version: a full version (``ENGINE_VERSION``), with RDS's automatic minor upgrades on. RDS creates an
instance only at a version ``DescribeDBEngineVersions`` lists as available (a full ``major.minor``; a major
alone is not a listed version, and cfn-lint's W3691 refuses ``16`` since minors of it are deprecated).
CloudFormation sends ``EngineVersion`` to RDS on an update only when the template's value changed (its RDS
handler diffs the previous and the desired properties), so a later deploy that keeps the pin never asks for
an older minor than the one RDS upgraded the instance to. Raise the pin only to a version at or above the
instance's (``aws rds describe-db-instances --query "DBInstances[].EngineVersion"``): RDS refuses a
downgrade and the update rolls back.

Deletion protection comes last: CloudFormation creates the instance unprotected, and ``DeletionProtection``
(a custom resource that depends on every other resource of the stack) turns protection on once everything
else exists. A first create that fails on the way (the proxy's target group, the bastion) therefore rolls
back to nothing: the instance, unprotected, is deleted (after its final snapshot), never left behind in
``ROLLBACK_FAILED``. The template never names ``DeletionProtection`` on the instance, so no later update
turns it off again; the custom resource re-applies the setting whenever ``deletionProtection`` changes.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.settings import ExistingDatabase, log_retention

DATABASE_NAME = "oriole"
OWNER, APP_ROLE, READER_ROLE = "oriole", "oriole_app", "oriole_reader"
PROXY_CONNECTIONS_PERCENT = 75
MAX_CONNECTIONS_ESTIMATE = 180  # db.t4g.small, see the module docstring: what the connection alarm judges
ENGINE_VERSION = rds.PostgresEngineVersion.VER_16_13  # a full version RDS creates; see the module docstring
ENGINE = rds.DatabaseInstanceEngine.postgres(version=ENGINE_VERSION)
CA_BUNDLE = "amazon-trust-services.pem"  # in oriole/certs: the trust anchors of the proxy's certificate
PORT_FORWARD_DOCUMENT = "AWS-StartPortForwardingSessionToRemoteHost"


class Database(Construct):
    """Exposes ``secret`` (the owner's connection JSON), ``app_secret`` and ``reader_secret`` (the roles'),
    ``proxy`` (None for an existing database), ``ca_bundle`` (the shipped file the server's certificate is
    verified against, or None), ``client_security_group`` (give it to whatever must connect),
    ``endpoint``, ``instance`` and ``vpc``.

    The client group lives here, with the database, so the orchestrator stack depends on this one and
    never the other way round."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc | None,
        subnets: ec2.SubnetSelection | None,
        deletion_protection: bool,
        existing: ExistingDatabase | None = None,
    ):
        super().__init__(scope, construct_id)
        if existing is not None:
            self._use_existing(existing)
            return
        self.vpc = vpc
        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description="Oriole database: reachable only from its clients",
        )
        self._add_clients()
        parameters = rds.ParameterGroup(
            self, "Parameters", engine=ENGINE, parameters={"rds.force_ssl": "1", "log_min_duration_statement": "1000"}
        )
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
            removal_policy=RemovalPolicy.SNAPSHOT if deletion_protection else RemovalPolicy.DESTROY,
            cloudwatch_logs_exports=["postgresql"],
            auto_minor_version_upgrade=True,
            port=5432,
        )
        self.deletion_protection = deletion_protection
        self.secret = self.instance.secret
        self.endpoint = self.instance.db_instance_endpoint_address
        self.app_secret = self._role_secret("AppSecret", APP_ROLE)
        self.reader_secret = self._role_secret("ReaderSecret", READER_ROLE)
        self.proxy = self._add_proxy(subnets)
        self.ca_bundle = CA_BUNDLE

    def _role_secret(self, construct_id: str, username: str) -> rds.DatabaseSecret:
        """A generated password for a role the migrations create, with the instance's host, port and dbname."""
        secret = rds.DatabaseSecret(self, construct_id, username=username)
        secret.attach(self.instance)
        return secret

    def _add_proxy(self, subnets: ec2.SubnetSelection | None) -> rds.DatabaseProxy:
        """The proxy the functions connect through: TLS required, the owner's and the application role's
        credentials, at most ``PROXY_CONNECTIONS_PERCENT`` of the server's connections."""
        group = ec2.SecurityGroup(
            self,
            "ProxySecurityGroup",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="Oriole database proxy: from the functions to the database",
        )
        group.connections.allow_from(self.client_security_group, ec2.Port.tcp(5432), "Oriole functions to the proxy")
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

    def _use_existing(self, existing: ExistingDatabase) -> None:
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
        self._add_clients()
        self.secret = secretsmanager.Secret.from_secret_complete_arn(self, "Secret", existing.secret_arn)
        self.app_secret = self.reader_secret = self.proxy = self.instance = None
        self.ca_bundle = existing.ca_bundle
        self.endpoint = None  # the host is in the secret; CloudFormation outputs cannot read secrets

    def add_bastion(self, subnets: ec2.SubnetSelection) -> ec2.BastionHostLinux:
        """A small instance with no open port, reached only through SSM Session Manager, from which a
        port forward gives psql on a laptop the database (``aws ssm start-session ...``, see the outputs)."""
        bastion = ec2.BastionHostLinux(
            self,
            "Bastion",
            vpc=self.vpc,
            subnet_selection=subnets,
            instance_type=ec2.InstanceType.of(ec2.InstanceClass.BURSTABLE4_GRAVITON, ec2.InstanceSize.NANO),
            machine_image=ec2.MachineImage.latest_amazon_linux2023(cpu_type=ec2.AmazonLinuxCpuType.ARM_64),
            security_group=self.client_security_group,
            require_imdsv2=True,
            block_devices=[
                ec2.BlockDevice(
                    device_name="/dev/xvda",
                    volume=ec2.BlockDeviceVolume.ebs(8, encrypted=True, volume_type=ec2.EbsDeviceVolumeType.GP3),
                )
            ],
        )
        return bastion

    def analyst_policy(self, bastion: ec2.BastionHostLinux) -> iam.ManagedPolicy:
        """What a researcher needs for read-only SQL, and nothing more: a Session Manager port forward through
        the bastion to this database (the one session document that forwards a port to a remote host), ending
        or resuming only their own sessions, the read-only role's secret, and the outputs of this stack. Attach
        it to the researchers' group or role (docs: how-to/query-deployed-database.md)."""
        stack = Stack.of(self)
        sessions = stack.format_arn(service="ssm", resource="session", resource_name="*")
        return iam.ManagedPolicy(
            self,
            "AnalystAccess",
            description=(f"Oriole {stack.stack_name}: psql through the bastion's port forward as the read-only role"),
            statements=[
                iam.PolicyStatement(
                    actions=["ssm:StartSession"],
                    resources=[
                        stack.format_arn(service="ec2", resource="instance", resource_name=bastion.instance_id),
                        stack.format_arn(
                            service="ssm", account="", resource="document", resource_name=PORT_FORWARD_DOCUMENT
                        ),
                    ],
                ),
                iam.PolicyStatement(
                    actions=["ssm:TerminateSession", "ssm:ResumeSession"],
                    resources=[sessions],
                    conditions={"StringEquals": {"ssm:resourceTag/aws:ssmmessages:session-id": "${aws:userid}"}},
                ),
                iam.PolicyStatement(actions=["ssmmessages:OpenDataChannel"], resources=[sessions]),
                iam.PolicyStatement(
                    actions=["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                    resources=[self.reader_secret.secret_arn],
                ),
                iam.PolicyStatement(actions=["cloudformation:DescribeStacks"], resources=[stack.stack_id]),
            ],
        )

    def protect(self, stack: Stack, log_retention_days: int) -> None:
        """Turn the instance's deletion protection on (off with ``deletionProtection=false``) once every
        resource ``stack`` holds so far exists: call it last. The custom resource sits beside this construct,
        not in it, since it depends on the whole of it. Its call runs again whenever the setting or the
        instance changes; deleting it leaves the instance as it is."""
        log_group = logs.LogGroup(
            stack,
            f"{self.node.id}DeletionProtectionLogs",
            removal_policy=RemovalPolicy.DESTROY,
            retention=log_retention(log_retention_days),
        )
        everything_else = list(stack.node.children)
        call = cr.AwsSdkCall(
            service="RDS",
            action="modifyDBInstance",
            parameters={
                "DBInstanceIdentifier": self.instance.instance_identifier,
                "DeletionProtection": self.deletion_protection,
            },
            physical_resource_id=cr.PhysicalResourceId.of(self.instance.instance_identifier),
        )
        protection = cr.AwsCustomResource(
            stack,
            f"{self.node.id}DeletionProtection",
            on_create=call,
            on_update=call,
            install_latest_aws_sdk=False,
            log_group=log_group,
            policy=cr.AwsCustomResourcePolicy.from_sdk_calls(resources=[self.instance.instance_arn]),
        )
        protection.node.add_dependency(*everything_else)

    def _add_clients(self) -> None:
        self.client_security_group = ec2.SecurityGroup(
            self,
            "Clients",
            vpc=self.vpc,
            allow_all_outbound=True,
            description="Oriole functions: may connect to the database",
        )
        self.security_group.connections.allow_from(
            self.client_security_group, ec2.Port.tcp(5432), "Oriole clients (the bastion) to PostgreSQL"
        )
