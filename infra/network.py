"""The VPC: the same three subnet groups in two AZs whatever the egress mode, so that switching ``egress``
after the first deploy changes routes and endpoints only, never the database's subnets.

- ``public``: the NAT gateway (``egress=nat``); empty otherwise.
- ``private``: the functions and the bastion; their way out is the NAT gateway (``nat``) or interface
  endpoints (``endpoints``: no internet at all).
- ``isolated``: the database and its proxy; no route out in either mode.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.settings import log_retention

INTERFACE_ENDPOINTS = {
    "Ssm": ec2.InterfaceVpcEndpointAwsService.SSM,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    "StepFunctions": ec2.InterfaceVpcEndpointAwsService.STEP_FUNCTIONS,
    "BedrockRuntime": ec2.InterfaceVpcEndpointAwsService.BEDROCK_RUNTIME,
    # Session Manager's channels, for the bastion's port forward to the database
    "SsmMessages": ec2.InterfaceVpcEndpointAwsService.SSM_MESSAGES,
    "Ec2Messages": ec2.InterfaceVpcEndpointAwsService.EC2_MESSAGES,
}


class Network(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, egress: str, log_retention_days: int):
        super().__init__(scope, construct_id)
        with_nat = egress == "nat"
        subnets = [
            ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC),
            ec2.SubnetConfiguration(
                name="private",
                subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS if with_nat else ec2.SubnetType.PRIVATE_ISOLATED,
            ),
            ec2.SubnetConfiguration(name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        ]
        self.vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1 if with_nat else 0, subnet_configuration=subnets)
        flow_logs = logs.LogGroup(
            self, "FlowLogs", retention=log_retention(log_retention_days), removal_policy=RemovalPolicy.DESTROY
        )
        self.vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        self.database_subnets = ec2.SubnetSelection(subnet_group_name="isolated")
        self.function_subnets = ec2.SubnetSelection(subnet_group_name="private")
        if not with_nat:
            for name, service in INTERFACE_ENDPOINTS.items():
                self.vpc.add_interface_endpoint(
                    name, service=service, subnets=self.function_subnets, private_dns_enabled=True
                )
