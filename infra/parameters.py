"""The Parameter Store entries, created from the one catalog (and the shipped prompts), under the
deployment's prefix (``/oriole`` for the default deployment).

A deploy never undoes ``oriole params set``: each catalog parameter's value comes from a custom resource
(``parameter_values_handler.py``) that gives the new default to a parameter still at the default the previous
deploy wrote, and the researcher's value to one they changed; CloudFormation then changes a parameter only when
that value changed. A renamed parameter (``Parameter.renamed_from``) gets the researcher's value from its old name,
which CloudFormation then deletes. The shipped prompt versions are written as they ship (a changed prompt is a new
version).
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import CustomResource, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from infra.custom_resources import inline_provider
from oriole import catalog

HANDLER = Path(__file__).with_name("parameter_values_handler.py")


class Parameters(Construct):
    """Every catalog entry read at start, with its default (``values`` replaces defaults that the deployment decides:
    the first allowed Ollama endpoint); researchers change values in the console or with ``oriole params`` and
    ``oriole prompts --aws``, and each experiment snapshots them when it starts."""

    def __init__(
        self, scope: Construct, construct_id: str, *, prefix: str, values: dict[str, str], log_retention_days: int
    ):
        super().__init__(scope, construct_id)
        overridable = [param for param in catalog.CATALOG if param.overridable]
        names = {param.key: prefix + "/" + param.path for param in overridable}
        stack = Stack.of(self)
        provider = inline_provider(
            Construct(self, "Values"),
            handler=HANDLER,
            description="Oriole: the catalog parameters' values, a researcher's kept over a new default",
            statements=[
                iam.PolicyStatement(
                    actions=["ssm:GetParameters"],
                    resources=[stack.format_arn(service="ssm", resource="parameter", resource_name=f"{prefix[1:]}/*")],
                )
            ],
            log_retention_days=log_retention_days,
        )
        kept = CustomResource(
            self,
            "KeptValues",
            service_token=provider.service_token,
            resource_type="Custom::ParameterValues",
            properties={
                "Names": names,
                "PreviousNames": {p.key: prefix + "/" + p.renamed_from for p in overridable if p.renamed_from},
                "Defaults": {param.key: values.get(param.key, param.default_text) for param in overridable},
            },
        )
        for param in overridable:
            ssm.StringParameter(
                self,
                param.path.replace("/", "-"),
                parameter_name=names[param.key],
                string_value=kept.get_att_string(param.key),
                description=param.description[:1024],
            )
        for version in catalog.SHIPPED_PROMPT_VERSIONS:
            text = catalog.shipped_prompt(version)
            ssm.StringParameter(
                self,
                f"prompt-{version}",
                parameter_name=catalog.prompt_name(version, prefix),
                string_value=text,
                description=f"Oriole system prompt {version}",
                tier=ssm.ParameterTier.ADVANCED if len(text.encode()) > 4096 else ssm.ParameterTier.STANDARD,
            )
