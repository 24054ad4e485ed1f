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
