"""The catalog parameters' values a deploy writes (infra/parameter_values_handler.py), against Parameter Store's
real client (botocore's Stubber): a new default reaches a parameter still at the old one, never one a researcher
set (``oriole params set``); the answer fits in a custom resource's 4 KB response."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from infra import parameter_values_handler as handler
from oriole import catalog

NAMES = {"maxMoves": "/oriole/experiments/max-moves", "temperature": "/oriole/ollama/temperature"}


@pytest.fixture
def ssm():
    client = boto3.client("ssm", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def stored(stub, **values: str) -> None:
    found = [{"Name": NAMES[k], "Value": v, "Type": "String"} for k, v in values.items()]
    stub.add_response("get_parameters", {"Parameters": found}, {"Names": list(NAMES.values())})


def event(kind: str, defaults: dict, old: dict | None = None) -> dict:
    found = {"RequestType": kind, "ResourceProperties": {"Names": NAMES, "Defaults": defaults}}
    if old is not None:
        found |= {"OldResourceProperties": {"Names": NAMES, "Defaults": old}, "PhysicalResourceId": "parameter-values"}
    return found


def test_a_new_default_moves_only_the_parameters_still_at_the_old_one(ssm):
    client, stub = ssm
    stored(stub, maxMoves="2000", temperature="0.2")  # a researcher set maxMoves; temperature is the old default
    answer = handler.handler(
        event("Update", {"maxMoves": "10000", "temperature": "0.3"}, {"maxMoves": "10000", "temperature": "0.2"}),
        None,
        client,
    )
    assert answer == {"PhysicalResourceId": "parameter-values", "Data": {"maxMoves": "2000", "temperature": "0.3"}}


def test_a_first_deploy_writes_the_defaults_and_keeps_what_exists(ssm):
    client, stub = ssm
    stored(stub, temperature="0.7")
    answer = handler.handler(event("Create", {"maxMoves": "10000", "temperature": "0.2"}), None, client)
    assert answer["Data"] == {"maxMoves": "10000", "temperature": "0.7"}


def test_a_renamed_parameter_keeps_the_value_a_researcher_set_under_its_old_name(ssm):
    """The first deploy after a rename reads the old name too; CloudFormation deletes the old parameter after."""
    client, stub = ssm
    old, new = "/oriole/ollama/request-timeout-seconds", "/oriole/models/request-timeout-seconds"
    found = [{"Name": old, "Value": "300", "Type": "String"}, {"Name": NAMES["maxMoves"], "Value": "10000"}]
    stub.add_response("get_parameters", {"Parameters": found}, {"Names": [*NAMES.values(), new, old]})
    names, defaults = {**NAMES, "requestTimeoutSeconds": new}, {"maxMoves": "10000", "requestTimeoutSeconds": "120"}
    properties = {"Names": names, "Defaults": {**defaults, "temperature": "0.2"}}
    request = {
        "RequestType": "Update",
        "PhysicalResourceId": "parameter-values",
        "ResourceProperties": {**properties, "PreviousNames": {"requestTimeoutSeconds": old}},
        "OldResourceProperties": {"Names": {**NAMES, "requestTimeoutSeconds": old}, "Defaults": properties["Defaults"]},
    }
    answer = handler.handler(request, None, client)["Data"]
    assert answer == {"maxMoves": "10000", "temperature": "0.2", "requestTimeoutSeconds": "300"}


def test_the_catalog_names_its_renamed_parameters_old_names_for_the_deploy():
    renamed = {p.key: p.previous_name for p in catalog.CATALOG if p.renamed_from}
    assert renamed == {"requestTimeoutSeconds": "/oriole/ollama/request-timeout-seconds"}
    assert catalog.BY_KEY["requestTimeoutSeconds"].name == "/oriole/models/request-timeout-seconds"


def test_deleting_the_resource_reads_and_writes_nothing(ssm):
    client, _ = ssm
    assert handler.handler({**event("Delete", {}), "PhysicalResourceId": "p"}, None, client) == {
        "PhysicalResourceId": "p"
    }


def test_the_catalog_s_answer_fits_in_a_custom_resource_response_or_says_what_to_shorten(ssm):
    """CloudFormation takes at most 4 KB of a custom resource's response: the catalog's values fit with room (each
    number at 24 characters, each URL at 300); a researcher's 2 KB base URL is refused by name."""
    params = [p for p in catalog.CATALOG if p.overridable]
    typical = {p.key: "x" * (300 if p.max_length else 24) for p in params}
    assert len(json.dumps(typical)) < handler.MOST_BYTES
    client, stub = ssm
    names = {p.key: p.name for p in params}
    long_url = "https://" + "a" * 2040
    huge = {**typical, "baseUrl": long_url, "endpoint": long_url}
    found = [{"Name": names[k], "Value": v, "Type": "String"} for k, v in huge.items()]
    ordered = list(names.values())
    for first in range(0, len(ordered), handler.BATCH):
        batch = ordered[first : first + handler.BATCH]
        stub.add_response("get_parameters", {"Parameters": [f for f in found if f["Name"] in batch]}, {"Names": batch})
    request = {"RequestType": "Create", "ResourceProperties": {"Names": names, "Defaults": typical}}
    with pytest.raises(ValueError, match=r"shorten /oriole/(ollama/endpoint|openai/base-url)"):
        handler.handler(request, None, client)
    assert len(handler.__loader__.get_source(handler.__name__).encode()) < 4096  # type: ignore[union-attr]
