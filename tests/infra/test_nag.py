"""cdk-nag's AwsSolutions pack finds nothing unsuppressed in either profile, nor with an imported database; every
suppression carries its reason (infra/nag.py)."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Annotations, Match

from tests.infra.conftest import synthesize


def findings(stack) -> list[str]:
    annotations = Annotations.from_stack(stack)
    found = [
        *annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")),
        *annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*")),
        *annotations.find_warning("*", Match.string_like_regexp("CdkNagValidationFailure.*")),
    ]
    return [f"{f.id}: {str(f.entry.data)[:160]}" for f in found]


@pytest.mark.parametrize("fixture", ["stacks", "lean_stacks"])
def test_cdk_nag_finds_nothing_unsuppressed(request, fixture):
    for stack in request.getfixturevalue(fixture):
        assert not findings(stack), stack.stack_name


def test_cdk_nag_finds_nothing_unsuppressed_beside_an_imported_database():
    existing = {
        "existingDatabaseSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:research-db-AbCdEf",
        "existingVpcId": "vpc-0a1b2c3d4e5f67890",
        "existingSubnetIds": "subnet-0a1b2c3d4e5f67891,subnet-0a1b2c3d4e5f67892",
        "existingAvailabilityZones": "us-east-1a,us-east-1b",
        "existingSecurityGroupId": "sg-0a1b2c3d4e5f67893",
    }
    for stack in synthesize(**existing):
        assert not findings(stack), stack.stack_name
