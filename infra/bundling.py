"""One code asset for every Lambda, built without Docker.

The asset is the runtime package ``lambdas/oriole`` whole (its prompts and flows are package data), the
repository's ``migrations/`` folder carried into it as ``oriole/migrations``, and its dependencies: local
bundling installs exactly what ``requirements-lambda.lock`` pins (``make lock`` resolves ``requirements.txt``
for Linux arm64 and the runtime's CPython), as wheels whose hashes pip checks. The asset hash covers the
package files (the migrations included), the lock and the target platform, so the same inputs give
the same asset and a new lock deploys new code. The workstation package lives elsewhere and is never
copied. Tests skip bundling, so synthesis needs neither Docker nor a package registry: in process with
CDK's context ``aws:cdk:bundling-stacks=[]``, and with the CLI (which refuses ``aws:`` context keys) with
``cdk synth -c skipBundling=true``.
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

from oriole import code_identity
from oriole.environment import CODE_COMMIT, CODE_DIRTY, CODE_VERSION

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lambdas" / "oriole"
MIGRATIONS = ROOT / "migrations"
# Where each part of the asset's ``oriole/`` comes from (as the wheel's package-dir maps them, pyproject.toml).
SOURCES = {".": PACKAGE, "migrations": MIGRATIONS}
LOCK = ROOT / "requirements-lambda.lock"
RUNTIME = lambda_.Runtime.PYTHON_3_14
ARCHITECTURE = lambda_.Architecture.ARM_64
# The Lambda runtime's Amazon Linux 2023 has glibc 2.34: manylinux_2_28 wheels (psycopg-binary 3.3 ships no
# older tag) run on it. ``make lock`` resolves for this platform; pip installs a wheel of any manylinux tag up
# to it (pip does not widen a ``manylinux_2_x`` platform by itself, so each tag is named).
PLATFORM = "manylinux_2_28_aarch64"
MANYLINUX_TAGS = (*(f"manylinux_2_{minor}_aarch64" for minor in range(28, 16, -1)), "manylinux2014_aarch64")
PYTHON_VERSION = "3.14"
NOT_CODE = code_identity.NOT_CODE  # what the asset leaves out: interpreter caches


def copy_package(output_dir: Path) -> None:
    """The runtime package into the asset, whole, its migrations included (only interpreter caches are left out)."""
    for target, source in SOURCES.items():
        shutil.copytree(
            source, output_dir / "oriole" / target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*NOT_CODE)
        )


def install_requirements(output_dir: Path) -> None:
    """Exactly the locked wheels for the Lambda platform: pip refuses any file whose hash the lock does not
    list and resolves nothing itself (the lock names every dependency), so no build picks up a new release."""
    platforms = [option for tag in MANYLINUX_TAGS for option in ("--platform", tag)]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-compile",
            "--require-hashes",
            "--no-deps",
            "--only-binary=:all:",
            *platforms,
            "--implementation",
            "cp",
            "--python-version",
            PYTHON_VERSION,
            "--target",
            str(output_dir),
            "--requirement",
            str(LOCK),
        ],
        check=True,
    )


def package_files(sources: dict[str, Path] = SOURCES) -> dict[str, Path]:
    """The files ``copy_package`` copies, by their path in the asset's ``oriole/``, in an order independent of the
    file system (``sources``: an asset's ``{".": <its oriole folder>}`` names the same files)."""
    files = {
        (Path(target) / path.relative_to(source)).as_posix(): path
        for target, source in sources.items()
        for path in source.rglob("*")
        if path.is_file()
    }
    return {name: files[name] for name in sorted(files) if code_identity.is_code(name)}


def asset_hash(lock: Path = LOCK, sources: dict[str, Path] = SOURCES) -> str:
    """What the asset is built from: the package files (by their path in the asset), the lock and the wheel
    platform. CDK's own hash of the source folder would miss the lock and the migrations, so a new lock or a new
    migration would not redeploy the code."""
    digest = hashlib.sha256(f"{PLATFORM} cp{PYTHON_VERSION}\n".encode())
    for name, path in package_files(sources).items():
        digest.update(f"{name}\0{_sha256(path)}\n".encode())
    digest.update(f"lock\0{_sha256(lock)}\n".encode())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@jsii.implements(ILocalBundling)
class PipBundling:
    """Builds the asset on this machine; returning True tells CDK no Docker bundling is needed."""

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_options: object) -> bool:
        install_requirements(Path(output_dir))
        copy_package(Path(output_dir))
        return True


def code_version() -> str:
    """``<package version>+<first 12 hex digits of the source hash>``: what each experiment records."""
    from oriole import __version__

    return f"{__version__}+{asset_hash()[:12]}"


def runtime_hash(sources: dict[str, Path] = SOURCES) -> str:
    """The runtime package's hash (``oriole.code_identity.files_digest``) of the files the asset ships: what the
    runtime computes from its own files, locally and in the Lambda alike."""
    return code_identity.files_digest((name, path.read_bytes()) for name, path in package_files(sources).items())


def code_environment(root: Path = ROOT) -> dict[str, str]:
    """What the functions are told of the code they run: its version, and, the asset carrying no git, the commit of
    the checkout synthesized and whether it held uncommitted changes (left out when ``root`` is no git checkout)."""
    commit, dirty = code_identity.git_state(root)
    known = {CODE_COMMIT: commit, CODE_DIRTY: None if dirty is None else str(dirty).lower()}
    return {CODE_VERSION: code_version(), **{name: value for name, value in known.items() if value is not None}}


def code_asset(skip_bundling: bool = False) -> lambda_.Code:
    """The shared asset, named by ``asset_hash`` whether or not it is bundled."""
    bundling = BundlingOptions(
        image=DockerImage.from_registry("local-bundling-only"),  # never pulled: local bundling succeeds
        local=PipBundling(),
        command=["false"],
    )
    return lambda_.Code.from_asset(
        str(PACKAGE.parent),
        exclude=list(NOT_CODE),
        asset_hash_type=AssetHashType.CUSTOM,
        asset_hash=asset_hash(),
        bundling=None if skip_bundling else bundling,
    )
