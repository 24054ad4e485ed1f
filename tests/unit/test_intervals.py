"""The bootstrap over mazes: seeded, inside [0, 1], and wider when a rate rests on fewer mazes."""

from __future__ import annotations

from oriole_workstation.intervals import maze_interval


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
