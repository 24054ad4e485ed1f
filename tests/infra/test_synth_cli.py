"""The real ``cdk synth`` (the CLI pinned in package.json) runs offline, its templates pass cfn-lint with no
unexplained warning, and a second deployment's names come from its own settings, never from the shell."""

from __future__ import annotations

import csv
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).parents[2]
CDK = ROOT / "node_modules" / ".bin" / "cdk"


# Every cfn-lint finding below the error level that the templates may carry, with the reason it stays. Any
# other (a new rule, a new construct) fails test_cfn_lint_reports_no_unexplained_finding.
ACCEPTED_FINDINGS = {
    "W3005": "CDK writes an explicit DependsOn from each function and state machine to its role beside the "
    "GetAtt of the role's ARN; redundant, and CloudFormation orders them the same either way.",
    "I1022": "CDK renders string concatenation as Fn::Join with an empty delimiter; Fn::Sub would be the same string.",
}


def cdk_synth(out: Path, *context: str, environ: dict[str, str] | None = None) -> Path:
    """``cdk synth`` with the pinned CLI into ``out``, offline, bundling skipped."""
    if not CDK.exists():
        pytest.fail("the CDK CLI is not installed: run `make test` (it runs `npm ci` from package-lock.json)")
    env = {
        **os.environ,
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20",
        # no credentials and an unreachable endpoint: synthesis must not need AWS at all
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_PROFILE": "",
        "AWS_EC2_METADATA_DISABLED": "true",
        **(environ or {}),
    }
    arguments = [arg for value in ("skipBundling=true", *context) for arg in ("-c", value)]
    result = subprocess.run(
        [str(CDK), "synth", "--no-notices", "--no-version-reporting", "-q", *arguments, "-o", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    return cdk_synth(tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture(scope="module")
def lean_assembly(tmp_path_factory) -> Path:
    return cdk_synth(tmp_path_factory.mktemp("cdk.out"), "profile=lean")


@pytest.fixture(params=["assembly", "lean_assembly"])
def each_profile(request) -> Path:
    """The real synth of each profile (``-c profile=lean`` for the lean one)."""
    return request.getfixturevalue(request.param)


def test_cdk_synth_produces_both_templates(assembly):
    for stack in ("OrioleData", "OrioleOrchestrator"):
        template = json.loads((assembly / f"{stack}.template.json").read_text())
        assert template["Resources"]
    manifest = json.loads((assembly / "manifest.json").read_text())
    assert {"OrioleData", "OrioleOrchestrator"} <= set(manifest["artifacts"])


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1"])
def test_cfn_lint_reports_no_unexplained_finding(each_profile, region):
    """Every rule, informational ones included, in both profiles and two regions: no error, and no warning or note
    but the accepted ones. cfn-lint floats within its major version on purpose: its RDS data follows what RDS
    creates (W3691 flags a pinned engine version once RDS deprecates it, and a new deployment could no longer be
    created)."""
    from cfnlint.api import ManualArgs, lint

    found = {}
    for stack in ("OrioleData", "OrioleOrchestrator"):
        text = (each_profile / f"{stack}.template.json").read_text()
        for match in lint(text, config=ManualArgs(regions=[region], include_checks=["I"])):
            found.setdefault(match.rule.id, f"{stack}: {match.message}")
    unexplained = {rule: message for rule, message in found.items() if rule not in ACCEPTED_FINDINGS}
    assert not unexplained, unexplained
    assert "W3005" in found  # the lint does run with warnings and notes included


def test_a_second_deployment_takes_every_name_and_grant_from_its_settings(tmp_path):
    """The shell that synthesizes a second deployment (``-c deployment=Other``) may have ORIOLE_DEPLOYMENT set for
    another one: nothing of it may reach the templates. Every Parameter Store name and grant is under /other
    (PlanSweep's prompt listing once came from the shell's variable, and its sweeps were denied)."""
    out = cdk_synth(tmp_path / "cdk.out", "deployment=Other", environ={"ORIOLE_DEPLOYMENT": "Elsewhere"})
    texts = {stack: (out / f"{stack}.template.json").read_text() for stack in ("OtherData", "OtherOrchestrator")}
    for stack, text in texts.items():
        assert "elsewhere" not in text.lower() and "/oriole/" not in text, stack
    orchestrator = json.loads(texts["OtherOrchestrator"])["Resources"]
    names = [r["Properties"]["Name"] for r in orchestrator.values() if r["Type"] == "AWS::SSM::Parameter"]
    assert names and all(name.startswith("/other/") for name in names)
    statements = [
        statement
        for r in orchestrator.values()
        if r["Type"] == "AWS::IAM::Policy"
        for statement in r["Properties"]["PolicyDocument"]["Statement"]
    ]
    grants = [
        json.dumps(statement["Resource"]) for statement in statements if "ssm:" in json.dumps(statement["Action"])
    ]
    # StartExperiment's reads by name, PlanSweep's prompt and price listing and its read of the cost cap, the
    # parameter values' reads (what a researcher set)
    assert len(grants) == 4
    assert all(":parameter/other/" in grant for grant in grants)
    plan = [
        json.dumps(r["Properties"])
        for r in orchestrator.values()
        if r["Type"] == "AWS::IAM::Policy" and "PlanSweep" in json.dumps(r["Properties"]["Roles"])
    ]
    assert ":parameter/other/prompts" in "".join(plan)
    starts = [
        r["Properties"]["Environment"]["Variables"]
        for r in orchestrator.values()
        if r["Type"] == "AWS::Lambda::Function" and str(r["Properties"].get("Handler", "")).startswith("oriole.")
    ]
    assert {env.get("ORIOLE_DEPLOYMENT") for env in starts} == {"Other"}  # what the functions read at run time


def test_the_idle_cost_script_prices_what_cdk_synth_wrote(assembly, lean_assembly):
    """``python -m infra.idle_cost cdk.out --json`` on the real synth of each profile (what ``make idle-cost``
    runs): the lean profile under $10 a month, the standard one about $95."""
    totals = {}
    for name, out in (("standard", assembly), ("lean", lean_assembly)):
        result = subprocess.run(
            [sys.executable, "-m", "infra.idle_cost", str(out), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        totals[name] = json.loads(result.stdout)["totalUsdPerMonth"]
    assert totals["lean"] < 10 and 90 < totals["standard"] < 100, totals


def test_nag_reports_are_written_and_clean(each_profile):
    reports = sorted(each_profile.glob("AwsSolutions-*-NagReport.csv"))
    assert len(reports) == 2
    for report in reports:
        rows = list(csv.DictReader(report.read_text().splitlines()))
        assert rows and {r["Compliance"] for r in rows} <= {"Compliant", "Suppressed", "N/A"}, report.name
        assert all(r["Exception Reason"] for r in rows if r["Compliance"] == "Suppressed")


def test_the_library_is_the_one_the_pinned_cli_was_released_with(assembly):
    """aws-cdk-lib is pinned exactly (pyproject.toml) to the version the pinned CLI (package.json) lists as its own
    aws-cdk-lib, and installed at it; the cloud assembly it writes is of a schema the CLI reads. Upgrading means
    moving both together (docs/reference/deployment.md)."""
    cli = json.loads((ROOT / "node_modules" / "aws-cdk" / "package.json").read_text())
    assert json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"] == cli["version"]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [library] = [Requirement(r) for r in extras["cdk"] if Requirement(r).name == "aws-cdk-lib"]
    assert str(library.specifier) == f"=={cli['devDependencies']['aws-cdk-lib']}"
    assert importlib.metadata.version("aws-cdk-lib") == cli["devDependencies"]["aws-cdk-lib"]
    bundled = (ROOT / "node_modules" / "aws-cdk" / "lib" / "index.js").read_text()
    [revision] = re.findall(r"cloud-assembly-schema/schema/version\.json.*?revision: (\d+)", bundled, re.DOTALL)[:1]
    written = json.loads((assembly / "manifest.json").read_text())["version"]
    assert int(written.split(".")[0]) <= int(revision)
