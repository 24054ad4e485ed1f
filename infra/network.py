"""The VPC: the same three subnet groups in two AZs whatever the egress mode, so that switching ``egress``
after the first deploy changes routes and endpoints only, never the database's subnets.

- ``public``: the NAT gateway (``egress=nat``) or the NAT instance (``egress=nat-instance``); empty otherwise.
- ``private``: the functions and the bastion; their way out is the NAT (``nat``, ``nat-instance``) or
  interface endpoints (``endpoints``: no internet at all).
- ``isolated``: the database and its proxy; no route out in any mode.

The AZs are the region's first two unless ``availabilityZones`` names two (some accounts' first AZs do not offer
the instance types; the deploy how-to's pre-flight check finds the ones that do).

The NAT instance (the lean profile's) is one ``t4g.nano`` in the first public subnet, made by CDK's NAT instance
provider: it costs a tenth of a NAT gateway idle, forwards only what the functions may send (HTTPS and the
allow-listed model servers' ports), and doubles as the Session Manager bastion (``infra.access``).

Instances launch from a launch template (``launch_pinned``) whose image is Amazon Linux 2023's public parameter,
resolved by EC2 when the instance is launched: the template names the parameter, never an image id, so a deploy
finds nothing changed and never replaces an instance for a newer image (``ImageId`` on the instance itself would be
resolved by CloudFormation on every deploy). The template also encrypts the root volume and asks the metadata
service for a session token (IMDSv2).
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.alarms import ABOVE, PERIOD, AlarmSpec
from infra.settings import ENDPOINTS, HTTPS_PORT, NAT_INSTANCE, log_retention

INTERFACE_ENDPOINTS = {
    "Ssm": ec2.InterfaceVpcEndpointAwsService.SSM,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    "StepFunctions": ec2.InterfaceVpcEndpointAwsService.STEP_FUNCTIONS,
    "BedrockRuntime": ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
    # Session Manager's channels, for the bastion's port forward to the database
    "SsmMessages": ec2.InterfaceVpcEndpointAwsService.SSM_MESSAGES,
    "Ec2Messages": ec2.InterfaceVpcEndpointAwsService.EC2_MESSAGES,
}
# Amazon Linux 2023 for arm64, resolved by EC2 at launch (the template holds the parameter's name, not an image id,
# so a deploy never sees a new image and never replaces the instance).
AMAZON_LINUX = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-arm64"
SMALL_INSTANCE = ec2.InstanceType.of(ec2.InstanceClass.BURSTABLE4_GRAVITON, ec2.InstanceSize.NANO)
ROOT_VOLUME_GB = 8
VPC_CIDR = "10.0.0.0/16"  # CDK's default, written out: the NAT instance's rules name it


def launch_pinned(instance: ec2.Instance) -> ec2.LaunchTemplate:
    """Launch ``instance`` from a template of its own that holds its image (resolved at launch), its encrypted root
    volume and IMDSv2; the instance names the template instead of an image."""
    template = ec2.LaunchTemplate(
        instance,
        "LaunchTemplate",
        machine_image=launch_time_image(),
        require_imdsv2=True,
        block_devices=[
            ec2.BlockDevice(
                device_name="/dev/xvda",
                volume=ec2.BlockDeviceVolume.ebs(
                    ROOT_VOLUME_GB, encrypted=True, volume_type=ec2.EbsDeviceVolumeType.GP3
                ),
            )
        ],
    )
    cfn = instance.node.default_child
    assert isinstance(cfn, ec2.CfnInstance)
    cfn.add_property_deletion_override("ImageId")
    cfn.add_property_deletion_override("BlockDeviceMappings")
    cfn.launch_template = ec2.CfnInstance.LaunchTemplateSpecificationProperty(
        launch_template_id=template.launch_template_id, version=template.latest_version_number
    )
    return template


def launch_time_image() -> ec2.IMachineImage:
    """Amazon Linux 2023 for arm64 as EC2 resolves it when it launches an instance (no template parameter)."""
    return ec2.MachineImage.resolve_ssm_parameter_at_launch(AMAZON_LINUX, os=ec2.OperatingSystemType.LINUX)


def nat_instance_provider() -> ec2.NatInstanceProviderV2:
    """One ``t4g.nano`` NAT instance with a public address, letting nothing in but what ``Network`` allows."""
    return ec2.NatProvider.instance_v2(
        instance_type=SMALL_INSTANCE,
        machine_image=launch_time_image(),  # on the template only: launch_pinned
        default_allowed_traffic=ec2.NatTrafficDirection.OUTBOUND_ONLY,
        associate_public_ip_address=True,
    )


class Network(Construct):
    """Exposes ``vpc``, the subnet selections, and ``nat_instance`` (the lean profile's, else None)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        egress: str,
        availability_zones: tuple[str, ...] | None,
        egress_ports: tuple[int, ...],
        log_retention_days: int,
    ):
        super().__init__(scope, construct_id)
        provider = nat_instance_provider() if egress == NAT_INSTANCE else None
        subnets = [
            ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC),
            ec2.SubnetConfiguration(
                name="private",
                subnet_type=ec2.SubnetType.PRIVATE_ISOLATED
                if egress == ENDPOINTS
                else ec2.SubnetType.PRIVATE_WITH_EGRESS,
            ),
            ec2.SubnetConfiguration(name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        ]
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(VPC_CIDR),
            subnet_configuration=subnets,
            restrict_default_security_group=True,
            nat_gateways=0 if egress == ENDPOINTS else 1,
            nat_gateway_provider=provider,
            availability_zones=list(availability_zones) if availability_zones else None,
            max_azs=None if availability_zones else 2,  # Vpc takes one or the other
        )
        flow_logs = logs.LogGroup(
            self, "FlowLogs", retention=log_retention(log_retention_days), removal_policy=RemovalPolicy.DESTROY
        )
        self.vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        self.database_subnets = ec2.SubnetSelection(subnet_group_name="isolated")
        self.function_subnets = ec2.SubnetSelection(subnet_group_name="private")
        self.nat_instance = self._configure_nat_instance(provider, egress_ports) if provider else None
        if egress == ENDPOINTS:
            for name, service in INTERFACE_ENDPOINTS.items():
                self.vpc.add_interface_endpoint(
                    name, service=service, subnets=self.function_subnets, private_dns_enabled=True
                )

    def alarms(self) -> list[AlarmSpec]:
        return nat_alarms(self.vpc, self.nat_instance)

    def _configure_nat_instance(self, provider: ec2.NatInstanceProviderV2, ports: tuple[int, ...]) -> ec2.Instance:
        """The NAT instance forwards, from the VPC only, what the functions may send out (HTTPS and the model
        servers' ports), and launches pinned (``launch_pinned``)."""
        [instance] = provider.gateway_instances
        for port in sending_ports(ports):
            provider.security_group.add_ingress_rule(ec2.Peer.ipv4(VPC_CIDR), port, "What the functions send out")
        launch_pinned(instance)
        return instance


