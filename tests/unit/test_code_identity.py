"""The code an experiment records: the commit, whether its checkout held uncommitted changes (told apart from a clean
one), and a hash of the runtime package's files that changes with any of them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from oriole import code_identity
from oriole.environment import CODE_COMMIT, CODE_DIRTY, CODE_VERSION, Environment


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path) -> Path:
    """A git repository with one commit of a small package."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "turn.py").write_text("RULE = 1\n")
    git(repo, "init", "-q")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "first")
    return repo


def test_a_clean_checkout_is_told_apart_from_one_with_uncommitted_changes(checkout):
    commit = git(checkout, "rev-parse", "HEAD")
    assert code_identity.git_state(checkout / "pkg") == (commit, False)
    (checkout / "pkg" / "turn.py").write_text("RULE = 2\n")  # a tracked file changed
    assert code_identity.git_state(checkout / "pkg") == (commit, True)
    git(checkout, "checkout", "--", ".")
    assert code_identity.git_state(checkout / "pkg") == (commit, False)
    (checkout / "pkg" / "new.py").write_text("")  # a file git neither tracks nor ignores
    assert code_identity.git_state(checkout / "pkg") == (commit, True)


def test_code_outside_a_checkout_knows_no_commit(tmp_path, checkout):
    assert code_identity.git_state(tmp_path / "nowhere") == (None, None)
    (checkout / ".gitignore").write_text("venv/\n")
    (checkout / "venv" / "pkg").mkdir(parents=True)  # a wheel installed in an ignored virtual environment
    assert code_identity.git_state(checkout / "venv" / "pkg") == (None, None)


def test_the_hash_covers_every_file_by_its_path_and_content():
    files = [("core/turn.py", b"RULE = 1\n"), ("migrations/0001.sql", b"CREATE TABLE t ();\n")]
    digest = code_identity.files_digest(files)
    assert code_identity.files_digest(reversed(files)) == digest  # the order files are found in does not count
    assert code_identity.files_digest([files[0], ("migrations/0001.sql", b"CREATE TABLE u ();\n")]) != digest
    assert code_identity.files_digest([("core/moved.py", b"RULE = 1\n"), files[1]]) != digest
    assert code_identity.files_digest(files[:1]) != digest


def test_interpreter_caches_are_no_code():
    assert code_identity.is_code("core/turn.py") and code_identity.is_code("prompts/v1.md")
    assert not code_identity.is_code("core/__pycache__/turn.cpython-314.pyc")
    assert not code_identity.is_code("turn.pyc")


def test_the_runtime_hashes_its_own_package_and_migrations():
    files = code_identity.runtime_files()
    assert {"core/turn.py", "prompts/v1.md", "flows/experiment.asl.json", "migrations/0001_schema.sql"} <= set(files)
    assert "migrations/views/experiment_results.sql" in files
    assert not [name for name in files if not code_identity.is_code(name)]
    assert len(code_identity.runtime_hash()) == 64


def test_a_deployment_says_which_commit_it_runs_and_a_local_run_asks_its_checkout():
    from oriole import __version__

    digest = code_identity.runtime_hash()
    deployed = code_identity.current(
        Environment.read({CODE_VERSION: "0.1.0+0123456789ab", CODE_COMMIT: "a" * 40, CODE_DIRTY: "true"})
    )
    assert deployed == code_identity.CodeIdentity("0.1.0+0123456789ab", "a" * 40, True, digest)
    local = code_identity.current(Environment.read({}))
    assert local.version == f"{__version__}+local.{digest[:12]}" and local.runtime_hash == digest
    assert (local.commit, local.dirty) == code_identity.git_state(Path(code_identity.__file__).parent)
