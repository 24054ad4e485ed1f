"""A long run drawn within a stated memory budget (issue 37): runs seeded by SQL, not played, drawn by ``oriole
render`` in a process of its own whose peak memory is compared with drawing a three-action run's
(``bench/bench_render_memory.py``, whose functions these are).

Two sizes, so that what the budget guards is checked in seconds: the budget itself at 50,000 actions, and the slope
between 10,000 and 50,000 actions, which is what grows with a run. Drawing costs about 130 B an action at these
sizes (arrays growing in steps), 56 B from 50,000 to 100,000; holding a ``Step`` object an action would add about
320 B, reading the run whole about 50 KB. The benchmark measures 200,000 actions and more (``make bench``,
``bench/results.json``)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from bench import bench_render_memory as bench
from oriole.store import db
from oriole_workstation import render
from oriole_workstation.results import Filters, Results

SHORT, LONG = 10_000, 50_000
SLOPE_BYTES = 250  # per action between the two sizes: the measured 130 with room, below a Step object's 320


@pytest.fixture(scope="module")
def runs(local) -> Iterator[dict[str, int]]:
    """A three-action run, and a run to lengthen by SQL; both deleted afterwards, so the tests that run next in
    this worker's database (exports, reports of every experiment) do not read 50,000 more actions."""
    short = local.run(bench.SHORT_RUN).as_json()["experiment_id"]
    long = local.run(bench.LONG_RUN).as_json()["experiment_id"]
    yield {"three": short, "long": long}
    assert local.results.delete(Filters(ids=(short, long))) == sorted((short, long))


def test_a_long_replay_is_drawn_within_the_memory_budget_and_its_slope(database_url, local, runs, tmp_path):
    three, _ = bench.drawn(database_url, tmp_path, str(runs["three"]), *bench.every_format(tmp_path, "three"))
    bench.lengthen(local.store.conn, runs["long"], SHORT)
    shorter, _ = bench.drawn(database_url, tmp_path, str(runs["long"]), *bench.every_format(tmp_path, "s"))
    bench.lengthen(local.store.conn, runs["long"], LONG)
    peak, printed = bench.drawn(database_url, tmp_path, str(runs["long"]), *bench.every_format(tmp_path, "l"))
    growth_bytes, slope = (peak - three) * 1024, (peak - shorter) * 1024 / (LONG - SHORT)
    print(f"peak RSS: {three} KiB for 3 actions, {shorter} for {SHORT:,}, {peak} for {LONG:,}: {slope:.0f} B/action")
    assert growth_bytes <= render.MEMORY_BASE_BYTES + render.MEMORY_PER_ACTION_BYTES * LONG, (three, peak)
    assert slope <= SLOPE_BYTES, (shorter, peak)
    assert printed.count("wrote ") == 4
    page = (tmp_path / "l.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script id="run-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    end = (1, 2)  # 50,000 = 3 x 16,666 + 2: the last cycle ends after its wall hit and its step south
    assert len(data["steps"]) == LONG and data["steps"][-1]["to"] == list(end)
    with db.connect(database_url) as conn:
        run = render.Run.from_record(Results(conn).experiment_run(runs["long"]))
    assert len(run.steps) == LONG and run.position(LONG) == end
    assert data["centres"][-1] == [round(c, 1) for c in render.layout(run).centre(end)]  # the agent's last tile
    assert data["steps"][999]["reasoning"] == "thinking about step 1000"
    assert page.count('<path class="bump"') == 1  # one wall, hit 16,667 times, drawn once
