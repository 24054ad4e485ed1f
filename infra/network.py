"""The VPC: private subnets for the database and the Lambdas, and one egress option.

``nat`` (default): one NAT gateway, so Lambdas reach every AWS API and an Ollama endpoint on the
internet. ``endpoints``: no internet at all; interface endpoints for exactly the services the
functions call (Parameter Store, Secrets Manager, Step Functions, Bedrock Runtime).
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
}


class Network(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, egress: str, log_retention_days: int):
        super().__init__(scope, construct_id)
        with_nat = egress == "nat"
        subnets = [ec2.SubnetConfiguration(name="isolated", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)]
        if with_nat:
            subnets = [
                ec2.SubnetConfiguration(name="public", subnet_type=ec2.SubnetType.PUBLIC),
                ec2.SubnetConfiguration(name="private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                *subnets,
            ]
        self.vpc = ec2.Vpc(self, "Vpc", max_azs=2, nat_gateways=1 if with_nat else 0, subnet_configuration=subnets)
        flow_logs = logs.LogGroup(self, "FlowLogs", retention=log_retention(log_retention_days),
                                  removal_policy=RemovalPolicy.DESTROY)
        self.vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs))
        self.database_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        self.function_subnets = ec2.SubnetSelection(
            subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS if with_nat else ec2.SubnetType.PRIVATE_ISOLATED)
        if not with_nat:
            for name, service in INTERFACE_ENDPOINTS.items():
                self.vpc.add_interface_endpoint(name, service=service, subnets=self.function_subnets,
                                                private_dns_enabled=True)

