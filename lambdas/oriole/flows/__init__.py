"""The state machine definitions, one ASL file per flow (the experiment; the sweep that runs many experiments),
shipped as package data.

CDK deploys these files (with ``definition_substitutions`` for the ``${...}`` placeholders: function ARNs,
and the experiment state machine's ARN in the sweep) and the local runner hands the same files to moto's
interpreter, so there is no second copy of a flow anywhere. The sweep's file is rendered by ``sweep_flow``
(its per-provider maps are one item flow written once).
"""

from __future__ import annotations

import json
import re
from importlib import resources

from oriole.text import JsonObject

SUFFIX = ".asl.json"
EXPERIMENT = "experiment"
SWEEP = "sweep"
FLOWS = tuple(
    sorted(
        entry.name.removesuffix(SUFFIX) for entry in resources.files(__name__).iterdir() if entry.name.endswith(SUFFIX)
    )
)  # every flow the package ships
EXPERIMENT_STATE_MACHINE = "ExperimentStateMachineArn"  # the sweep's placeholder for the flow it starts


def definition_text(flow: str = EXPERIMENT) -> str:
    """The ASL file of ``flow`` as shipped, ``${...}`` placeholders included."""
    return resources.files(__name__).joinpath(flow + SUFFIX).read_text(encoding="utf-8")


def definition(
    flow: str = EXPERIMENT, *, timeout_seconds: int | None = None, substitutions: dict[str, str] | None = None
) -> JsonObject:
    """The parsed definition, with the placeholders replaced (locally) and the execution timeout set."""
    text = definition_text(flow)
    for placeholder, value in (substitutions or {}).items():
        text = text.replace(f"${{{placeholder}}}", value)
    asl: JsonObject = json.loads(text)
    if timeout_seconds is not None:
        asl["TimeoutSeconds"] = timeout_seconds
    return asl


def functions(flow: str) -> set[str]:
    """The function placeholders (``...FunctionArn``) the flow's file names: the functions it invokes."""
    return set(re.findall(r"\$\{(\w+FunctionArn)\}", definition_text(flow)))
