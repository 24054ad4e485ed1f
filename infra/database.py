"""The experiments database: RDS PostgreSQL 16 in isolated subnets, encrypted, TLS required, its
credentials generated into Secrets Manager; or, by context, a database the researcher already has."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_rds as rds
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.settings import ExistingDatabase

DATABASE_NAME = "oriole"


class Database(Construct):
    """Exposes ``secret`` (connection JSON), ``client_security_group`` (give it to whatever must connect:
    the database accepts PostgreSQL from it and from nothing else), ``endpoint`` and ``vpc``.

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
                                                description="Oriole database: reachable only from the functions")
        self._add_clients()
        parameters = rds.ParameterGroup(
            self, "Parameters", engine=_ENGINE,
            parameters={"rds.force_ssl": "1", "log_min_duration_statement": "1000"},
        )
        self.instance = rds.DatabaseInstance(
            self, "Instance",
            engine=_ENGINE,
            instance_type=ec2.InstanceType.of(ec2.InstanceClass.BURSTABLE4_GRAVITON, ec2.InstanceSize.SMALL),
            vpc=vpc, vpc_subnets=subnets, security_groups=[self.security_group],
            credentials=rds.Credentials.from_generated_secret("oriole"),
            database_name=DATABASE_NAME,
            parameter_group=parameters,
            storage_encrypted=True,
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

    def _use_existing(self, existing: ExistingDatabase) -> None:
        self.vpc = ec2.Vpc.from_vpc_attributes(
            self, "Vpc", vpc_id=existing.vpc_id, availability_zones=list(existing.availability_zones),
            private_subnet_ids=list(existing.subnet_ids))
        self.security_group = ec2.SecurityGroup.from_security_group_id(self, "SecurityGroup",
                                                                       existing.security_group_id, mutable=True)
        self._add_clients()
        self.secret = secretsmanager.Secret.from_secret_complete_arn(self, "Secret", existing.secret_arn)
        self.instance = None
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
                                           volume=ec2.BlockDeviceVolume.ebs(8, encrypted=True))],
        )
        return bastion

    def _add_clients(self) -> None:
        self.client_security_group = ec2.SecurityGroup(self, "Clients", vpc=self.vpc, allow_all_outbound=True,
                                                       description="Oriole functions: may connect to the database")
        self.security_group.connections.allow_from(self.client_security_group, ec2.Port.tcp(5432),
                                                   "Oriole functions to PostgreSQL")


_ENGINE = rds.DatabaseInstanceEngine.postgres(version=rds.PostgresEngineVersion.VER_16_9)
