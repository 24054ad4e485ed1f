"""The Parameter Store entries, created from the one catalog (and the shipped prompts), under the
deployment's prefix (``/oriole`` for the default deployment)."""

from __future__ import annotations

from aws_cdk import aws_ssm as ssm
from constructs import Construct

from oriole import catalog


class Parameters(Construct):
    """Every catalog entry read at start, with its default; researchers change values in the console or
    with ``oriole params``/``oriole prompts --aws``, and each experiment snapshots them when it starts.
    ``values`` replaces defaults that the deployment decides (the first allowed Ollama endpoint)."""

    def __init__(self, scope: Construct, construct_id: str, *, prefix: str, values: dict[str, str]):
        super().__init__(scope, construct_id)
        for param in catalog.CATALOG:
            if param.overridable:
                ssm.StringParameter(
                    self,
                    param.path.replace("/", "-"),
                    parameter_name=prefix + "/" + param.path,
                    string_value=values.get(param.key, param.default_text),
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
