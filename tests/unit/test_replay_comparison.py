"""The replay comparison (pure): a failure reason that names its own experiment compares without the id."""

from __future__ import annotations

from oriole_workstation import replay as replays


def ended(reason: str) -> replays.Stored:
    ending = {
        "status": "failed",
        "failure_reason": reason,
        "goal_found": False,
        "goal_reached_step": None,
        "action_count": 0,
        "turn_count": 0,
    }
    return replays.Stored(ending, [], [], [])


def test_a_failure_reason_naming_its_own_experiment_or_execution_is_compared_without_the_id():
    original = ended("execution FAILED: exp-12-part-2 failed (experiment 12 is already failed; 120 actions)")
    replayed = ended("execution FAILED: exp-31-part-2 failed (experiment 31 is already failed; 120 actions)")
    assert replays.compare(original, replayed, 12, 31).identical


def test_any_other_difference_in_the_reason_still_counts():
    comparison = replays.compare(ended("agent_gave_up: lost at 12"), ended("agent_gave_up: lost at 31"), 12, 31)
    assert comparison.first_difference["what"] == "experiment failure_reason"
    assert comparison.first_difference["expected"] == "agent_gave_up: lost at 12"


def turn(number: int) -> dict:
    return {
        "turn_number": number,
        "first_step": number,
        "action_count": 1,
        "end_reason": "continue",
        "closing_messages": [],
    }


def call(number: int, sent: str | None, response: str = "{}") -> dict:
    request = {"system": "s", "tools": "t", "settings": "x"} | ({"sent_sha256": sent} if sent else {})
    return {
        "turn_number": number,
        "call_index": 1,
        "kind": "turn",
        "request_messages": [],
        "request": request,
        "response": response,
    }


def played(turns: int, sent: list[str | None], **ending) -> replays.Stored:
    end = {
        "status": "succeeded",
        "ending": "success",
        "ending_cause": "goal",
        "failure_reason": None,
        "action_count": turns,
        "turn_count": turns,
        "input_tokens": 100 * turns,
        **ending,
    }
    return replays.Stored(
        end, [turn(n) for n in range(1, turns + 1)], [call(n, sent[n - 1]) for n in range(1, turns + 1)], []
    )


def test_the_bytes_a_call_sent_are_compared_first_and_name_the_first_call_they_differ_at():
    comparison = replays.compare(played(3, ["a", "b", "c"]), played(3, ["a", "B", "C"]), 1, 2)
    assert comparison.first_difference == {
        "turn": 2,
        "step": 2,
        "at": "before step",
        "what": "call 1 request bytes (sent_sha256)",
        "expected": "b",
        "got": "B",
    }


def test_a_call_stored_before_its_bytes_were_hashed_compares_on_the_rest():
    assert replays.compare(played(2, [None, None]), played(2, ["a", "b"]), 1, 2).identical


def test_every_scored_counter_is_compared():
    comparison = replays.compare(played(2, ["a", "b"]), played(2, ["a", "b"], input_tokens=201), 1, 2)
    assert comparison.first_difference["what"] == "experiment input_tokens"


def test_a_run_ended_by_the_clock_replays_as_identical_up_to_its_recorded_end_and_says_so():
    clock = {
        "status": "timed_out",
        "ending": "censored",
        "ending_cause": "max_duration",
        "failure_reason": "max duration reached",
    }
    broke = {
        "status": "failed",
        "ending": "error",
        "ending_cause": "infrastructure",
        "failure_reason": "the replay asked for call 1 of turn 3, which the recorded experiment never made",
    }
    comparison = replays.compare(played(2, ["a", "b"], **clock), played(2, ["a", "b"], **broke), 1, 2)
    assert comparison.identical and comparison.recorded_end == "turn 2: censored (max_duration)"
    assert "identical up to its recorded end (the original ended at turn 2: censored" in replays.describe(comparison)
    differing = replays.compare(played(2, ["a", "b"], **clock), played(2, ["a", "x"], **broke), 1, 2)
    assert differing.first_difference["turn"] == 2


def test_a_run_the_agent_ended_is_compared_on_how_it_ended():
    gave_up = {"status": "failed", "ending": "agent", "ending_cause": "gave_up"}
    comparison = replays.compare(played(2, ["a", "b"], **gave_up), played(2, ["a", "b"]), 1, 2)
    assert comparison.first_difference["what"] == "experiment status" and comparison.recorded_end is None


def test_the_description_counts_in_words_and_places_a_call_before_its_turns_first_step():
    one = replays.describe(replays.compare(played(1, ["a"]), played(1, ["a"]), 7, 8))
    assert one == "experiment 7 replayed as 8: 1 turn, 0 actions, identical"
    differs = replays.describe(replays.compare(played(3, ["a", "b", "c"]), played(3, ["a", "B", "C"]), 7, 8))
    assert differs.startswith(
        "experiment 7 replayed as 8: 3 turns, 0 actions, differs first at turn 2, before step 2, call 1 request bytes"
    )
    ending = replays.describe(replays.compare(played(2, ["a", "b"]), played(2, ["a", "b"], input_tokens=1), 7, 8))
    assert "differs first at turn 2, after step 2, experiment input_tokens" in ending


def test_several_experiments_named_read_as_a_list_not_alternatives():
    from oriole_workstation.results import Filters

    assert Filters(ids=(9,)).describe() == "experiment 9"
    assert Filters(ids=(9, 3, 5)).describe() == "experiments 9, 3 and 5"
    assert Filters(sweeps=("a", "b")).describe() == "sweep a or b"
