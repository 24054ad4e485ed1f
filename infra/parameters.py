"""The Parameter Store entries, created from the one catalog (and the shipped prompts)."""

from __future__ import annotations

from aws_cdk import aws_ssm as ssm
from constructs import Construct

from oriole import catalog


class Parameters(Construct):
    """Every catalog entry read at start, with its default; researchers change values in the console or
    with ``oriole params``/``oriole prompts --aws``, and each experiment snapshots them when it starts."""

    def __init__(self, scope: Construct, construct_id: str):
        super().__init__(scope, construct_id)
        for param in catalog.CATALOG:
            if param.overridable:
                ssm.StringParameter(self, param.path.replace("/", "-"), parameter_name=param.name,
                                    string_value=param.default_text, description=param.description[:1024])
        for version in catalog.SHIPPED_PROMPT_VERSIONS:
            text = catalog.shipped_prompt(version)
            ssm.StringParameter(self, f"prompt-{version}", parameter_name=catalog.prompt_name(version),
                                string_value=text, description=f"Oriole system prompt {version}",
                                tier=ssm.ParameterTier.ADVANCED if len(text.encode()) > 4096
                                else ssm.ParameterTier.STANDARD)
