"""moto's Step Functions interpreter without the constant work it re-does at every state.

The local runner (``runner.LocalAws``) runs the real ASL files in moto's interpreter; these patches, active while a
``LocalAws`` is, change how fast it runs and nothing it does:

- each JSONPath expression is parsed once, not at every evaluation (a ResultPath through a second parser of its
  own); parsed paths are immutable;
- one boto3 client per service, not a new one for every Lambda invoke (clients are thread-safe; moto signs every
  call with fixed test keys anyway);
- a definition is parsed once a process, not again for every execution of a chain nor for every ``LocalAws`` that
  deploys it (after being parsed to check it when the state machine was first created, as Step Functions does once);
- a path that only names fields (``$``, ``$.experimentId``, ``$.progress.decision``: every path of the flows) is
  followed through the input's objects directly; any other path, or one that does not lead to a value, goes to
  moto's JSONPath evaluation, which gives its answer or its error as before;
- the thread moto runs each Task state in (so that the state's ``TimeoutSeconds`` holds while the task goes on)
  is a reused one, not a new one per state: a waiting worker takes the next task at once, a new worker is started
  only when every one is busy, so no task ever waits for another and the timeout holds as before;
- the copies moto takes of a state's input, parameters and context at each step (``copy.deepcopy``) are made by a
  copier for the JSON values they are, which hands any other value to ``copy.deepcopy``: the same copies, without
  deepcopy's general machinery.

The parsing and the client were over half of a local turn's interpreter time; the threads and the copies then took
the interpreter's own CPU from 3.0 to 2.1 ms a turn (``bench/bench_local_run.py``, measured per thread; see
``docs/explanation/performance.md``).
"""

from __future__ import annotations

import copy
import functools
import queue
import re
import threading
from collections.abc import Callable, Iterable
from types import SimpleNamespace
from typing import Any
from unittest import mock

IDLE_WORKER_SECONDS = 30.0  # a task thread left idle this long ends (a new one starts when needed)


def interpreter_patches() -> list:
    """The patches, in the order they start."""
    return [*_parsed_once(), *_simple_paths(), *_reused_task_threads(), *_json_copies()]


def _parsed_once() -> list:
    """JSONPath expressions and definitions parsed once; one boto3 client per service (see the module's text). A
    parsed definition is a tree of declarations that evaluation only reads (what an execution changes lives in its
    own environment), save a key each declaration draws lazily to find its entries there: drawn before the tree is
    shared, so that two executions starting at once cannot draw two."""
    from jsonpath_ng import parse as parse_result_path
    from jsonpath_ng.ext import parse
    from moto.stepfunctions.parser.asl.component.common.path import result_path
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
    from moto.stepfunctions.parser.asl.utils import json_path

    new_parse = AmazonStateLanguageParser.parse

    def parse_definition(definition: str):
        return _parsed_definition(definition, new_parse)

    new_client = lambda_eval_utils.boto_client_for

    @functools.cache
    def client_for(region: str, service: str):
        return new_client(region=region, service=service)

    def cached_client(region: str, service: str, state_credentials=None):
        return client_for(region, service)

    return [
        mock.patch.object(json_path, "parse", functools.lru_cache(maxsize=1024)(parse)),
        mock.patch.object(result_path, "parse", functools.lru_cache(maxsize=1024)(parse_result_path)),
        mock.patch.object(lambda_eval_utils, "boto_client_for", cached_client),
        mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(parse_definition)),
    ]


@functools.lru_cache(maxsize=16)
def _parsed_definition(definition: str, parse: Callable[[str], tuple]) -> tuple:
    """``definition`` parsed by ``parse`` (moto's parser), once per process: every ``LocalAws`` of a process deploys
    the same two flows, and parsing them was two thirds of starting one (0.7 of 1.1 s of CPU)."""
    program, tree = parse(definition)
    _draw_heap_keys(program, set())
    return program, tree


def _draw_heap_keys(node: object, seen: set[int]) -> None:
    """Draw the heap key of every evaluation component under ``node`` (moto draws each on first use)."""
    from moto.stepfunctions.parser.asl.component.component import Component
    from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent

    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, EvalComponent):
        node.heap_key  # noqa: B018 - drawn now, before the tree is shared
    children: Iterable[object] = ()
    if isinstance(node, Component):
        children = vars(node).values()
    elif isinstance(node, list | tuple):
        children = node
    elif isinstance(node, dict):
        children = node.values()
    for child in children:
        if isinstance(child, Component | list | tuple | dict):
            _draw_heap_keys(child, seen)


