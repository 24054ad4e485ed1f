"""Researchers' read-only way into the database: a Session Manager port forward through an instance with no open
port (a small bastion, or the lean profile's NAT instance, which doubles as one), to the database's endpoint and
port only.

The forward runs a session document of this stack (``PortForward.document``) whose host and port are fixed: the
AWS-managed ``AWS-StartPortForwardingSessionToRemoteHost`` would let whoever may start it reach any host and port
the instance can (its metadata service included). The analysts' managed policy (``AnalystPolicyArn``) allows that
document on that instance and nothing else (``ssm:SessionDocumentAccessCheck``: no session without a document they
are allowed), ending or resuming only their own sessions, the read-only role's secret, and the stack's outputs.
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infra.database import PORT, Database
from infra.network import SMALL_INSTANCE, launch_pinned, launch_time_image

LOCAL_PORT = str(PORT)
ANY_PORT = "^([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$"
# What Session Manager's agent needs on the instance (as CDK's BastionHostLinux grants it): its channels accept no
# resource scope.
SESSION_AGENT = iam.PolicyStatement(
    actions=["ssmmessages:*", "ssm:UpdateInstanceInformation", "ec2messages:*"], resources=["*"]
)


def bastion(scope: Construct, database: Database, subnets: ec2.SubnetSelection) -> ec2.Instance:
    """A ``t4g.nano`` with no open port in the functions' subnets, connecting to the database like a function."""
    host = ec2.BastionHostLinux(
        scope,
        "Bastion",
        vpc=database.vpc,
        subnet_selection=subnets,
        instance_type=SMALL_INSTANCE,
        machine_image=launch_time_image(),  # on the template only: launch_pinned
        security_group=database.client_security_group,
    )
    launch_pinned(host.instance)
    return host.instance


def relay(instance: ec2.Instance, database: Database) -> ec2.Instance:
    """Make ``instance`` (the NAT instance) a bastion too: Session Manager's agent may register and open its
    channels, and the database accepts it."""
    instance.add_to_role_policy(SESSION_AGENT)
    for group in instance.connections.security_groups:
        database.allow_client(group, "The bastion (the NAT instance) to PostgreSQL")
    return instance


class PortForward(Construct):
    """The session document pinned to ``database``'s endpoint and port, the analysts' policy, and the command."""

    def __init__(self, scope: Construct, construct_id: str, *, database: Database, instance: ec2.Instance):
        super().__init__(scope, construct_id)
        assert database.endpoint is not None and database.reader_secret is not None  # a database the stack made
        self.document = ssm.CfnDocument(
            self,
            "Document",
            document_type="Session",
            content={
                "schemaVersion": "1.0",
                "description": "Oriole: forward a local port to the experiments database (its endpoint and port only)",
                "sessionType": "Port",
                "parameters": {
                    "localPortNumber": {
                        "type": "String",
                        "description": "The port on your machine that psql connects to",
                        "allowedPattern": ANY_PORT,
                        "default": LOCAL_PORT,
                    }
                },
                "properties": {
                    "type": "LocalPortForwarding",
                    "host": database.endpoint,
                    "portNumber": str(PORT),
                    "localPortNumber": "{{ localPortNumber }}",
                },
            },
        )
        stack = Stack.of(self)
        self.policy = self._analyst_policy(stack, database, instance)
        CfnOutput(
            stack,
            "PsqlPortForward",
            description="Run this, then psql on localhost:5432 (docs: how-to)",
            value=f"aws ssm start-session --target {instance.instance_id} --document-name {self.document.ref} "
            f"--parameters localPortNumber={LOCAL_PORT}",
        )
        CfnOutput(
            stack,
            "AnalystPolicyArn",
            value=self.policy.managed_policy_arn,
            description="Attach to researchers: the port forward and the read-only role's secret",
        )

    def _analyst_policy(self, stack: Stack, database: Database, instance: ec2.Instance) -> iam.ManagedPolicy:
        sessions = stack.format_arn(service="ssm", resource="session", resource_name="*")
        assert database.reader_secret is not None
        return iam.ManagedPolicy(
            self,
            "AnalystAccess",
            description=f"Oriole {stack.stack_name}: psql through the bastion's port forward as the read-only role",
            statements=[
                iam.PolicyStatement(
                    actions=["ssm:StartSession"],
                    resources=[
                        stack.format_arn(service="ec2", resource="instance", resource_name=instance.instance_id),
                        stack.format_arn(service="ssm", resource="document", resource_name=self.document.ref),
                    ],
                    conditions={"BoolIfExists": {"ssm:SessionDocumentAccessCheck": "true"}},
                ),
                iam.PolicyStatement(
                    actions=["ssm:TerminateSession", "ssm:ResumeSession"],
                    resources=[sessions],
                    conditions={"StringEquals": {"ssm:resourceTag/aws:ssmmessages:session-id": "${aws:userid}"}},
                ),
                iam.PolicyStatement(actions=["ssmmessages:OpenDataChannel"], resources=[sessions]),
                iam.PolicyStatement(
                    actions=["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                    resources=[database.reader_secret.secret_arn],
                ),
                iam.PolicyStatement(actions=["cloudformation:DescribeStacks"], resources=[stack.stack_id]),
            ],
        )
