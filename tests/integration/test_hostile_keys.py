"""No part of an API key reaches a stored column, a printed line, a transcript or an export (issue 37), whatever a
hostile server writes back: the key after a long prefix in an error body (cut to an excerpt afterwards), the key
spelt with JSON escapes in an answer's text, reasoning, a call's arguments and a tool call written in the text."""

from __future__ import annotations

import random

import pytest

from oriole.handlers import agents
from tests.integration.test_hostile_cli import every_stored_text
from tests.openai_server import ScriptedOpenAI
from tests.openai_server import text_reply as openai_text
from tests.unit.test_key_scrubbing import answer_echoing, leaked, random_key, spelt


@pytest.fixture(scope="module")
def database_url(module_database):
    """A database of this file's own: the test reports, exports and reads every stored text of the database."""
    return module_database


@pytest.mark.parametrize("seed", [7])
def test_no_part_of_a_key_leaves_as_text_whatever_a_server_spells(cli, store, monkeypatch, tmp_path, seed):
    rng = random.Random(seed)
    key = random_key(rng)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    agents.api_key.cache_clear()
    printed = []
    error = f'{{"error": {{"message": "{"x" * rng.randint(20, 300)}{spelt(key, rng)}", "type": "auth"}}}}'
    for script in ([(401, error.encode())], [(200, answer_echoing(key, rng)), openai_text("done")]):
        with ScriptedOpenAI(*script, api_key=key) as server:
            printed.append(
                cli(
                    "run",
                    "--maze",
                    "perfect-7",
                    "--provider",
                    "openai",
                    "--model",
                    "m",
                    "--openai-url",
                    server.base_url,
                    "--max-moves",
                    "3",
                    "--config",
                    "textToolCalls=true",
                ).output
            )
    agents.api_key.cache_clear()
    newest = store.conn.execute("SELECT max(id) AS id FROM experiments").fetchone()["id"]
    for args in (("status", str(newest)), ("ls", "--wide"), ("report", "--format", "csv"), ("doctor",)):
        printed.append(cli(*args).output)
    for form in ("text", "jsonl", "html"):
        printed.append(cli("transcript", str(newest), "--format", form).output)
    assert cli("export", "--format", "jsonl", "-o", str(tmp_path / "export")).exit_code == 0
    printed += [path.read_text() for path in (tmp_path / "export").iterdir()]
    shown = "\n".join(printed)
    assert "[API key]" in shown and "rejected the request" in shown  # both echoes came, both scrubbed
    assert leaked(key, shown) is None and leaked(key, every_stored_text(store)) is None
