"""An interval for a success rate whose runs share mazes: a bootstrap over mazes.

Repetitions on one maze are not independent trials: an agent that solves a maze tends to solve it again.
The Wilson interval treats every run as independent; resampling whole mazes (with replacement, each with all
its runs) keeps each maze's runs together, so the interval widens when the rate rests on few mazes. The
resampling is seeded, so the same data always gives the same interval.

Where every maze's runs all succeeded (or all failed; or, rarer, every maze has the same rate), every resample gives
the same rate and the percentile interval shrinks to a point: 24/24 on 12 mazes would read 100.0-100.0, narrower
than Wilson's over the runs. There the interval over mazes is the Wilson score interval with each maze one
independent trial (n = the mazes), wider than Wilson's over the runs, and says so (``Method.WILSON_MAZES``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from enum import StrEnum
from fractions import Fraction

DRAWS = 2000
LEVEL = 0.95
Z = 1.959963984540054  # the standard normal's 97.5th percentile, as in migrations/views/wilson_lower.sql


class Method(StrEnum):
    """How an interval over mazes was found: the bootstrap, or (every maze the same rate, all successes or all
    failures in practice, where the bootstrap gives a point) Wilson's with the mazes as its trials."""

    BOOTSTRAP = "bootstrap"
    WILSON_MAZES = "wilson over mazes"


def wilson(successes: float, trials: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval (``wilson_lower`` and ``wilson_upper`` in SQL, computed the same way); None
    without trials. ``successes`` may be fractional: trials that each carry a rate."""
    if trials <= 0:
        return None
    p, n = successes / trials, float(trials)
    centre = p + Z * Z / (2 * n)
    spread = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + Z * Z / n)), min(1.0, (centre + spread) / (1 + Z * Z / n))


def maze_band(per_maze: Sequence[tuple[int, int]]) -> tuple[float, float, Method] | None:
    """The 95% interval over these mazes (``(runs, successes)`` each) and how it was found: ``maze_interval``'s
    bootstrap, or, where every maze has the same success rate (all succeeded or all failed, in practice) and so
    every resample too, Wilson's with the mazes as its trials at that rate; None without runs."""
    mazes = [(runs, successes) for runs, successes in per_maze if runs]
    if mazes and len({Fraction(successes, runs) for runs, successes in mazes}) == 1:
        runs, successes = mazes[0]
        interval = wilson(len(mazes) * successes / runs, len(mazes))
        return None if interval is None else (*interval, Method.WILSON_MAZES)
    interval = maze_interval(mazes)
    return None if interval is None else (*interval, Method.BOOTSTRAP)


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
