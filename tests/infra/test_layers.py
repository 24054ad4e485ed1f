"""The house holds against the imports (import-linter, configured in pyproject.toml): the runtime in layers
(handlers and flows; lifecycle; providers beside the store; the pure core; the foundation), the core free of the AWS
SDK, the database driver and HTTP, the runtime never importing the workstation or the infrastructure, and the
infrastructure never the workstation. The layers are exhaustive: a new module of the runtime must take its place in
one (its data packages excepted)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[2]
CONTRACTS = [
    contract["name"]
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
]


def test_every_contract_of_the_house_is_kept():
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert len(CONTRACTS) == 4 and all(f"{name} KEPT" in result.stdout for name in CONTRACTS)
