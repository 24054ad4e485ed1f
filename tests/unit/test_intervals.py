"""The bootstrap over mazes: seeded, inside [0, 1], and wider when a rate rests on fewer mazes; Wilson's over the
mazes where every maze has the same rate and the bootstrap would give a point."""

from __future__ import annotations

import pytest

from oriole_workstation.intervals import Method, Z, maze_band, maze_interval, wilson


def test_the_interval_is_seeded_and_holds_the_rate():
    mazes = [(3, 3), (3, 0), (3, 2), (3, 3), (3, 1)] * 4
    low, high = maze_interval(mazes)
    assert maze_interval(mazes) == (low, high)
    assert 0 <= low < 36 / 60 < high <= 1


def test_runs_that_share_few_mazes_get_a_wider_interval_than_the_same_runs_on_many_mazes():
    few = [(10, 10), (10, 0)]  # 20 runs on 2 mazes: solved all or nothing
    many = [(1, 1)] * 10 + [(1, 0)] * 10  # 20 runs on 20 mazes, the same rate
    few_low, few_high = maze_interval(few)
    many_low, many_high = maze_interval(many)
    assert few_high - few_low > many_high - many_low


def test_no_runs_no_interval():
    assert maze_interval([]) is None and maze_interval([(0, 0)]) is None


def test_the_bounds_are_the_50th_and_1950th_of_the_sorted_resampled_rates_as_the_docs_say():
    """docs/explanation/statistics.md: 2,000 resamples of the mazes (seeded with 0), no interpolation: an
    independent computation that draws the same mazes gets the same bounds."""
    import random

    mazes = [(3, 3), (3, 0), (3, 2), (4, 4), (2, 1), (3, 1)]
    draws = random.Random(0)
    rates = []
    for _ in range(2000):
        sample = [mazes[draws.randrange(len(mazes))] for _ in mazes]
        rates.append(sum(s for _, s in sample) / sum(r for r, _ in sample))
    rates.sort()
    assert maze_interval(mazes) == (rates[49], rates[1949])


def test_mazes_all_solved_get_wilson_over_the_mazes_not_a_point():
    """24/24 on 12 mazes: every resample is 100%, so the interval is Wilson's with 12 trials (one per maze), 12/(12 +
    z^2) at its low end, wider than Wilson's over the 24 runs; flagged by its method."""
    low, high, method = maze_band([(2, 2)] * 12)
    assert method is Method.WILSON_MAZES and high == 1.0
    assert low == pytest.approx(12 / (12 + Z * Z)) and low < wilson(24, 24)[0]
    assert maze_interval([(2, 2)] * 12) == (1.0, 1.0)  # what it replaces: the degenerate percentile interval
    low, high, method = maze_band([(2, 0)] * 3 + [(1, 0)] * 4)  # every run failed on 7 mazes
    assert method is Method.WILSON_MAZES and (low, high) == pytest.approx((0.0, wilson(0, 7)[1]), abs=1e-12)
    low, high, method = maze_band([(2, 1)] * 3)  # every maze 50%: the same point; Wilson's at 1.5 of 3
    assert method is Method.WILSON_MAZES and (low, high) == pytest.approx(wilson(1.5, 3))


def test_mazes_that_differ_keep_the_bootstrap_exactly():
    mazes = [(2, 2)] * 11 + [(2, 1)]
    assert maze_band(mazes) == (*maze_interval(mazes), Method.BOOTSTRAP)
    mixed = [(2, 2)] * 6 + [(2, 0)] * 6  # all or nothing per maze, but not the same on every maze
    assert maze_band(mixed) == (*maze_interval(mixed), Method.BOOTSTRAP)
    assert maze_band([]) is None
