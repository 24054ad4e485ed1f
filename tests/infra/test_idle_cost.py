"""The idle monthly cost, computed from each profile's synthesized templates with the price table kept in the repo
(infra/aws_prices.toml): the lean profile under $10, the standard one's line items as the cost page gives them, and
a resource the script cannot price refused rather than counted as free."""

from __future__ import annotations

import tomllib

import pytest

from infra import idle_cost
from infra.idle_cost import FREE_WHEN_IDLE, PRICERS, Prices, UnpricedResource, total


def priced(templates, names=("OrioleData", "OrioleOrchestrator")) -> list[idle_cost.LineItem]:
    return idle_cost.idle_cost({name: t.to_json() for name, t in zip(names, templates, strict=True)})


def by_item(items) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in items:
        found[item.item] = round(found.get(item.item, 0) + item.usd_per_month, 2)
    return found


def test_the_lean_profile_idles_under_ten_dollars_a_month(lean_templates):
    """The NAT instance (its hours, volume and address), three secrets, seven alarm metrics, a new Aurora volume
    and the reconciler's schedule; no NAT gateway, no proxy, no database hours (paused at 0 ACU), no dashboard."""
    items = priced(lean_templates)
    assert by_item(items) == {
        "t4g.nano instance": 3.07,
        "its 8 GB gp3 volume": 0.64,
        "its public IPv4 address": 3.65,
        "Secrets Manager secret": 1.20,
        "Aurora storage": 0.10,
        "Aurora Serverless v2 writer": 0.0,
        "rate(15 minutes) of a function": 0.02,
        "CloudWatch alarm": 0.70,
    }
    assert total(items) == 9.38 < 10


def test_the_standard_profile_costs_what_the_cost_page_says(templates):
    items = priced(templates)
    assert by_item(items) == {
        "NAT gateway": 32.85,
        "public IPv4 address": 3.65,
        "RDS db.t4g.small": 23.36,
        "its 20 GB gp3 storage": 2.30,
        "RDS Proxy": 21.90,
        "t4g.nano instance": 3.07,
        "its 8 GB gp3 volume": 0.64,
        "Secrets Manager secret": 1.20,
        "CloudWatch alarm": 2.50,  # 25 alarm metrics: 16 of them the functions' throttles
        "CloudWatch dashboard": 3.00,
        "rate(15 minutes) of a function": 0.02,
    }
    assert total(items) == 94.49


def test_interface_endpoints_are_priced_per_az_hour():
    from aws_cdk.assertions import Template

    from tests.infra.conftest import synthesize

    items = priced([Template.from_stack(stack) for stack in synthesize(egress="endpoints")])
    endpoints = [i for i in items if i.item == "interface endpoint"]
    assert len(endpoints) == 6 and all(i.usd_per_month == 14.60 for i in endpoints)  # 2 AZ x $0.01 x 730 h
    assert "NAT gateway" not in by_item(items)


def test_a_resource_the_script_does_not_know_is_refused_not_free():
    template = {"Resources": {"Cache": {"Type": "AWS::ElastiCache::CacheCluster", "Properties": {}}}}
    with pytest.raises(UnpricedResource, match="no price for AWS::ElastiCache::CacheCluster"):
        idle_cost.idle_cost({"Stack": template})
    sized = {"Resources": {"Box": {"Type": "AWS::EC2::Instance", "Properties": {"InstanceType": "m7g.large"}}}}
    with pytest.raises(UnpricedResource, match=r"ec2_hour has no price for 'm7g\.large'"):
        idle_cost.idle_cost({"Stack": sized})
    assert not set(PRICERS) & FREE_WHEN_IDLE


def test_every_price_names_its_source_and_when_it_was_checked():
    table = tomllib.loads(idle_cost.PRICES.read_text())
    assert table["region"] == "us-east-1" and table["hours_per_month"] == 730

    def entries(node):
        if "usd" in node:
            yield node
        else:
            for value in node.values():
                yield from entries(value)

    found = list(entries(table["prices"]))
    assert found and all(e["source"].startswith("https://aws.amazon.com/") and e["checked"] for e in found)
    assert Prices.load().usd("ec2_hour", "t4g.nano") == 0.0042