def nat_alarms(vpc: ec2.Vpc, nat_instance: ec2.Instance | None) -> list[AlarmSpec]:
    """The NAT's: the instance failing its status checks (the functions lose their way out), or the gateway out of
    ports for new connections."""
    if nat_instance is not None:
        metric = cloudwatch.Metric(
            namespace="AWS/EC2",
            metric_name="StatusCheckFailed",
            dimensions_map={"InstanceId": nat_instance.instance_id},
            statistic="Maximum",
            period=PERIOD,
        )
        return [AlarmSpec("NatInstanceFailing", metric, 1, ABOVE, "The NAT instance fails its status checks")]
    gateways = [
        child for subnet in vpc.public_subnets for child in subnet.node.children if isinstance(child, ec2.CfnNatGateway)
    ]
    return [
        AlarmSpec(
            f"NatGatewayPorts{index or ''}",
            cloudwatch.Metric(
                namespace="AWS/NATGateway",
                metric_name="ErrorPortAllocation",
                dimensions_map={"NatGatewayId": gateway.ref},
                statistic="Sum",
                period=PERIOD,
            ),
            1,
            ABOVE,
            "The NAT gateway ran out of ports for new connections",
        )
        for index, gateway in enumerate(gateways)
    ]


def sending_ports(ports: tuple[int, ...]) -> list[ec2.Port]:
    """HTTPS (every AWS API, https model servers) and each allow-listed model server's own port."""
    return [ec2.Port.tcp(HTTPS_PORT), *(ec2.Port.tcp(port) for port in ports)]
