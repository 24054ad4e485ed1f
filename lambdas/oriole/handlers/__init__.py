"""Lambda entry points. Each is thin: parse the event, call ``oriole.experiments``, return small JSON.

``FUNCTIONS`` maps each ``${...}`` placeholder of the state machine definition to the handler it
stands for; CDK and the local runner both build their functions from this one table.
"""

FUNCTIONS: dict[str, str] = {
    "StartExperimentFunctionArn": "oriole.handlers.start_experiment.handler",
    "InvokeBedrockAgentFunctionArn": "oriole.handlers.agents.invoke_bedrock",
    "InvokeOllamaAgentFunctionArn": "oriole.handlers.agents.invoke_ollama",
    "InvokeOpenAIAgentFunctionArn": "oriole.handlers.agents.invoke_openai",
    "InvokeBaselineAgentFunctionArn": "oriole.handlers.agents.invoke_baseline",
    "CheckProgressFunctionArn": "oriole.handlers.check_progress.handler",
    "FinalizeSuccessFunctionArn": "oriole.handlers.finalize.success",
    "FinalizeTimeoutFunctionArn": "oriole.handlers.finalize.timeout",
    "FinalizeFailureFunctionArn": "oriole.handlers.finalize.failure",
    "ContinueAsNewFunctionArn": "oriole.handlers.continue_as_new.handler",
}
