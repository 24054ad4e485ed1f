"""The VPC: its egress modes (a NAT gateway, the lean profile's NAT instance, or interface endpoints), the same
subnets whatever the mode, the AZs a context setting, what the functions may send out, and instances that a
redeploy never replaces for a newer image."""

from __future__ import annotations

import json

import pytest

from tests.infra.conftest import OLLAMA_ENDPOINTS, synthesize
from tests.infra.templates import data_template, one, resources


def test_egress_is_a_context_option():
    template = data_template(egress="endpoints")
    assert not resources(template, "AWS::EC2::NatGateway")
    services = {
        json.dumps(r["Properties"]["ServiceName"]) for r in resources(template, "AWS::EC2::VPCEndpoint").values()
    }
    for service in ("ssm", "secretsmanager", "states", "bedrock-runtime"):
        assert any(f".{service}" in s for s in services), service


def test_switching_egress_keeps_the_database_subnets():
    """The same subnet groups in every mode: switching egress after the first deploy changes routes and
    endpoints, never the subnets the database (or its proxy) lives in. The endpoints mode keeps the bastion,
    reached through Session Manager's own endpoints, for psql."""

    def database_subnets(egress: str):
        data = data_template(egress=egress)
        group = one(data, "AWS::RDS::DBSubnetGroup")["SubnetIds"]
        subnets = {ref["Ref"]: resources(data, "AWS::EC2::Subnet")[ref["Ref"]]["Properties"] for ref in group}
        return group, {k: (v["CidrBlock"], json.dumps(v["AvailabilityZone"])) for k, v in subnets.items()}, data

    nat_group, nat_subnets, _ = database_subnets("nat")
    for egress in ("endpoints", "nat-instance"):
        group, subnets, _template = database_subnets(egress)
        assert group == nat_group and subnets == nat_subnets, egress
    _, _, endpoints = database_subnets("endpoints")
    assert resources(endpoints, "AWS::EC2::Instance")  # the bastion stays
    services = json.dumps(
        [r["Properties"]["ServiceName"] for r in resources(endpoints, "AWS::EC2::VPCEndpoint").values()]
    )
    assert ".ssmmessages" in services and ".ec2messages" in services


def test_the_lean_profile_goes_out_through_one_nat_instance_that_is_also_the_bastion(lean_templates):
    """No NAT gateway ($33 a month and its address): one t4g.nano NAT instance with a public address in the first
    public subnet, the private subnets' default route; Session Manager's agent may register on it, and it is the
    only instance (no separate bastion)."""
    data, _ = lean_templates
    assert not resources(data, "AWS::EC2::NatGateway") and not resources(data, "AWS::EC2::EIP")
    [(nat_id, nat)] = resources(data, "AWS::EC2::Instance").items()
    props = nat["Properties"]
    assert props["InstanceType"] == "t4g.nano" and props["SourceDestCheck"] is False
    [interface] = props["NetworkInterfaces"]
    assert interface["AssociatePublicIpAddress"] is True and "publicSubnet1" in interface["SubnetId"]["Ref"]
    routes = [r["Properties"] for r in resources(data, "AWS::EC2::Route").values() if "InstanceId" in r["Properties"]]
    assert len(routes) == 2 and all(r["InstanceId"] == {"Ref": nat_id} for r in routes)
    assert all(r["DestinationCidrBlock"] == "0.0.0.0/0" for r in routes)
    role = json.dumps(
        [p["Properties"] for p in resources(data, "AWS::IAM::Policy").values() if "NatInstance" in json.dumps(p)]
    )
    assert "ssm:UpdateInstanceInformation" in role and "ssmmessages:*" in role


def test_the_nat_instance_forwards_only_what_the_functions_may_send(lean_templates):
    """It lets in, from the VPC only, HTTPS and the allow-listed model servers' ports; the functions' own group
    allows nothing else out (apart from PostgreSQL to the database)."""
    data, _ = lean_templates
    [group] = [
        g["Properties"] for k, g in resources(data, "AWS::EC2::SecurityGroup").items() if "NatSecurityGroup" in k
    ]
    assert {(r["CidrIp"], r["FromPort"], r["ToPort"]) for r in group["SecurityGroupIngress"]} == {
        ("10.0.0.0/16", 443, 443),
        ("10.0.0.0/16", 11434, 11434),  # OLLAMA_ENDPOINTS' port
    }


