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

# The units whose tests took longest, in seconds of a whole run on 28 November 2026 (2 workers, load average 1-3; a
# worker's first file also pays the worker's cold start: moto's models, the IAM contract's synthesis); remeasure
# when the suite's shape changes (docs/explanation/architecture.md, "Keeping the suite fast").
LONGEST = {
    INFRASTRUCTURE: 122,
    "tests/integration/test_hostile_sweeps.py": 103,
    "tests/integration/test_sweep_local.py": 63,
    "tests/integration/test_hostile_cli.py": 59,
    "tests/integration/test_cli.py": 31,
    "tests/integration/test_doc_examples.py": 31,
    "tests/integration/test_check_aws.py": 30,
    "tests/integration/test_docs.py": 30,
    "tests/browser/test_viewer_in_chromium.py": 24,
    "tests/integration/test_request_timeouts.py": 22,
    "tests/integration/test_cli_aws.py": 20,
    "tests/integration/test_iam_contract.py": 17,
    "tests/integration/test_render_long.py": 17,
    "tests/integration/test_sweep_study.py": 17,
    "tests/integration/test_researcher_view.py": 17,
    "tests/integration/test_fault_table.py": 16,
    "tests/integration/test_replay_corpus.py": 16,
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
