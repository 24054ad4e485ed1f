"""The local runner's patches of moto's interpreter change its speed, not what it does: its copies are deep copies
still, and a Task state's thread, now reused, never makes one task wait for another (its timeout holds)."""

from __future__ import annotations

import copy
import datetime
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from moto.stepfunctions.parser.asl.utils.json_path import NoSuchJsonPathError, extract_json

from oriole_workstation.interpreter_speed import TaskThreads, fields_first, json_copy

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
)


def _containers(value: object) -> list[object]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@given(JSON)
def test_a_json_copy_is_equal_and_shares_no_container_with_its_original(value):
    copied = json_copy(value)
    assert copied == copy.deepcopy(value)
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}


def test_what_is_not_json_is_deep_copied_as_before():
    inner = {"list": [1]}
    value = {"when": datetime.datetime(2026, 1, 1), "pair": (inner, 2), "object": [type("S", (), {})()]}
    copied = json_copy(value)
    assert copied["when"] == value["when"]
    assert copied["pair"][0] == inner and copied["pair"][0] is not inner
    assert copied["object"][0] is not value["object"][0]


NAMES = st.sampled_from(["a", "b", "turnNumber", "_x"])


@given(
    st.recursive(JSON, lambda inner: st.dictionaries(NAMES, inner, max_size=3), max_leaves=12),
    st.lists(NAMES | st.sampled_from(["a[0]", "*", "a-b"]), max_size=3),
)
@settings(deadline=None)  # moto's JSONPath parser builds its tables on a path's first use: slow on a busy machine
def test_a_path_is_answered_as_moto_s_jsonpath_answers_it(data, names):
    """Found or not, a field-only path or another: the same value, or the same error, as moto's own evaluation."""
    path = "".join(["$", *(f".{name}" for name in names)])
    outcomes = []
    for extract in (extract_json, fields_first(extract_json)):
        try:
            outcomes.append(("value", extract(path, data)))
        except NoSuchJsonPathError as error:
            outcomes.append(("error", str(error)))
        except Exception as error:  # noqa: BLE001 - a parse error: both must raise the same
            outcomes.append(("raised", type(error).__name__))
    assert outcomes[0] == outcomes[1]


def test_a_task_never_waits_for_a_busy_one_and_an_idle_thread_is_reused():
    threads = TaskThreads()
    release, first_running, second_ran = threading.Event(), threading.Event(), threading.Event()
    ran_on: list[threading.Thread] = []

    def blocking() -> None:
        first_running.set()
        release.wait(5)

    def quick() -> None:
        ran_on.append(threading.current_thread())
        second_ran.set()

    threads.thread(target=blocking, daemon=True).start()
    assert first_running.wait(5)
    threads.thread(target=quick, daemon=True).start()
    assert second_ran.wait(5), "the second task waited for the first"
    release.set()
    second_ran.clear()
    for _ in range(50):  # the quick task's worker is idle again soon after it ran
        threads.thread(target=quick, daemon=True).start()
        assert second_ran.wait(5)
        second_ran.clear()
    assert len(set(ran_on)) <= 2, "idle workers are reused, not one new thread a task"
