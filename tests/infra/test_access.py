"""Researchers' read-only way in: a Session Manager port forward through an instance with no open port, pinned by
its own session document to the database's endpoint and port, and the analysts' managed policy that allows that and
nothing more, in both profiles."""

from __future__ import annotations

import json

import pytest

from tests.iam_policy import allows
from tests.infra.conftest import resolve
from tests.infra.templates import REGION, resources

PROFILES = ["templates", "lean_templates"]


@pytest.mark.parametrize("fixture", PROFILES)
def test_the_port_forward_reaches_the_database_endpoint_and_port_only(request, fixture):
    """The session document fixes the host (the database's endpoint) and the port (5432); the caller chooses only
    the port on their own machine. The AWS-managed remote-host document would let them reach any host and port the
    instance can, its metadata service included."""
    data, _ = request.getfixturevalue(fixture)
    template = data.to_json()
    [(document_id, document)] = resources(data, "AWS::SSM::Document").items()
    props = document["Properties"]
    assert props["DocumentType"] == "Session"
    content = props["Content"]
    assert content["sessionType"] == "Port" and set(content["parameters"]) == {"localPortNumber"}
    assert content["properties"]["portNumber"] == "5432" and content["properties"]["type"] == "LocalPortForwarding"
    [database] = [
        k
        for k, r in template["Resources"].items()
        if r["Type"] in ("AWS::RDS::DBInstance", "AWS::RDS::DBCluster") and "Writer" not in k
    ]
    assert json.dumps(content["properties"]["host"]).startswith(f'{{"Fn::GetAtt": ["{database}", "Endpoint')
    forward = json.dumps(template["Outputs"]["PsqlPortForward"]["Value"])
    assert document_id in forward and "AWS-StartPortForwardingSessionToRemoteHost" not in forward
    assert "localPortNumber=5432" in forward


@pytest.mark.parametrize("fixture", PROFILES)
def test_the_bastion_has_no_open_port(request, fixture):
    data, _ = request.getfixturevalue(fixture)
    [bastion] = resources(data, "AWS::EC2::Instance").values()
    assert bastion["Properties"]["InstanceType"] == "t4g.nano"
    groups = json.dumps(bastion["Properties"].get("SecurityGroupIds") or bastion["Properties"]["NetworkInterfaces"])
    opened = [
        r["Properties"]
        for r in resources(data, "AWS::EC2::SecurityGroupIngress").values()
        if json.dumps(r["Properties"]["GroupId"]) in groups
    ]
    assert not opened  # Session Manager only (the NAT instance's forwarding rules are its group's own, from the VPC)


@pytest.mark.parametrize("fixture", PROFILES)
def test_researchers_get_a_managed_policy_for_the_read_only_path_and_nothing_more(request, fixture):
    """AnalystPolicyArn: a Session Manager session on this instance with this stack's port-forward document only
    (``ssm:SessionDocumentAccessCheck``: never the default shell document), ending or resuming only one's own
    sessions, the read-only role's secret (not the owner's nor the application role's) and this stack's outputs."""
    data, _ = request.getfixturevalue(fixture)
    template = data.to_json()
    [(policy_id, policy)] = resources(data, "AWS::IAM::ManagedPolicy").items()
    assert template["Outputs"]["AnalystPolicyArn"]["Value"] == {"Ref": policy_id}
    statements = resolve(policy["Properties"]["PolicyDocument"]["Statement"], template, REGION, stack="OrioleData")
    [instance] = resources(data, "AWS::EC2::Instance")
    [document] = resources(data, "AWS::SSM::Document")
    instance_arn = f"arn:aws:ec2:{REGION}:123456789012:instance/{resolve({'Ref': instance}, template, REGION)}"
    document_arn = f"arn:aws:ssm:{REGION}:123456789012:document/{document}"
    checked = {"ssm:SessionDocumentAccessCheck": "true"}
    assert allows(statements, "ssm:StartSession", instance_arn, checked)
    assert allows(statements, "ssm:StartSession", document_arn, checked)
    for other in (
        f"arn:aws:ssm:{REGION}::document/AWS-StartPortForwardingSessionToRemoteHost",
        f"arn:aws:ssm:{REGION}::document/SSM-SessionManagerRunShell",
        instance_arn.replace("/i-", "/i-0"),
    ):
        assert not allows(statements, "ssm:StartSession", other, checked), other
    own = [s for s in statements if s["Action"] == ["ssm:ResumeSession", "ssm:TerminateSession"]]
    assert own[0]["Condition"] == {"StringEquals": {"ssm:resourceTag/aws:ssmmessages:session-id": "${aws:userid}"}}
    [reader] = [k for k in resources(data, "AWS::SecretsManager::Secret") if k.startswith("DatabaseReaderSecret")]
    reader_arn = resolve({"Ref": reader}, template, REGION)
    assert allows(statements, "secretsmanager:GetSecretValue", reader_arn)
    for secret in resources(data, "AWS::SecretsManager::Secret"):
        if secret != reader:
            assert not allows(statements, "secretsmanager:GetSecretValue", resolve({"Ref": secret}, template, REGION))
    assert {a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])} == {
        "ssm:StartSession",
        "ssm:TerminateSession",
        "ssm:ResumeSession",
        "ssmmessages:OpenDataChannel",
        "secretsmanager:GetSecretValue",
        "secretsmanager:DescribeSecret",
        "cloudformation:DescribeStacks",
    }
