#!/usr/bin/env python3
"""CDK entry point: the data stack and the orchestrator stack of one deployment, configured from context
(see infra/settings.py); ``-c deployment=Name`` names a second deployment in the same account and region."""

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra.nag import suppress_data, suppress_orchestrator
from infra.settings import Settings
from infra.stacks import DataStack, OrchestratorStack

app = cdk.App()
settings = Settings.from_context(app)
data = DataStack(app, settings.data_stack, settings=settings, description="Oriole: network and experiments database")
orchestrator = OrchestratorStack(
    app,
    settings.orchestrator_stack,
    settings=settings,
    data=data,
    description="Oriole: state machine, functions, parameters, monitoring",
)
suppress_data(data)
suppress_orchestrator(orchestrator)
cdk.Aspects.of(app).add(AwsSolutionsChecks(verbose=True))
app.synth()
