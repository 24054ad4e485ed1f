"""How make test hands files to its workers (tests/scheduling.py): the infrastructure tier as one unit, the longest
units first, the rest in xdist's order, and no test left out."""

from __future__ import annotations

from collections import OrderedDict

from tests.scheduling import INFRASTRUCTURE, LONGEST, LongestFilesFirst

COLLECTION = [
    "tests/unit/test_maze.py::test_a",
    "tests/unit/test_maze.py::test_b",
    "tests/infra/test_nag.py::test_c",
    "tests/integration/test_unlisted.py::test_d",
    "tests/infra/test_grants.py::test_e[x]",
    "tests/integration/test_hostile_sweeps.py::test_f",
    "tests/integration/test_sweep_local.py::Class::test_g",
]


class Worker:
    def __init__(self):
        self.sent: list[int] = []

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent += indexes


def handed_out(collection: list[str]) -> list[list[str]]:
    """The units in the order the scheduler hands them to one worker, each as its test ids."""
    scheduler = LongestFilesFirst.__new__(LongestFilesFirst)  # xdist's constructor reads the command line
    scheduler.workqueue, scheduler.assigned_work = OrderedDict(), {}
    for nodeid in collection:
        scheduler.workqueue.setdefault(scheduler._split_scope(nodeid), {})[nodeid] = False
    worker = Worker()
    scheduler.registered_collections = {worker: collection}
    units = []
    while scheduler.workqueue:
        before = len(worker.sent)
        scheduler._assign_work_unit(worker)
        units.append([collection[i] for i in worker.sent[before:]])
    return units


def test_the_infrastructure_tier_is_one_unit_and_the_longest_units_go_first():
    units = handed_out(COLLECTION)
    assert units[0] == ["tests/infra/test_nag.py::test_c", "tests/infra/test_grants.py::test_e[x]"]
    assert units[1:3] == [
        ["tests/integration/test_hostile_sweeps.py::test_f"],
        ["tests/integration/test_sweep_local.py::Class::test_g"],
    ]
    assert units[3:] == [
        ["tests/unit/test_maze.py::test_a", "tests/unit/test_maze.py::test_b"],
        ["tests/integration/test_unlisted.py::test_d"],
    ]
    assert sorted(nodeid for unit in units for nodeid in unit) == sorted(COLLECTION)  # every test once


def test_the_table_ranks_the_infrastructure_tier_and_names_files_that_exist():
    from pathlib import Path

    root = Path(__file__).parents[2]
    assert INFRASTRUCTURE in LONGEST
    assert [path for path in LONGEST if not (root / path).exists()] == []
