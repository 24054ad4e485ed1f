"""What a deployment costs a month before any experiment runs, computed from its synthesized templates and the price
table kept beside this file (``aws_prices.toml``: us-east-1 list prices, each with its source and the date it was
checked).

    python -m infra.idle_cost cdk.out            # every *.template.json of a cloud assembly
    python -m infra.idle_cost OrioleData.template.json OrioleOrchestrator.template.json --json

``make idle-cost`` synthesizes the standard profile into ``cdk.out`` and prices it (``make idle-cost PROFILE=lean``
the lean one). Every resource of a template is priced or known to cost nothing while idle (``FREE_WHEN_IDLE``: it
is billed by use, or not at all); a resource type the script does not know is an error, so a new construct cannot
slip past the cost page. What the template cannot tell (how big an Aurora volume is, how long the scheduled
reconciler runs) comes from the table's ``assumptions``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

PRICES = Path(__file__).with_name("aws_prices.toml")
Resource = Mapping[str, Any]
# Billed by use (requests, GB, transitions, invocations), or never: nothing while the deployment is idle.
FREE_WHEN_IDLE = frozenset(
    {
        "AWS::EC2::FlowLog",  # log ingestion by traffic
        "AWS::EC2::InternetGateway",
        "AWS::EC2::LaunchTemplate",
        "AWS::EC2::Route",
        "AWS::EC2::RouteTable",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::SecurityGroupEgress",
        "AWS::EC2::SecurityGroupIngress",
        "AWS::EC2::Subnet",
        "AWS::EC2::SubnetRouteTableAssociation",
        "AWS::EC2::VPC",
        "AWS::EC2::VPCGatewayAttachment",
        "AWS::Budgets::Budget",  # without actions
        "AWS::IAM::InstanceProfile",
        "AWS::IAM::ManagedPolicy",
        "AWS::IAM::Policy",
        "AWS::IAM::Role",
        "AWS::Lambda::EventInvokeConfig",
        "AWS::Lambda::Function",  # by invocation: the scheduled ones are priced with their rule
        "AWS::Lambda::Permission",
        "AWS::Lambda::Version",
        "AWS::Logs::LogGroup",  # by GB ingested and stored
        "AWS::RDS::DBClusterParameterGroup",
        "AWS::RDS::DBParameterGroup",
        "AWS::RDS::DBProxyTargetGroup",  # the proxy is priced by its target
        "AWS::RDS::DBSubnetGroup",
        "AWS::SNS::Topic",
        "AWS::SNS::TopicPolicy",
        "AWS::SQS::Queue",
        "AWS::SQS::QueuePolicy",
        "AWS::SSM::Document",
        "AWS::SecretsManager::SecretTargetAttachment",
        "AWS::StepFunctions::StateMachine",  # by state transition
        "AWS::CDK::Metadata",
        "Custom::DeletionProtection",  # custom resources run on deploy only
        "Custom::ParameterValues",
        "Custom::LogRetention",
        "Custom::Trigger",
        "Custom::VpcRestrictDefaultSG",
    }
)
VCPUS = {"db.t4g.micro": 2, "db.t4g.small": 2, "db.t4g.medium": 2}  # RDS Proxy bills the target's vCPUs, at least 2


@dataclass(frozen=True)
class LineItem:
    """One priced resource: what it is, its monthly cost, and the arithmetic that gave it."""

    stack: str
    resource: str  # the logical id
    item: str
    usd_per_month: float
    basis: str


@dataclass(frozen=True)
class Prices:
    table: Mapping[str, Any]
    hours: float
    assumptions: Mapping[str, float]

    @classmethod
    def load(cls, path: Path = PRICES) -> Prices:
        data = tomllib.loads(path.read_text())
        return cls(data["prices"], float(data["hours_per_month"]), data["assumptions"])

    def usd(self, name: str, kind: str | None = None) -> float:
        """A price (``kind``: the instance class or type, for the prices listed by one)."""
        entry = self.table[name]
        if kind is not None:
            if kind not in entry:
                raise UnpricedResource(f"{name} has no price for {kind!r}: add it to {PRICES.name}")
            entry = entry[kind]
        return float(entry["usd"])


class UnpricedResource(ValueError):
    """A resource the script cannot price: a type it does not know, or a size the table lacks."""


class Template:
    """One stack's template, its resources by logical id."""

    def __init__(self, stack: str, body: Mapping[str, Any]):
        self.stack, self.resources = stack, body.get("Resources", {})

    def referenced(self, value: Any) -> Resource:
        """The resource a ``Ref`` or ``Fn::GetAtt`` names."""
        logical_id = value["Ref"] if "Ref" in value else value["Fn::GetAtt"][0]
        resource: Resource = self.resources[logical_id]
        return resource

    def of_type(self, kind: str) -> Iterator[tuple[str, Resource]]:
        return ((k, r) for k, r in self.resources.items() if r["Type"] == kind)


Pricer = Callable[[Template, str, Resource, Prices], list[LineItem]]


