"""One code asset for every Lambda, built without Docker.

Local bundling installs ``requirements.txt`` as wheels for the Lambda platform (Linux arm64, the
runtime's CPython) with ``pip --platform --only-binary``, then copies the ``oriole`` package (without
the local runner and CLI) and the SQL migrations. Tests skip bundling, so synthesis needs neither
Docker nor a package registry: in process with CDK's context ``aws:cdk:bundling-stacks=[]``, and with
the CLI (which refuses ``aws:`` context keys) with ``cdk synth -c skipBundling=true``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64
PLATFORM = "manylinux2014_aarch64"
PYTHON_VERSION = "3.14"
MIGRATIONS_IN_BUNDLE = "/var/task/migrations"


@jsii.implements(ILocalBundling)
class PipBundling:
    """Builds the asset on this machine; returning True tells CDK no Docker bundling is needed."""

    def try_bundle(self, output_dir: str, *, image=None, **_options) -> bool:
        out = Path(output_dir)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(out),
             "--requirement", str(ROOT / "requirements.txt"), "--platform", PLATFORM, "--implementation", "cp",
             "--python-version", PYTHON_VERSION, "--only-binary=:all:", "--upgrade"],
            check=True,
        )
        shutil.copytree(ROOT / "lambdas" / "oriole", out / "oriole", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("local", "__pycache__", "*.pyc"))
        shutil.copytree(ROOT / "migrations", out / "migrations", dirs_exist_ok=True)
        return True


SOURCES = ["*", "!lambdas", "!lambdas/**", "!migrations", "!migrations/**", "!requirements.txt",
           "**/__pycache__", "lambdas/oriole/local"]


def code_asset(skip_bundling: bool = False) -> lambda_.Code:
    """The shared asset; its hash covers the package, the migrations and the requirements."""
    if skip_bundling:
        return lambda_.Code.from_asset(str(ROOT), exclude=SOURCES)
    return lambda_.Code.from_asset(
        str(ROOT),
        exclude=SOURCES,
        bundling=BundlingOptions(
            image=DockerImage.from_registry("local-bundling-only"),  # never pulled: local bundling succeeds
            local=PipBundling(),
            command=["false"],
        ),
    )
