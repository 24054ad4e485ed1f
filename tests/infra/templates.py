"""What the infrastructure tests ask of a synthesized template: its resources by type, a function's properties and
environment by its construct name, a role's statements, a state machine by its flow, the alarms' metrics, the
triggers, and the names a deployment claims in its account and region."""

from __future__ import annotations

import json
import re

from tests.infra.conftest import synthesize

REGION = "eu-west-1"  # where the tests resolve a template's intrinsics


def resources(template, kind: str) -> dict[str, dict]:
    return {k: v for k, v in template.to_json()["Resources"].items() if v["Type"] == kind}


def one(template, kind: str) -> dict:
    [value] = resources(template, kind).values()
    return value["Properties"]


def state_machine(template, flow: str) -> dict:
    """The properties of the state machine of one flow (named ``<stack>-<flow>``)."""
    [found] = [
        props
        for props in (r["Properties"] for r in resources(template, "AWS::StepFunctions::StateMachine").values())
        if props["StateMachineName"].endswith(f"-{flow}")
    ]
    return found


def function_ids(template) -> dict[str, str]:
    """Construct name (``StartExperiment``...) -> logical id."""
    return {
        re.sub(r"^Functions|[0-9A-F]{8}$", "", k): k
        for k in resources(template, "AWS::Lambda::Function")
        if k.startswith("Functions")
    }


def one_function_env(template, name: str) -> dict:
    fn = resources(template, "AWS::Lambda::Function")[function_ids(template)[name]]
    return fn["Properties"]["Environment"]["Variables"]


def policies_of(template, logical_role_prefix: str) -> list[dict]:
    statements = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        roles = json.dumps(policy["Properties"]["Roles"])
        if logical_role_prefix in roles:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def actions(statement: dict) -> list[str]:
    """A statement's actions as a list, whether it names one or several."""
    found = statement["Action"]
    return [found] if isinstance(found, str) else found


def joined(value: dict) -> str:
    """An ``Fn::Join`` of strings and Refs as text, each Ref written as the logical id it names."""
    separator, parts = value["Fn::Join"]
    return separator.join(part if isinstance(part, str) else part["Ref"] for part in parts)


def data_template(**context):
    from aws_cdk.assertions import Template

    return Template.from_stack(synthesize(**context)[0])


def alarm_metrics(template) -> set[str]:
    """Every metric an alarm watches, directly or inside a math expression."""
    names = set()
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        names.add(props.get("MetricName"))
        names |= {m["MetricStat"]["Metric"]["MetricName"] for m in props.get("Metrics", []) if "MetricStat" in m}
    return names - {None}


def alarm_metric_count(template) -> int:
    """What CloudWatch bills alarms by: each metric an alarm watches, the metrics of a math expression each."""
    count = 0
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        metrics = alarm["Properties"].get("Metrics")
        count += sum(1 for m in metrics if "MetricStat" in m) if metrics else 1
    return count


def triggers(template) -> dict[str, dict]:
    """Each trigger's properties, by the function it runs (``Migrations``, ``VersionPruner``)."""
    return {
        name: props
        for props in (r["Properties"] for r in resources(template, "Custom::Trigger").values())
        for name in function_ids(template)
        if f"Functions{name}CurrentVersion" in json.dumps(props["HandlerArn"])
    }


PHYSICAL_NAMES = (
    "Name",
    "StateMachineName",
    "LogGroupName",
    "LaunchTemplateName",
    "DBProxyName",
    "FunctionName",
    "QueueName",
    "TopicName",
    "DashboardName",
    "RoleName",
    "DBInstanceIdentifier",
    "DBClusterIdentifier",
    "ExportName",
    "BudgetName",
)


def physical_names(stacks) -> set[str]:
    """Every name a resource claims in the account and region (the ones CloudFormation does not generate);
    a value made from another resource (its Ref, GetAtt, ImportValue: the group ``/aws/lambda/<function>``) is that
    resource's, not a name of its own."""
    from aws_cdk.assertions import Template

    names = set()
    for stack in stacks:
        template = Template.from_stack(stack).to_json()
        for resource in template["Resources"].values():
            properties = resource.get("Properties", {})
            properties = {**properties, **properties.get("Budget", {})}
            names |= {json.dumps(properties[key]) for key in PHYSICAL_NAMES if key in properties}
        names |= {json.dumps(o["Export"]["Name"]) for o in template.get("Outputs", {}).values() if "Export" in o}
        names.add(stack.stack_name)
    return {n for n in names if not re.search(r'\{"Ref": "(?!AWS::)|"Fn::GetAtt"|"Fn::ImportValue"', n)}
