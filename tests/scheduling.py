"""How ``make test`` hands the suite's files to its xdist workers (``--dist loadfile``): a file's tests stay on one
worker, as with xdist's own ``loadfile``, with two changes that shorten the run on two cores.

- The infrastructure tier is one unit. Each of its files synthesizes the CDK app in process (a Node.js jsii runtime
  started once per process, then the stacks of each context; ``tests/infra/conftest.py`` keeps the common ones per
  process): split over two workers, both start the runtime and synthesize the same stacks.
- The longest units start first (longest processing time first, the classic rule for balancing jobs over
  machines): a long file handed out last would run alone while the other worker has nothing left. ``LONGEST`` holds
  the files measured longest (seconds of a run at low load, ``--durations``/``--junitxml``); the rest follow in
  xdist's order (most tests first). A file missing from the list is only scheduled later, never skipped: the list
  is a hint, so a renamed or new long file costs time, not tests.
"""

from __future__ import annotations

from collections import OrderedDict

from xdist.scheduler import LoadFileScheduling

INFRASTRUCTURE = "tests/infra/"

# The units whose tests took longest, in seconds of the whole run measured on 28 November 2026 (2 workers, load
# average 6-11: only their order matters); remeasure when the suite's shape changes (docs/explanation/
# architecture.md, "Keeping the suite fast").
LONGEST = {
    INFRASTRUCTURE: 331,
    "tests/integration/test_hostile_sweeps.py": 191,
    "tests/integration/test_sweep_local.py": 178,
    "tests/integration/test_hostile_cli.py": 138,
    "tests/integration/test_docs.py": 91,
    "tests/integration/test_iam_contract.py": 84,
    "tests/integration/test_fault_table.py": 74,
    "tests/integration/test_replay_corpus.py": 71,
    "tests/integration/test_doc_examples.py": 69,
    "tests/integration/test_database_load.py": 69,
    "tests/integration/test_render_long.py": 68,
    "tests/integration/test_cli.py": 65,
    "tests/integration/test_sweep_study.py": 48,
    "tests/integration/test_inspect_export.py": 46,
    "tests/integration/test_local_state_machine.py": 44,
    "tests/integration/test_installed_package.py": 42,
}


class LongestFilesFirst(LoadFileScheduling):
    """``loadfile`` with the infrastructure tier as one unit and the longest units handed out first."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return INFRASTRUCTURE if path.startswith(INFRASTRUCTURE) else path

    def _assign_work_unit(self, node) -> None:
        if not getattr(self, "_ordered", False):  # the queue is complete on the first hand-out, and not before
            ranked = sorted(self.workqueue.items(), key=lambda unit: -LONGEST.get(unit[0], 0))
            self.workqueue = OrderedDict(ranked)  # sorted() keeps xdist's order among the unranked
            self._ordered = True
        super()._assign_work_unit(node)
