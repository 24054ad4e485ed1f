"""The real ``cdk synth`` (the CLI pinned in package.json) runs offline and its templates pass cfn-lint."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
CDK = ROOT / "node_modules" / ".bin" / "cdk"


@pytest.fixture(scope="module")
def assembly(tmp_path_factory) -> Path:
    if not CDK.exists():
        pytest.fail("the CDK CLI is not installed: run `make test` (it runs `npm ci` from package-lock.json)")
    out = tmp_path_factory.mktemp("cdk.out")
    env = {**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true",
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20",
           # no credentials and an unreachable endpoint: synthesis must not need AWS at all
           "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true"}
    result = subprocess.run([str(CDK), "synth", "--no-notices", "--no-version-reporting", "-q", "-c",
                             "skipBundling=true", "-o", str(out)], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_cdk_synth_produces_both_templates(assembly):
    for stack in ("OrioleData", "OrioleOrchestrator"):
        template = json.loads((assembly / f"{stack}.template.json").read_text())
        assert template["Resources"]
    manifest = json.loads((assembly / "manifest.json").read_text())
    assert {"OrioleData", "OrioleOrchestrator"} <= set(manifest["artifacts"])


def test_cfn_lint_reports_no_error(assembly):
    from cfnlint.api import ManualArgs, lint

    for stack in ("OrioleData", "OrioleOrchestrator"):
        text = (assembly / f"{stack}.template.json").read_text()
        errors = [m for m in lint(text, config=ManualArgs(regions=["us-east-1"])) if m.rule.id.startswith("E")]
        assert not errors, [f"{m.rule.id} {m.message}" for m in errors]


def test_nag_reports_are_written_and_clean(assembly):
    reports = sorted(assembly.glob("AwsSolutions-*-NagReport.csv"))
    assert len(reports) == 2
    for report in reports:
        rows = list(csv.DictReader(report.read_text().splitlines()))
        assert rows and {r["Compliance"] for r in rows} <= {"Compliant", "Suppressed", "N/A"}, report.name
        assert all(r["Exception Reason"] for r in rows if r["Compliance"] == "Suppressed")
