"""A sweep's progress as a researcher follows it: N of M, running, failed, left, elapsed, ETA, tokens and spend;
plain lines that never wrap when piped; and the words an ending is told in."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from oriole.core.sweep_plan import SweepExperiment, SweepFile, plan, validate
from oriole_workstation.display import shorten
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.sweep_progress import STATUS_EVERY_SECONDS, SweepProgress, clock, count, fit_line, joined


def row(
    id_: int, status: str, *, tokens: int = 0, cost: float = 0.0, ending: str | None = None, agent_id: str = ""
) -> SweepExperiment:
    return SweepExperiment(id_, agent_id or f"s/cell/r{id_}", status, ending, "arn", "arn", tokens, cost, None)


def test_the_counts_give_done_of_planned_running_failed_left_and_an_eta_at_this_runs_pace():
    rows = [
        row(1, "succeeded", tokens=100, cost=0.5),  # an earlier run's
        row(5, "succeeded", tokens=1000, cost=1.0),
        row(6, "failed", ending="error"),
        row(7, "running"),
    ]
    counts = count(rows, first_id=4, planned=10, to_run=9, elapsed=120.0, spend_limit=5.0)
    assert (counts.done, counts.running, counts.failed, counts.left) == (2, 1, 1, 6)
    assert counts.eta == 120.0 / 2 * 7
    assert counts.line() == (
        "3/10 done (1 before) · 1 running · 1 failed · 6 left · 0:02:00 elapsed · ETA 0:07:00 · "
        "1,100 tokens · $1.5000 of $5.00"
    )
    assert count([], 0, 3, 3, 10.0).eta is None and clock(None) == "-" and clock(3723.9) == "1:02:03"


def test_piped_it_prints_one_unwrapped_line_per_ended_experiment_and_a_status_line_now_and_then():
    sink = io.StringIO()
    now = [0.0]
    console = Console(file=sink, width=40)  # narrower than any record: none may wrap
    planned = plan(
        validate(
            SweepFile,
            {"id": "s", "agents": ["baseline/random"], "mazes": ["perfect-7"], "repetitions": 2},
            "sweep file",
        )
    )
    ids = [item.agent_id("s") for item in planned]
    progress = SweepProgress(console, "s", planned, 2, 0, clock_seconds=lambda: now[0])
    assert not progress.live
    summary = SimpleNamespace(
        status="timed_out", failure_reason="max_moves reached: 60 actions of 60 allowed", actions=60
    )  # what an ExperimentSummary says of an ended experiment
    with progress:
        progress.update([row(1, "running")], lambda _: summary)
        assert sink.getvalue() == ""  # nothing ended, no minute gone by
        now[0] = STATUS_EVERY_SECONDS + 2
        half_done = [row(1, "timed_out", tokens=2000, cost=0.25, agent_id=ids[0]), row(2, "running", agent_id=ids[1])]
        progress.update(half_done, lambda _: summary)  # a line for the ended one, which says enough for now
        now[0] += STATUS_EVERY_SECONDS
        progress.update(half_done, lambda _: summary)  # a minute with nothing ended: a status line
        now[0] += 1
        done = [half_done[0], row(2, "succeeded", agent_id=ids[1])]
        progress.finish(
            progress.update(done, lambda _: SimpleNamespace(actions=60, status="succeeded", failure_reason=None))
        )
    lines = sink.getvalue().splitlines()
    assert lines[0] == "[1/2] baseline/random perfect-7 r1 v1: #1 out of moves, 60 actions, 2,000 tokens, $0.2500"
    assert lines[1].startswith("sweep s: 1/2 done · 1 running · 0 failed · 0 left · 0:02:02 elapsed")
    assert lines[2] == "[2/2] baseline/random perfect-7 r2 v1: #2 goal found, 60 actions, 0 tokens, $0.0000"
    assert lines[-1].startswith("sweep s: 2/2 done · 0 running") and lines[-1].endswith("2,000 tokens · $0.2500")


def test_an_ending_reads_as_what_happened():
    assert outcome_text("timed_out", "max_moves reached: 60 actions of 60 allowed") == "out of moves"
    assert outcome_text("timed_out", "max_duration_minutes reached: ran 5.0 of 5 minutes") == "out of time"
    assert outcome_text("failed", "agent_stalled: 3 turns without a valid action") == "stalled"
    assert outcome_text("succeeded", None) == "goal found" and outcome_text("failed", "boom") == "failed"
    assert outcome_text("timed_out", "execution TIMED_OUT: exp-1 reached its execution timeout") == (
        "execution timed out"
    )
    assert outcome_text("aborted", "execution ABORTED: exp-1 was stopped") == "stopped"
    assert outcome_text("failed", "ModelTimeout: no answer in 120 s") == "provider failed"
    assert outcome_text("failed", "ModelThrottled: throttled 13 times") == "throttled"
    assert [ending_text(e) for e in ("success", "agent", "censored", "error", None)] == [
        "success",
        "agent failure",
        "censored",
        "error",
        "running",
    ]


def test_on_a_narrow_terminal_a_line_loses_its_settings_then_its_reason_never_its_id_or_counts():
    head, done = "[12/120] ", ": #1043 provider failed, 0 actions, 0 tokens, $0.0000"
    cell = ("openai/Qwen/Qwen3-8B perfect-11@1234567890 r3", " v1 temperature=0.7")
    reason = ": ModelUnavailable: the OpenAI-compatible server at http://gpu-box:8000/v1 did not answer"
    assert fit_line(head, cell, done, reason, None) == head + "".join(cell) + done + reason  # a pipe: whole
    for width in (80, 100, 120, 160):
        line = fit_line(head, cell, done, reason, width)
        assert len(line) <= width and line.startswith(head) and done in line
    kept = head + cell[0] + done  # the settings go first, then the reason's end
    assert fit_line(head, cell, done, reason, 160) == kept + shorten(reason, 160 - len(kept))
    assert fit_line(head, cell, done, reason, 120).endswith(done + ": ModelUnavailable…")  # then the reason's words
    assert fit_line(head, cell, done, reason, 80) == head + "openai/Qwen…" + done + ": Mod…"  # 80: both at their least
    assert fit_line(head, cell, done, "", 140) == head + "".join(cell) + done  # it fits: nothing cut


def test_a_status_breaks_between_its_parts_never_inside_one():
    parts = ("sweep s: 12/72 done", "2 running", "1 failed", "58 left", "0:05:00 elapsed", "ETA 0:20:00")
    lines = joined(parts, 40).splitlines()
    assert max(map(len, lines)) <= 40 and " · ".join(lines).split(" · ") == list(parts)
