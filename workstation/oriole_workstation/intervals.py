"""An interval for a success rate whose runs share mazes: a bootstrap over mazes.

Repetitions on one maze are not independent trials: an agent that solves a maze tends to solve it again.
The Wilson interval treats every run as independent; resampling whole mazes (with replacement, each with all
its runs) keeps each maze's runs together, so the interval widens when the rate rests on few mazes. The
resampling is seeded, so the same data always gives the same interval.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

DRAWS = 2000
LEVEL = 0.95


def maze_interval(per_maze: Sequence[tuple[int, int]], draws: int = DRAWS, seed: int = 0) -> tuple[float, float] | None:
    """The 95% percentile interval of the success rate over ``draws`` resamples of the mazes, each maze given
    as ``(runs, successes)``; None without runs."""
    mazes = [(runs, successes) for runs, successes in per_maze if runs]
    if not mazes:
        return None
    rng = random.Random(seed)
    rates = []
    for _ in range(draws):
        sample = [mazes[rng.randrange(len(mazes))] for _ in mazes]
        rates.append(sum(s for _, s in sample) / sum(r for r, _ in sample))
    rates.sort()
    tail = (1 - LEVEL) / 2
    return rates[int(tail * (draws - 1))], rates[int((1 - tail) * (draws - 1))]


def paired_interval(per_maze: Sequence[Sequence[int]], draws: int = DRAWS, seed: int = 0) -> tuple[float, float] | None:
    """The 95% percentile interval of a paired difference in success (a's rate less b's over the shared runs) over
    ``draws`` resamples of the mazes, each maze given as ``(pairs, only_a, only_b)`` and drawn with all its pairs
    (the repetitions nested); None on fewer than two mazes, where resampling mazes says nothing."""
    mazes = [(pairs, only_a - only_b) for pairs, only_a, only_b in per_maze if pairs]
    if len(mazes) < 2:
        return None
    rng = random.Random(seed)
    differences = []
    for _ in range(draws):
        sample = [mazes[rng.randrange(len(mazes))] for _ in mazes]
        differences.append(sum(d for _, d in sample) / sum(n for n, _ in sample))
    differences.sort()
    tail = (1 - LEVEL) / 2
    return differences[int(tail * (draws - 1))], differences[int((1 - tail) * (draws - 1))]
