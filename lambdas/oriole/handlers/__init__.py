"""Lambda entry points. Each is thin: parse the event, call ``oriole.lifecycle.experiments`` (the experiment flow) or
``oriole.lifecycle.sweep_tasks`` (the sweep flow), return small JSON.

``FUNCTIONS`` maps each ``${...}`` function placeholder of the state machine definitions to the handler it
stands for; CDK and the local runner both build their functions from this one table, and give each flow
the functions its file names (``flows.functions``). Each provider's agent task comes from its entry in
``oriole.provider_registry``. ``OUTSIDE_FLOWS`` names the functions CDK deploys beside the flows; ``DEPLOYED`` is
every function of the stack, by name: CDK takes each function's handler from it.
"""

from oriole.provider_registry import PROVIDERS

FUNCTIONS: dict[str, str] = {
    "StartExperimentFunctionArn": "oriole.handlers.start_experiment.handler",
    **{p.placeholder: f"oriole.handlers.agents.{p.entry_point}" for p in PROVIDERS.values()},
    "CheckProgressFunctionArn": "oriole.handlers.check_progress.handler",
    "FinalizeSuccessFunctionArn": "oriole.handlers.finalize.success",
    "FinalizeTimeoutFunctionArn": "oriole.handlers.finalize.timeout",
    "FinalizeFailureFunctionArn": "oriole.handlers.finalize.failure",
    "ContinueAsNewFunctionArn": "oriole.handlers.continue_as_new.handler",
    "PlanSweepFunctionArn": "oriole.handlers.sweep_tasks.plan",
    "StartRepetitionFunctionArn": "oriole.handlers.sweep_tasks.start_repetition",
    "CheckRepetitionFunctionArn": "oriole.handlers.sweep_tasks.check_repetition",
    "SummarizeSweepFunctionArn": "oriole.handlers.sweep_tasks.summarize",
}

# The functions deployed beside the flows, by name: the status-change finalizer (EventBridge), the scheduled
# reconciler and the deploy-time triggers.
OUTSIDE_FLOWS: dict[str, str] = {
    "ExecutionStatusFinalizer": "oriole.handlers.execution_status.handler",
    "Reconciler": "oriole.handlers.reconcile.handler",
    "Migrations": "oriole.handlers.migrate.handler",
    "VersionPruner": "oriole.handlers.versions.handler",
}


def task_name(placeholder: str) -> str:
    """``StartExperimentFunctionArn`` -> ``StartExperiment``: the function's name, and its task state's."""
    return placeholder.removesuffix("FunctionArn")


DEPLOYED: dict[str, str] = {**{task_name(p): h for p, h in FUNCTIONS.items()}, **OUTSIDE_FLOWS}
