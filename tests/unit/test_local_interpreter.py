"""The local stand-in's corrections to moto's Step Functions interpreter, where it parts from what AWS does."""

from __future__ import annotations

import threading
from contextlib import ExitStack
from datetime import UTC, datetime

from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.program_state import ProgramError, ProgramRunning, ProgramStopped

from oriole_workstation import runner


def program(state) -> Environment:
    """An interpreter environment in ``state`` with no frames: all ``set_error`` reads of it."""
    env = Environment.__new__(Environment)
    env._state_mutex, env._program_state, env._frames = threading.RLock(), state, []
    env.program_state_event = threading.Event()
    return env


def test_an_error_raised_after_a_stop_leaves_the_execution_stopped_and_any_other_error_fails_it():
    error = {"error": "States.Runtime", "cause": "AttributeError('dict' object has no attribute 'region')"}
    stopped = program(ProgramStopped(stop_date=datetime.now(UTC), error=None, cause="stopped from the console"))
    running = program(ProgramRunning())
    with ExitStack() as patches:
        for patch in runner._stops_that_stay_stopped():
            patches.enter_context(patch)
        stopped.set_error(error)
        running.set_error(error)
    assert isinstance(stopped._program_state, ProgramStopped)  # ends ABORTED, as Step Functions ends it
    assert isinstance(running._program_state, ProgramError) and running._program_state.error == error
    Environment.set_error(stopped, error)  # moto's own, the patch undone: the error replaces the stop
    assert isinstance(stopped._program_state, ProgramError)
