"""Deploy-time settings: what is refused at synth (and why, quoting no secret), the profiles, and deployments that
fit side by side in one account and region."""

from __future__ import annotations

import pytest

from tests.infra.conftest import MODEL_IDS, OLLAMA_SECRET, OPENAI_SECRET, synthesize
from tests.infra.templates import one_function_env, physical_names, resources


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"ollamaEndpoints": '["http://ollama.internal:11434"]', "ollamaApiKeySecretArn": OLLAMA_SECRET}, "plain http"),
        ({"ollamaEndpoints": '["ftp://x"]'}, "must be an http or https URL"),
        ({"openaiBaseUrls": '["https://lab:SECRET@gpu.example/v1"]'}, "user name or password"),
        ({"openaiBaseUrls": '["https://gpu.example\\\\@evil.example/v1"]'}, "backslash"),
        ({"ollamaEndpoints": '["https://[fe80::1%25eth0]:11434"]'}, "no zone"),
        ({"deployment": "oriole lab"}, "deployment must be"),
        ({"deployment": "2lab"}, "deployment must be"),
        ({"profile": "cheap"}, "profile must be one of standard, lean"),
        ({"egress": "gateway"}, "egress must be one of nat, nat-instance, endpoints"),
        ({"monthlyBudgetUsd": "lots", "alarmEmail": "a@b.c"}, "monthlyBudgetUsd must be a number"),
        ({"openaiApiKeyKmsKeyArn": "arn:aws:kms:eu-west-1:123456789012:key/k1"}, "set that too"),
        (
            {
                "openaiApiKeySecretArn": OPENAI_SECRET,
                "openaiApiKeyKmsKeyArn": "arn:aws:kms:eu-west-1:123456789012:alias/k",
            },
            "must be a KMS key ARN",
        ),
    ],
)
def test_unsafe_or_malformed_settings_are_refused_at_synth(context, message):
    """Deploy context gets the URL check of every other entry (oriole.config.url_problem), quoting no password."""
    with pytest.raises(ValueError, match=message) as raised:
        synthesize(**context)
    assert "SECRET" not in str(raised.value)


def test_two_deployments_fit_in_one_account_and_region(stacks):
    from aws_cdk.assertions import Template

    second = synthesize(deployment="Lab2", bedrockModelIds=MODEL_IDS)
    assert [s.stack_name for s in second] == ["Lab2Data", "Lab2Orchestrator"]
    clash = physical_names(stacks) & physical_names(second)
    assert not clash, clash
    parameters = {
        p["Properties"]["Name"] for p in resources(Template.from_stack(second[1]), "AWS::SSM::Parameter").values()
    }
    assert parameters and all(name.startswith("/lab2/") for name in parameters)
    assert one_function_env(Template.from_stack(second[1]), "StartExperiment")["ORIOLE_DEPLOYMENT"] == "Lab2"


def test_a_lean_deployment_fits_beside_a_standard_one(stacks, lean_stacks):
    """The profiles differ in what they make, never in the names they claim: a lean deployment of another name
    shares no name with a standard one."""
    lean = synthesize(deployment="Lean", profile="lean")
    assert not physical_names(stacks) & physical_names(lean)


@pytest.mark.parametrize("spelling", ["lab2", "LAB2", "lAb2"])
def test_names_that_differ_only_in_case_are_one_deployment(spelling):
    """Some names AWS keeps for a deployment ignore case (its parameter prefix, RDS identifiers): a name is
    case-folded, so two spellings are the same deployment, with the same stacks, instead of two that collide."""
    from aws_cdk.assertions import Template

    data, orchestrator = synthesize(deployment=spelling)
    assert [data.stack_name, orchestrator.stack_name] == ["Lab2Data", "Lab2Orchestrator"]
    assert one_function_env(Template.from_stack(orchestrator), "StartExperiment")["ORIOLE_DEPLOYMENT"] == "Lab2"


def test_the_cli_folds_the_deployment_name_as_the_stacks_do(monkeypatch):
    from oriole_workstation import cloud

    monkeypatch.setenv("ORIOLE_DEPLOYMENT", "LAB2")
    assert cloud.deployment_name() == "Lab2"
    monkeypatch.delenv("ORIOLE_DEPLOYMENT")
    assert cloud.deployment_name() == "Oriole"


def test_the_profile_sets_the_defaults_and_context_overrides_them():
    from aws_cdk import App

    from infra.settings import Settings

    lean = Settings.from_context(App(context={"profile": "lean"}))
    assert (lean.profile.name, lean.egress, lean.dashboard, lean.profile.serverless) == (
        "lean",
        "nat-instance",
        False,
        True,
    )
    standard = Settings.from_context(App())
    assert (standard.profile.name, standard.egress, standard.dashboard) == ("standard", "nat", True)
    mixed = Settings.from_context(App(context={"profile": "lean", "egress": "nat", "dashboard": "true"}))
    assert (mixed.egress, mixed.dashboard) == ("nat", True)