_FIELDS_ONLY = re.compile(r"\$(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@functools.lru_cache(maxsize=1024)
def _field_names(path: str) -> tuple[str, ...] | None:
    """The field names of a path that names only fields (``$.a.b`` -> ``("a", "b")``); None for any other path."""
    if _FIELDS_ONLY.fullmatch(path) is None:
        return None
    return tuple(path.split(".")[1:])


def fields_first(extract_json: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """``extract_json`` (moto's JSONPath evaluation) with a path of field names followed directly through objects:
    the one value JSONPath finds there. Anything else (a list on the way, a missing field, any other path) is
    ``extract_json``'s to answer, its errors included."""

    def extract(path: str, data: Any) -> Any:
        names = _field_names(path)
        if names is None:
            return extract_json(path, data)
        value = data
        for name in names:
            if type(value) is not dict or name not in value:
                return extract_json(path, data)
            value = value[name]
        return value

    return extract


def _simple_paths() -> list:
    """Field-only paths followed directly (see the module's text), wherever moto's interpreter evaluates one."""
    from moto.stepfunctions.parser.asl.component.common.string import string_expression
    from moto.stepfunctions.parser.asl.component.intrinsic.argument import argument
    from moto.stepfunctions.parser.asl.component.state.choice.comparison.operator.implementations import (
        boolean_equals,
        numeric,
        string_operators,
        timestamp_operators,
    )
    from moto.stepfunctions.parser.asl.eval import states
    from moto.stepfunctions.parser.asl.utils import json_path

    extract = fields_first(json_path.extract_json)
    modules = (json_path, states, string_expression, argument, boolean_equals, numeric, string_operators)
    return [mock.patch.object(module, "extract_json", extract) for module in (*modules, timestamp_operators)]


class _Worker:
    """A daemon thread that runs one task after another, waiting in the idle list between them."""

    def __init__(self, pool: TaskThreads):
        self._pool = pool
        self._tasks: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        threading.Thread(target=self._work, name="oriole-task-worker", daemon=True).start()

    def run(self, task: Callable[[], object]) -> None:
        self._tasks.put(task)

    def _work(self) -> None:
        while True:
            try:
                task = self._tasks.get(timeout=IDLE_WORKER_SECONDS)
            except queue.Empty:
                if self._pool.retire(self):
                    return
                continue  # taken for a task just as it timed out: the task is on its way
            task()  # moto's task function reports its own exceptions to the state; one it lets out ends this worker
            self._pool.rest(self)


class TaskThreads:
    """Workers for moto's Task states: a waiting one if any, else a new one (never a queue of tasks)."""

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._guard = threading.Lock()

    def start(self, task: Callable[[], object]) -> None:
        with self._guard:
            worker = self._idle.pop() if self._idle else None
        (worker or _Worker(self)).run(task)

    def rest(self, worker: _Worker) -> None:
        with self._guard:
            self._idle.append(worker)

    def retire(self, worker: _Worker) -> bool:
        """Take an idle worker out of the pool; False when it was just given a task."""
        with self._guard:
            if worker in self._idle:
                self._idle.remove(worker)
                return True
            return False

    def thread(self, target: Callable[[], object], daemon: bool = True) -> SimpleNamespace:
        """What moto's ``Thread(target=..., daemon=True)`` gives: something to ``start()``."""
        return SimpleNamespace(start=lambda: self.start(target))


class _Discarded(list):
    """moto keeps every thread it starts in a list that nothing reads (``TMP_THREADS``), with each task's frame
    reachable from it: a long run's memory grew by every Task state it ran."""

    def append(self, item: object) -> None:
        pass


def _reused_task_threads() -> list:
    """Each Task state's evaluation on a reused worker thread (see the module's text)."""
    from moto.stepfunctions.parser.asl.component.state.exec import execute_state

    return [
        mock.patch.object(execute_state, "Thread", TaskThreads().thread),
        mock.patch.object(execute_state, "TMP_THREADS", _Discarded()),
    ]


_ATOMS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """``copy.deepcopy`` of a JSON value (dicts, lists, strings, numbers, booleans, null); any other value in it
    (a tuple, a date, an object) is copied by ``copy.deepcopy``. Keys are strings, kept as they are."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    return copy.deepcopy(value)


def _json_copies() -> list:
    """The interpreter's per-state copies made by ``json_copy`` (see the module's text)."""
    from moto.stepfunctions.parser.asl.component.common.path import result_path
    from moto.stepfunctions.parser.asl.component.common.string import string_expression
    from moto.stepfunctions.parser.asl.component.state.exec import execute_state
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service
    from moto.stepfunctions.parser.asl.eval import environment, states

    copier = SimpleNamespace(deepcopy=json_copy)
    modules = (result_path, string_expression, execute_state, state_task_service, environment, states)
    return [mock.patch.object(module, "copy", copier) for module in modules]