@pytest.mark.parametrize("fixture", ["templates", "lean_templates"])
def test_the_functions_may_send_https_and_the_model_servers_ports_only(request, fixture):
    """The functions' security group: HTTPS (every AWS API, https model servers) and each allow-listed model
    server's own port anywhere, PostgreSQL to the database (or its proxy), nothing else."""
    data, _ = request.getfixturevalue(fixture)
    [clients] = [
        g["Properties"]
        for k, g in resources(data, "AWS::EC2::SecurityGroup").items()
        if k.startswith("DatabaseClients")
    ]
    assert {(r["CidrIp"], r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in clients["SecurityGroupEgress"]} == {
        ("0.0.0.0/0", "tcp", 443, 443),
        ("0.0.0.0/0", "tcp", 11434, 11434),
    }
    assert ":11434" in OLLAMA_ENDPOINTS[0]
    to_database = [
        r["Properties"]
        for r in resources(data, "AWS::EC2::SecurityGroupEgress").values()
        if r["Properties"]["GroupId"]["Fn::GetAtt"][0].startswith("DatabaseClients")
    ]
    assert to_database and all(r["FromPort"] == r["ToPort"] == 5432 for r in to_database)


def test_a_plain_http_model_server_opens_its_own_port_and_nothing_more():
    data = data_template(openaiBaseUrls='["http://gpu-box.lab.example:8000/v1", "https://api.example/v1"]')
    [clients] = [
        g["Properties"]
        for k, g in resources(data, "AWS::EC2::SecurityGroup").items()
        if k.startswith("DatabaseClients")
    ]
    assert {r["FromPort"] for r in clients["SecurityGroupEgress"]} == {443, 8000}


@pytest.mark.parametrize("fixture", ["templates", "lean_templates"])
def test_the_default_security_group_allows_nothing(request, fixture):
    """restrictDefaultSecurityGroup: the VPC's default group loses its rules (a resource put in it by mistake
    reaches nothing)."""
    data, _ = request.getfixturevalue(fixture)
    assert resources(data, "Custom::VpcRestrictDefaultSG")


@pytest.mark.parametrize("fixture", ["templates", "lean_templates"])
def test_instances_launch_from_a_template_that_names_the_image_parameter_not_an_image(request, fixture):
    """A redeploy never replaces the bastion (or the NAT instance) for a newer image: the instance names no image;
    its launch template names Amazon Linux 2023's parameter, which EC2 resolves when it launches the instance, so
    the template is the same from one deploy to the next, whatever AWS published in between. The template also
    encrypts the root volume and requires IMDSv2, and carries no fixed name (two deployments fit)."""
    data, _ = request.getfixturevalue(fixture)
    template = data.to_json()
    assert not [p for p in template.get("Parameters", {}) if "ami" in p.lower()]  # no deploy-time lookup
    for instance in resources(data, "AWS::EC2::Instance").values():
        props = instance["Properties"]
        assert "ImageId" not in props and "BlockDeviceMappings" not in props
        launch = template["Resources"][props["LaunchTemplate"]["LaunchTemplateId"]["Ref"]]["Properties"]
        specification = launch["LaunchTemplateData"]
        assert (
            specification["ImageId"]
            == "resolve:ssm:/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-arm64"
        )
        assert specification["MetadataOptions"] == {"HttpTokens": "required"}
        [root] = specification["BlockDeviceMappings"]
        assert root["Ebs"] == {"Encrypted": True, "VolumeSize": 8, "VolumeType": "gp3"}
        assert "LaunchTemplateName" not in launch


def test_the_availability_zones_are_a_context_setting():
    """``availabilityZones``: the VPC's subnets in the two named AZs instead of the region's first two; anything
    but two AZs of one region is refused at synth."""
    data = data_template(availabilityZones="us-east-1b,us-east-1d")
    zones = {json.dumps(s["Properties"]["AvailabilityZone"]) for s in resources(data, "AWS::EC2::Subnet").values()}
    assert zones == {'"us-east-1b"', '"us-east-1d"'}
    for wrong in ("us-east-1a", "us-east-1a,eu-west-1b", "us-east-1a,us-east-1a", "us-east-1,us-east-1b"):
        with pytest.raises(ValueError, match="availabilityZones must be two availability zones of one region"):
            synthesize(availabilityZones=wrong)
