"""A sweep checks its servers before it spends and says why each experiment failed: a dead or mistyped server
refuses the sweep before anything starts (``--dry-run`` too), an agent whose server fails its experiments alike is
paused while the rest of the sweep goes on, every errored experiment's line carries its reason, and the exit status
says that some failed. Against the project's protocol servers (tests/ollama_server.py, tests/openai_server.py) and a
dead port."""

from __future__ import annotations

import uuid

from tests.integration.test_sweep_local import experiments
from tests.ollama_server import ScriptedOllama, error, slow, text_reply
from tests.openai_server import ScriptedOpenAI
from tests.unit.test_ollama_provider import closed_port_url


def sweep_file(tmp_path, sweep_id: str, agent: str, repetitions: int = 1) -> str:
    path = tmp_path / f"{sweep_id}.toml"
    path.write_text(
        f'id = "{sweep_id}"\nmazes = ["perfect-7"]\nrepetitions = {repetitions}\n[[configs]]\nmaxMoves = 20\n'
        f'{agent}[[agents]]\nprovider = "baseline"\nmodel = "oracle"\n'
    )
    return str(path)


def test_a_dead_server_refuses_the_sweep_before_anything_starts_dry_run_too(cli, store, tmp_path):
    sweep_id = f"dead-{uuid.uuid4().hex[:8]}"
    url = closed_port_url()
    file = sweep_file(
        tmp_path, sweep_id, f'[[agents]]\nprovider = "ollama"\nmodel = "q"\nconfig = {{ endpoint = "{url}" }}\n'
    )
    for dry_run in ((), ("--dry-run",)):
        refused = cli("sweep", file, "--quiet", *dry_run)
        assert refused.exit_code == 2 and refused.stdout == "", refused.output
        [line] = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
        assert line.startswith(f"error: model server {url}: ModelUnavailable: Ollama model 'q' at {url}")
        assert line.endswith(
            "Nothing was started: fix the server or the sweep file (--no-server-check starts it anyway)"
        )
    assert experiments(store, sweep_id) == []
    unchecked = cli("sweep", file, "--dry-run", "--no-server-check")
    assert unchecked.exit_code == 0 and len(unchecked.stdout.splitlines()) == 2


def test_a_model_the_server_does_not_serve_is_named_with_what_it_serves(cli, store, tmp_path):
    sweep_id = f"unserved-{uuid.uuid4().hex[:8]}"
    with ScriptedOpenAI(models=("Qwen/Qwen3-8B",)) as server:
        file = sweep_file(
            tmp_path,
            sweep_id,
            f'[[agents]]\nprovider = "openai"\nmodel = "Qwen/Qwen3-8b"\nconfig = {{ baseUrl = "{server.base_url}" }}\n',
        )
        refused = cli("sweep", file, "--dry-run")
    assert refused.exit_code == 2 and len(server.listings) == 1 and server.requests == []
    assert "serves no model 'Qwen/Qwen3-8b'; it serves: Qwen/Qwen3-8B" in refused.stderr


def test_an_agent_whose_server_fails_alike_is_paused_and_the_rest_of_the_sweep_goes_on(cli, store, tmp_path):
    sweep_id = f"pause-{uuid.uuid4().hex[:8]}"
    refusal = "model 'q' is broken on this server"
    with ScriptedOllama(*[error(400, refusal)] * 3, models=("q",)) as server:
        file = sweep_file(
            tmp_path,
            sweep_id,
            f'[[agents]]\nprovider = "ollama"\nmodel = "q"\nconfig = {{ endpoint = "{server.url}" }}\n',
            repetitions=5,
        )
        result = cli("sweep", file)
        assert len(server.requests) == 3  # the fourth and fifth never started
        rows = experiments(store, sweep_id)
        assert [r["status"] for r in rows if r["llm_provider"] == "ollama"] == ["failed"] * 3
        assert sum(r["llm_provider"] == "baseline" for r in rows) == 5  # the rest of the sweep went on
        assert result.exit_code == 1, result.output
        errored = [line for line in result.stderr.splitlines() if ": #" in line and "ollama/q" in line]
        assert len(errored) == 3 and all(line.endswith(refusal) for line in errored)  # each with its reason
        assert "ModelRequestRejected" in errored[0]
        [paused] = [line for line in result.stderr.splitlines() if line.startswith("paused ollama/q")]
        assert refusal in paused and "the rest of the sweep goes on" in paused
        assert result.stdout.startswith("10 planned: 0 already done, 5 succeeded, 3 errors, 2 paused; spent")
        assert result.stderr.splitlines()[-1].startswith(
            f"error: 3 experiment(s) of sweep {sweep_id} ended in an error, 2 not started (their agent paused)"
        )
        status = cli("sweep", "status", sweep_id).stdout
        assert f"error (3): ModelRequestRejected: Ollama at {server.url} rejected the request" in status

        server.add(*[text_reply("I see walls.")] * 40)  # the server is fixed: the paused repetitions run now
        again = cli("sweep", file, "--quiet")
        assert again.exit_code == 0, again.output
        # the errors stay (--retry-failed); a stalled agent's execution fails with its experiment, never "rejected"
        assert again.stdout.startswith("10 planned: 8 already done, 2 agent failures;")
    assert sum(r["llm_provider"] == "ollama" for r in experiments(store, sweep_id)) == 5