def _item(template: Template, logical_id: str, item: str, usd: float, basis: str) -> LineItem:
    return LineItem(template.stack, logical_id, item, round(usd, 2), basis)


def nat_gateway(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    hour = prices.usd("nat_gateway_hour")
    return [_item(template, logical_id, "NAT gateway", hour * prices.hours, f"${hour}/h x {prices.hours:g} h")]


def elastic_ip(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    hour = prices.usd("public_ipv4_hour")
    return [_item(template, logical_id, "public IPv4 address", hour * prices.hours, f"${hour}/h x {prices.hours:g} h")]


def instance(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    """An EC2 instance: its hours, its volumes (its own or its launch template's), a public address it asks for."""
    props = resource["Properties"]
    kind = props["InstanceType"]
    hour = prices.usd("ec2_hour", kind)
    items = [_item(template, logical_id, f"{kind} instance", hour * prices.hours, f"${hour}/h x {prices.hours:g} h")]
    devices = props.get("BlockDeviceMappings")
    if devices is None and "LaunchTemplate" in props:
        launch = template.referenced(props["LaunchTemplate"]["LaunchTemplateId"])
        devices = launch["Properties"]["LaunchTemplateData"].get("BlockDeviceMappings", [])
    for device in devices or []:
        ebs = device.get("Ebs", {})
        if ebs.get("VolumeType", "gp3") != "gp3":
            raise UnpricedResource(f"{logical_id}: volume type {ebs['VolumeType']} has no price here")
        size, price = float(ebs["VolumeSize"]), prices.usd("ebs_gp3_gb_month")
        items.append(
            _item(template, logical_id, f"its {size:g} GB gp3 volume", size * price, f"{size:g} GB x ${price}")
        )
    if any(n.get("AssociatePublicIpAddress") for n in props.get("NetworkInterfaces", [])):
        items += [
            LineItem(i.stack, i.resource, f"its {i.item}", i.usd_per_month, i.basis)
            for i in elastic_ip(template, logical_id, resource, prices)
        ]
    return items


def database_instance(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    """An RDS instance (its hours and storage), or an Aurora Serverless v2 writer (its cluster's least capacity)."""
    props = resource["Properties"]
    kind = props["DBInstanceClass"]
    if kind == "db.serverless":
        cluster = template.referenced(props["DBClusterIdentifier"])["Properties"]
        least = float(cluster["ServerlessV2ScalingConfiguration"]["MinCapacity"])
        acu = prices.usd("aurora_acu_hour")
        basis = f"{least:g} ACU x ${acu}/h x {prices.hours:g} h" + (": paused when idle" if least == 0 else "")
        return [_item(template, logical_id, "Aurora Serverless v2 writer", least * acu * prices.hours, basis)]
    hour = prices.usd("rds_hour", kind)
    items = [_item(template, logical_id, f"RDS {kind}", hour * prices.hours, f"${hour}/h x {prices.hours:g} h")]
    if props.get("StorageType", "gp2") != "gp3":
        raise UnpricedResource(f"{logical_id}: RDS storage type {props.get('StorageType', 'gp2')} has no price here")
    size, price = float(props["AllocatedStorage"]), prices.usd("rds_gp3_gb_month")
    items.append(_item(template, logical_id, f"its {size:g} GB gp3 storage", size * price, f"{size:g} GB x ${price}"))
    return items


def database_cluster(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    size, price = prices.assumptions["aurora_storage_gb"], prices.usd("aurora_storage_gb_month")
    basis = f"{size:g} GB (assumed: a new deployment's volume) x ${price}"
    return [_item(template, logical_id, "Aurora storage", size * price, basis)]


def proxy(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    """RDS Proxy: the vCPUs of the instances of its target group (at least 2)."""
    groups = [
        g["Properties"]
        for _, g in template.of_type("AWS::RDS::DBProxyTargetGroup")
        if g["Properties"]["DBProxyName"] == {"Ref": logical_id}
    ]
    classes = [
        template.referenced(target)["Properties"]["DBInstanceClass"]
        for group in groups
        for target in group.get("DBInstanceIdentifiers", [])
    ]
    unknown = [kind for kind in classes if kind not in VCPUS]
    if unknown or not classes:
        raise UnpricedResource(f"{logical_id}: the vCPUs of its target {unknown or 'nothing'} are not known here")
    vcpus, price = max(2, sum(VCPUS[kind] for kind in classes)), prices.usd("rds_proxy_vcpu_hour")
    basis = f"{vcpus} vCPUs x ${price}/h x {prices.hours:g} h"
    return [_item(template, logical_id, "RDS Proxy", vcpus * price * prices.hours, basis)]


def secret(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    price = prices.usd("secret_month")
    return [_item(template, logical_id, "Secrets Manager secret", price, f"${price} a month")]


def alarm(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    metrics = resource["Properties"].get("Metrics")
    count = sum(1 for m in metrics if "MetricStat" in m) if metrics else 1
    price = prices.usd("alarm_metric_month")
    return [_item(template, logical_id, "CloudWatch alarm", count * price, f"{count} metric(s) x ${price}")]


def dashboard(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    price = prices.usd("dashboard_month")
    return [
        _item(template, logical_id, "CloudWatch dashboard", price, f"${price} a month (free in an account's first 3)")
    ]


def endpoint(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    props = resource["Properties"]
    if props.get("VpcEndpointType", "Gateway") != "Interface":
        return []
    zones, hour = len(props["SubnetIds"]), prices.usd("interface_endpoint_hour")
    basis = f"{zones} AZ x ${hour}/h x {prices.hours:g} h"
    return [_item(template, logical_id, "interface endpoint", zones * hour * prices.hours, basis)]


def parameter(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    if resource["Properties"].get("Tier", "Standard") != "Advanced":
        return []
    price = prices.usd("advanced_parameter_month")
    return [_item(template, logical_id, "advanced parameter", price, f"${price} a month")]


RATE = re.compile(r"^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$")
PER_MONTH = {"minute": 60.0, "hour": 1.0, "day": 1 / 24}  # runs per hour, per unit


def schedule(template: Template, logical_id: str, resource: Resource, prices: Prices) -> list[LineItem]:
    """A rule on a schedule runs its functions all month, whatever else runs: their invocations."""
    props = resource["Properties"]
    expression = props.get("ScheduleExpression")
    if expression is None:
        return []  # a rule on events runs only when something happened
    match = RATE.match(expression)
    if match is None:
        raise UnpricedResource(f"{logical_id}: schedule {expression!r} is not a rate(...) this script reads")
    runs = PER_MONTH[match[2].rstrip("s")] / int(match[1]) * prices.hours
    items = []
    for target in props.get("Targets", []):
        function = template.referenced(target["Arn"])["Properties"]
        seconds, memory = prices.assumptions["scheduled_seconds"], function.get("MemorySize", 128) / 1024
        compute, request = prices.usd("lambda_arm_gb_second"), prices.usd("lambda_request")
        usd = runs * (seconds * memory * compute + request)
        basis = f"{runs:g} runs x ({seconds:g} s x {memory:g} GB x ${compute} + ${request})"
        items.append(_item(template, logical_id, f"{expression} of a function", usd, basis))
    return items


PRICERS: dict[str, Pricer] = {
    "AWS::EC2::NatGateway": nat_gateway,
    "AWS::EC2::EIP": elastic_ip,
    "AWS::EC2::Instance": instance,
    "AWS::EC2::VPCEndpoint": endpoint,
    "AWS::RDS::DBInstance": database_instance,
    "AWS::RDS::DBCluster": database_cluster,
    "AWS::RDS::DBProxy": proxy,
    "AWS::SecretsManager::Secret": secret,
    "AWS::CloudWatch::Alarm": alarm,
    "AWS::CloudWatch::Dashboard": dashboard,
    "AWS::SSM::Parameter": parameter,
    "AWS::Events::Rule": schedule,
}


def idle_cost(templates: Mapping[str, Mapping[str, Any]], prices: Prices | None = None) -> list[LineItem]:
    """Every line item of the templates (stack name -> template body) that costs something while idle."""
    prices = prices or Prices.load()
    items: list[LineItem] = []
    for stack, body in templates.items():
        template = Template(stack, body)
        for logical_id, resource in template.resources.items():
            kind = resource["Type"]
            if kind in PRICERS:
                items += PRICERS[kind](template, logical_id, resource, prices)
            elif kind not in FREE_WHEN_IDLE:
                raise UnpricedResource(f"{stack} {logical_id}: no price for {kind} (infra/idle_cost.py)")
    return [i for i in items if i.usd_per_month > 0 or "paused" in i.basis]


def total(items: Sequence[LineItem]) -> float:
    return round(sum(i.usd_per_month for i in items), 2)


def read_templates(paths: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """The templates of the paths given: template files, or cloud assemblies (every ``*.template.json``)."""
    files = [f for p in paths for f in (sorted(p.glob("*.template.json")) if p.is_dir() else [p])]
    if not files:
        raise FileNotFoundError(f"no template in {', '.join(map(str, paths))}: run `cdk synth` first")
    return {f.name.removesuffix(".template.json"): json.loads(f.read_text()) for f in files}


def table(items: Sequence[LineItem]) -> str:
    width = max(len(i.item) for i in items)
    lines = [f"{i.stack:<22} {i.item:<{width}} {i.usd_per_month:>8.2f}  {i.basis}" for i in items]
    return "\n".join([*lines, f"{'total a month (730 h, us-east-1 list prices)':<{23 + width}} {total(items):>8.2f}"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.idle_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="a cloud assembly (cdk.out) or template files")
    parser.add_argument("--json", action="store_true", help="one JSON object: the items and the total")
    args = parser.parse_args(argv)
    items = idle_cost(read_templates(args.paths))
    if args.json:
        print(json.dumps({"items": [asdict(i) for i in items], "totalUsdPerMonth": total(items)}, indent=2))
    else:
        print(table(items))
    return 0


if __name__ == "__main__":
    sys.exit(main())
