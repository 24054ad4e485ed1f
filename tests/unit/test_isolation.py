"""What keeps test sessions apart (tests/isolation.py): a --basetemp claimed by one session is refused to another,
and the run-apart lock lets a serial test start only once the running tests end, with none starting beside it."""

from __future__ import annotations

import os
import threading

import pytest

from tests import isolation


def test_a_basetemp_in_use_is_refused_by_name_and_free_again_once_released(tmp_path):
    folder = str(tmp_path / "suite")
    claim = isolation.claim_basetemp(folder)
    try:
        with pytest.raises(pytest.UsageError, match=f"--basetemp {folder} is in use by another test session"):
            isolation.claim_basetemp(folder)
        other = isolation.claim_basetemp(str(tmp_path / "another"))  # a folder of its own is fine
        os.close(other)
    finally:
        os.close(claim)
    os.close(isolation.claim_basetemp(folder))


def started(target) -> tuple[threading.Thread, threading.Event]:
    """``target(entered)`` on a thread of its own; ``entered`` is set once it holds its lock."""
    entered = threading.Event()
    thread = threading.Thread(target=target, args=(entered,), daemon=True)
    thread.start()
    return thread, entered


def test_a_serial_test_waits_for_the_running_tests_and_no_test_starts_beside_it(tmp_path):
    # Each worker opens the lock files itself: three instances behave as three workers would.
    running, serial, later = (isolation.RunApart(tmp_path) for _ in range(3))
    release_running, release_serial, release_later = threading.Event(), threading.Event(), threading.Event()

    def hold(lock, alone, release):
        def body(entered):
            with lock.holding(alone=alone):
                entered.set()
                release.wait(10)

        return body

    first, first_in = started(hold(running, False, release_running))
    assert first_in.wait(5)
    second, serial_in = started(hold(serial, True, release_serial))
    assert not serial_in.wait(0.3)  # a test is running: the serial one waits
    third, later_in = started(hold(later, False, release_later))
    assert not later_in.wait(0.3)  # and a test arriving now waits behind it, though the lock is only shared
    release_running.set()
    assert serial_in.wait(5) and not later_in.is_set()  # alone
    release_serial.set()
    assert later_in.wait(5)
    release_later.set()
    for thread in (first, second, third):
        thread.join(5)


def test_ordinary_tests_share_the_lock(tmp_path):
    one, two = isolation.RunApart(tmp_path), isolation.RunApart(tmp_path)
    with one.holding(alone=False), two.holding(alone=False):
        pass