def test_server_and_agent_caps_hold_each_alone_beside_the_providers_cap(cli, store, tmp_path):
    """Two Ollama servers, two models each, counted by the servers (one request in flight per running
    experiment). The first is capped at 2 and its agent a1 at 1: a1 and the server's other agent share the 2, one
    experiment each at once. On the second, b1's own cap of 3 runs its repetitions together although the provider's
    cap is 1, which b2 keeps."""
    sweep_id = f"server-cap-{uuid.uuid4().hex[:8]}"
    replies = [slow(0.3, text_reply("I see walls."))] * 40  # every experiment stalls after a few slow answers
    with ScriptedOllama(*replies, models=("a1", "a2")) as capped, ScriptedOllama(*replies, models=("b1", "b2")) as wide:
        agents = "".join(
            f'[[agents]]\nprovider = "ollama"\nmodel = "{model}"\nconfig = {{ endpoint = "{server.url}" }}\n{cap}'
            for server, model, cap in (
                (capped, "a1", "concurrency = 1\n"),
                (capped, "a2", ""),
                (wide, "b1", "concurrency = 3\n"),
                (wide, "b2", ""),
            )
        )
        file = tmp_path / f"{sweep_id}.toml"
        file.write_text(
            f'id = "{sweep_id}"\nmazes = ["perfect-7"]\nrepetitions = 2\n[[configs]]\nmaxMoves = 20\n{agents}'
            f'[server_concurrency]\n"{capped.url}/" = 2\n'  # another spelling of the agents' URL: the same server
        )
        planned = cli("sweep", str(file), "--dry-run", "--no-server-check", "--concurrency", "8")
        assert (
            f"experiments at once: ollama 1, agent ollama/a1 1, agent ollama/b1 3, server {capped.url} 1 (8 in all)"
            in planned.stderr
        ), planned.stderr
        result = cli("sweep", str(file), "--quiet", "--concurrency", "8")
        assert result.exit_code == 0, result.output
        assert len(capped.requests) >= 8 and len(wide.requests) >= 8  # four experiments each, several calls each
        assert capped.most_in_flight_by_model == {"a1": 1, "a2": 1}
        assert wide.most_in_flight_by_model == {"b1": 2, "b2": 1}
    assert [r["status"] for r in experiments(store, sweep_id)] == ["failed"] * 8  # stalled: agent failures


def test_a_server_cap_must_name_a_server_the_sweep_uses(cli, tmp_path):
    file = tmp_path / "unused-cap.toml"
    file.write_text(
        'id = "unused-cap"\nmazes = ["perfect-7"]\nagents = ["baseline/oracle", "ollama/q"]\n'
        '[server_concurrency]\n"http://gpu-b:11434" = 2\n'
    )
    refused = cli("sweep", str(file), "--dry-run", "--no-server-check")
    assert refused.exit_code == 2, refused.output
    assert (
        "server_concurrency names http://gpu-b:11434, which no agent of the sweep sends to; its model servers: "
        "http://localhost:11434" in refused.stderr
    )
    refused = cli("sweep", str(file), "--dry-run", "--server-concurrency", "http://gpu-b:11434=0")
    assert refused.exit_code == 2 and "--server-concurrency expects URL=N" in refused.stderr
