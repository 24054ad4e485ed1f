"""One code asset for every Lambda, built without Docker.

The asset is the runtime package ``lambdas/oriole`` whole (its migrations, prompts and flows are package
data) plus its dependencies: local bundling installs ``requirements.txt`` as wheels for the Lambda platform
(Linux arm64, the runtime's CPython) with ``pip --platform --only-binary``. The workstation package lives
elsewhere and is never copied. Tests skip bundling, so synthesis needs neither Docker nor a package
registry: in process with CDK's context ``aws:cdk:bundling-stacks=[]``, and with the CLI (which refuses
``aws:`` context keys) with ``cdk synth -c skipBundling=true``.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lambdas" / "oriole"
REQUIREMENTS = ROOT / "requirements.txt"
RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64
PLATFORM = "manylinux2014_aarch64"
PYTHON_VERSION = "3.14"
NOT_CODE = ("__pycache__", "*.pyc")


def copy_package(output_dir: Path) -> None:
    """The runtime package into the asset, whole (only interpreter caches are left out)."""
    shutil.copytree(PACKAGE, output_dir / "oriole", dirs_exist_ok=True, ignore=shutil.ignore_patterns(*NOT_CODE))


def install_requirements(output_dir: Path) -> None:
    """The runtime requirements as wheels for the Lambda platform."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(output_dir),
         "--requirement", str(REQUIREMENTS), "--platform", PLATFORM, "--implementation", "cp",
         "--python-version", PYTHON_VERSION, "--only-binary=:all:", "--upgrade"],
        check=True,
    )


@jsii.implements(ILocalBundling)
class PipBundling:
    """Builds the asset on this machine; returning True tells CDK no Docker bundling is needed."""

    def try_bundle(self, output_dir: str, *, image=None, **_options) -> bool:
        install_requirements(Path(output_dir))
        copy_package(Path(output_dir))
        return True


def source_hash() -> str:
    """A hash of what the asset is built from: every file of the runtime package and the requirements.
    It is the asset's hash (so a change of either deploys new code) and part of the recorded code version."""
    digest = hashlib.sha256()
    files = sorted(p for p in PACKAGE.rglob("*") if p.is_file() and not any(p.match(n) for n in NOT_CODE)
                   and "__pycache__" not in p.parts)
    for name, path in [*((str(p.relative_to(PACKAGE)), p) for p in files), ("requirements.txt", REQUIREMENTS)]:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def code_version() -> str:
    """``<package version>+<first 12 hex digits of the source hash>``: what each experiment records."""
    from oriole import __version__

    return f"{__version__}+{source_hash()[:12]}"


def code_asset(skip_bundling: bool = False) -> lambda_.Code:
    """The shared asset, hashed by ``source_hash``."""
    hashed = {"asset_hash": source_hash(), "asset_hash_type": AssetHashType.CUSTOM, "exclude": list(NOT_CODE)}
    if skip_bundling:
        return lambda_.Code.from_asset(str(PACKAGE.parent), **hashed)
    return lambda_.Code.from_asset(
        str(PACKAGE.parent),
        **hashed,
        bundling=BundlingOptions(
            image=DockerImage.from_registry("local-bundling-only"),  # never pulled: local bundling succeeds
            local=PipBundling(),
            command=["false"],
        ),
    )
