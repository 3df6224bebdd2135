"""Has the capacity stopped growing with the training budget? An equivalence test (torch-free).

The rise per doubling r = T₅₀(2B) / T₅₀(B) from the seeds searched at both budgets, as pairs: a seed's
threshold at B lies in its bracket there, and at 2B in its bracket there, so its own log-ratio lies in
(log T_pass(2B) − log T_fail(B), log T_fail(2B) − log T_pass(B)), an interval-censored observation.
The seeds' log-ratios are fitted as the transition's thresholds are (memcap.capacity.transition: a
logistic location and scale by maximum likelihood, the profile interval), so what the seeds share
(their data, their initialisation) cancels within each pair.

The verdict is two one-sided tests (Schuirmann 1987; Lakens 2017) at 5% each, the 90% interval of r:
  converged     the interval lies inside [1/MARGIN, MARGIN]: no more than ±10% per doubling;
  still rising  the interval lies above 1: T₅₀(B) is a lower bound of what more steps memorize;
  undecided     anything else (too few seeds, brackets too coarse for a ±10% answer).
With four budgets or more, T₅₀(B) = T∞ − c·B^(−β) is fitted (memcap.capacity.curve.limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memcap.capacity import transition

MARGIN = 1.1            # equivalence: r within [1/1.1, 1.1]
CONFIDENCE = 0.90       # two one-sided tests at 5%: the 90% interval
CONVERGED, RISING, UNDECIDED = "converged", "still rising", "undecided"
NO_CURVE = "not run (no budget curve in this preset)"


@dataclass(frozen=True)
class Rise:
    ratio: float        # r = T₅₀(2B) / T₅₀(B) (the pairs' fitted median ratio)
    low: float          # its 90% interval
    high: float
    pairs: int
    verdict: str
    why: str = ""       # an undecided verdict's reason where it is not the interval


def paired(before: dict[int, bool], after: dict[int, bool]) -> transition.Interval | None:
    """One seed's log T_s(2B) − log T_s(B) from its outcomes at both budgets; None without both."""
    a, b = transition.seed_interval(before), transition.seed_interval(after)
    if a is None or b is None:
        return None
    return transition.Interval(b.low - a.high, b.high - a.low)


def verdict(low: float, high: float) -> str:
    """From r's 90% interval."""
    if 1 / MARGIN <= low and high <= MARGIN:
        return CONVERGED
    if low > 1:
        return RISING
    return UNDECIDED


def rise(before: dict[int, dict[int, bool]], after: dict[int, dict[int, bool]]) -> Rise:
    """r with its 90% interval and the verdict, from {seed: {T: passed}} at B and at 2B (the seeds of
    both; the outcomes at 2B include the passes carried from B: memcap.capacity.search.at_budget)."""
    pairs = [d for s in before if s in after and (d := paired(before[s], after[s])) is not None]
    nan = math.nan
    try:
        f = transition.fit(pairs, CONFIDENCE)
    except transition.NoTransition as why:
        return Rise(nan, nan, nan, len(pairs), UNDECIDED, f"{len(pairs)} paired seeds: {why}")
    low, high = math.exp(f.low), math.exp(f.high)
    return Rise(math.exp(f.location), low, high, len(pairs), verdict(low, high))
