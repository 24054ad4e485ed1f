"""The catalog parameters' values a deploy writes (CDK's provider framework calls it; shipped inline, boto3 only):
for each parameter its new default, unless a researcher set another value (``oriole params set``), which stays.

A value is the researcher's when it differs from the default the previous deploy wrote (``OldResourceProperties``):
a deploy that changes a default then moves only the parameters still at the old one. Before any deploy of this
resource knew the defaults (its create), an existing value is kept as it is. A renamed parameter's value is read
from its old name (``PreviousNames``) until the new name exists.
"""

import json
from typing import Any

import boto3

BATCH = 10  # names per GetParameters call
MOST_BYTES = 3500  # of the values: CloudFormation takes a custom resource's response up to 4 KB


def stored(ssm: Any, names: list[str]) -> dict[str, str]:
    """The values of ``names`` that exist, by name."""
    found: dict[str, str] = {}
    for first in range(0, len(names), BATCH):
        answer = ssm.get_parameters(Names=names[first : first + BATCH])
        found.update({p["Name"]: p["Value"] for p in answer["Parameters"]})
    return found


def values(props: dict[str, Any], old: dict[str, Any], current: dict[str, str]) -> dict[str, str]:
    """Each key's value to deploy: the researcher's where they set one, else the new default."""
    names, defaults, before = props["Names"], props["Defaults"], old.get("Defaults", {})
    previous = props.get("PreviousNames", {})  # a renamed parameter's old name: its value, until the new one exists
    kept: dict[str, str] = {}
    for key, name in names.items():
        value = current.get(name, current.get(previous.get(key, "")))
        researchers = value is not None and (key not in before or value != before[key])
        kept[key] = value if value is not None and researchers else str(defaults[key])
    return kept


def handler(event: dict[str, Any], context: Any, ssm: Any = None) -> dict[str, Any]:
    physical = event.get("PhysicalResourceId") or "parameter-values"
    if event["RequestType"] == "Delete":  # the parameters go with their own resources
        return {"PhysicalResourceId": physical}
    props = event["ResourceProperties"]
    current = stored(ssm or boto3.client("ssm"), [*props["Names"].values(), *props.get("PreviousNames", {}).values()])
    data = values(props, event.get("OldResourceProperties", {}), current)
    size = len(json.dumps(data))
    if size > MOST_BYTES:
        longest = max(data, key=lambda key: len(data[key]))
        raise ValueError(
            f"the parameters' values take {size} bytes, more than a deploy can keep ({MOST_BYTES}): shorten "
            f"{props['Names'][longest]} (`oriole params set {longest} ... --aws`) and deploy again"
        )
    return {"PhysicalResourceId": physical, "Data": data}
