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
for the migrations' owner session, researchers and RDS itself. ``idle_session_timeout`` closes what a
forgotten session holds.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.settings import ExistingDatabase

DATABASE_NAME = "oriole"
OWNER, APP_ROLE, READER_ROLE = "oriole", "oriole_app", "oriole_reader"
PROXY_CONNECTIONS_PERCENT = 75
IDLE_SESSION_TIMEOUT_MS = 10 * 60 * 1000
MAX_CONNECTIONS_ESTIMATE = 180  # db.t4g.small, see the module docstring: what the connection alarm judges
# The major version only: RDS applies minor upgrades itself (auto_minor_version_upgrade), and a later deploy
# never asks for an older minor than the instance runs.
ENGINE = rds.DatabaseInstanceEngine.postgres(version=rds.PostgresEngineVersion.of("16", "16"))
CA_BUNDLE = "amazon-trust-services.pem"  # in oriole/certs: the trust anchors of the proxy's certificate


class Database(Construct):
    """Exposes ``secret`` (the owner's connection JSON), ``app_secret`` and ``reader_secret`` (the roles'),
    ``proxy`` (None for an existing database), ``ca_bundle`` (the shipped file the server's certificate is
    verified against, or None), ``client_security_group`` (give it to whatever must connect),
    ``endpoint``, ``instance`` and ``vpc``.

    The client group lives here, with the database, so the orchestrator stack depends on this one and
    never the other way round."""

    def __init__(self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc | None,
                 subnets: ec2.SubnetSelection | None, deletion_protection: bool,
                 existing: ExistingDatabase | None = None):
        super().__init__(scope, construct_id)
        if existing is not None:
            self._use_existing(existing)
            return
        self.vpc = vpc
        self.security_group = ec2.SecurityGroup(self, "SecurityGroup", vpc=vpc, allow_all_outbound=False,
                                                description="Oriole database: reachable only from its clients")
        self._add_clients()
        parameters = rds.ParameterGroup(
            self, "Parameters", engine=ENGINE,
            parameters={"rds.force_ssl": "1", "log_min_duration_statement": "1000",
                        "idle_session_timeout": str(IDLE_SESSION_TIMEOUT_MS)},
        )
        self.instance = rds.DatabaseInstance(
            self, "Instance",
            engine=ENGINE,
            instance_type=ec2.InstanceType.of(ec2.InstanceClass.BURSTABLE4_GRAVITON, ec2.InstanceSize.SMALL),
            vpc=vpc, vpc_subnets=subnets, security_groups=[self.security_group],
            credentials=rds.Credentials.from_generated_secret(OWNER),
            database_name=DATABASE_NAME,
            parameter_group=parameters,
            storage_encrypted=True,
            storage_type=rds.StorageType.GP3,
            allocated_storage=20, max_allocated_storage=200,
            publicly_accessible=False,
            multi_az=False,
            backup_retention=Duration.days(7),
            deletion_protection=deletion_protection,
            removal_policy=RemovalPolicy.SNAPSHOT if deletion_protection else RemovalPolicy.DESTROY,
            cloudwatch_logs_exports=["postgresql"],
            auto_minor_version_upgrade=True,
            port=5432,
        )
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
        group = ec2.SecurityGroup(self, "ProxySecurityGroup", vpc=self.vpc, allow_all_outbound=False,
                                  description="Oriole database proxy: from the functions to the database")
        group.connections.allow_from(self.client_security_group, ec2.Port.tcp(5432), "Oriole functions to the proxy")
        return self.instance.add_proxy(  # the proxy lets itself into the database's security group
            "Proxy", db_proxy_name=f"{Stack.of(self).stack_name.lower()}-proxy", vpc=self.vpc,
            vpc_subnets=subnets, security_groups=[group],
            secrets=[self.secret, self.app_secret], require_tls=True, iam_auth=False,
            max_connections_percent=PROXY_CONNECTIONS_PERCENT, borrow_timeout=Duration.seconds(120),
            idle_client_timeout=Duration.minutes(10), debug_logging=False,
        )

    def _use_existing(self, existing: ExistingDatabase) -> None:
        self.vpc = ec2.Vpc.from_vpc_attributes(
            self, "Vpc", vpc_id=existing.vpc_id, availability_zones=list(existing.availability_zones),
            private_subnet_ids=list(existing.subnet_ids))
        self.security_group = ec2.SecurityGroup.from_security_group_id(self, "SecurityGroup",
                                                                       existing.security_group_id, mutable=True)
        self._add_clients()
        self.secret = secretsmanager.Secret.from_secret_complete_arn(self, "Secret", existing.secret_arn)
        self.app_secret = self.reader_secret = self.proxy = self.instance = None
        self.ca_bundle = existing.ca_bundle
        self.endpoint = None  # the host is in the secret; CloudFormation outputs cannot read secrets

    def add_bastion(self, subnets: ec2.SubnetSelection) -> ec2.BastionHostLinux:
        """A small instance with no open port, reached only through SSM Session Manager, from which a
        port forward gives psql on a laptop the database (``aws ssm start-session ...``, see the outputs)."""
        bastion = ec2.BastionHostLinux(
            self, "Bastion", vpc=self.vpc, subnet_selection=subnets,
            instance_type=ec2.InstanceType.of(ec2.InstanceClass.BURSTABLE4_GRAVITON, ec2.InstanceSize.NANO),
            machine_image=ec2.MachineImage.latest_amazon_linux2023(cpu_type=ec2.AmazonLinuxCpuType.ARM_64),
            security_group=self.client_security_group, require_imdsv2=True,
            block_devices=[ec2.BlockDevice(device_name="/dev/xvda",
                                           volume=ec2.BlockDeviceVolume.ebs(8, encrypted=True,
                                                                            volume_type=ec2.EbsDeviceVolumeType.GP3))],
        )
        return bastion

    def _add_clients(self) -> None:
        self.client_security_group = ec2.SecurityGroup(self, "Clients", vpc=self.vpc, allow_all_outbound=True,
                                                       description="Oriole functions: may connect to the database")
        self.security_group.connections.allow_from(self.client_security_group, ec2.Port.tcp(5432),
                                                   "Oriole clients (the bastion) to PostgreSQL")
