"""The search over T, per seed (torch-free): a bracket [T_pass, T_fail) of the smallest T not memorized.

A seed's outcomes are {T: passed} (passed: train accuracy >= the threshold at the lowest-loss
checkpoint, memcap.training). Its datasets are nested (the first T examples of one pool,
memcap.capacity.probes), so its outcome is monotone in T up to training noise. T_fail is the smallest
failing T, T_pass the largest passing T below it; a pass above T_fail (noise) is counted, not used.

Next probes: the preset's start; then T times `grow` until a failure (divided until a pass); then the
geometric middle of the bracket, or with k probes a round the k points that split it into k + 1 equal
ratios, until (T_fail − T_pass) <= rel_tol·T_pass. A seed's capacity is then the bracket's geometric
middle; the architecture's T* is the mean over seeds with a t interval (memcap.capacity.summary).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

OPEN, CLOSED, ABOVE, BELOW, EXHAUSTED = "open", "closed", "above pool", "below t_min", "probes exhausted"


@dataclass(frozen=True)
class Bracket:
    low: int | None          # T_pass: the largest passing T below T_fail
    high: int | None         # T_fail: the smallest failing T
    non_monotone: int        # passes above T_fail (training noise)
    probes: int

    def width(self) -> float:
        return (self.high - self.low) / self.low if self.low and self.high else math.inf

    def middle(self) -> float:
        """The seed's capacity: the bracket's geometric middle."""
        return math.sqrt(self.low * self.high) if self.low and self.high else math.nan


def bracket(outcomes: dict[int, bool]) -> Bracket:
    fails = [T for T, ok in outcomes.items() if not ok]
    high = min(fails) if fails else None
    passes = [T for T, ok in outcomes.items() if ok and (high is None or T < high)]
    above = sum(1 for T, ok in outcomes.items() if ok and high is not None and T > high)
    return Bracket(max(passes) if passes else None, high, above, len(outcomes))


def status(b: Bracket, p: dict) -> str:
    if b.low is not None and b.high is not None and b.high - b.low <= max(1, p["rel_tol"] * b.low):
        return CLOSED
    if b.high is None and b.low is not None and b.low >= p["pool"]:
        return ABOVE
    if b.low is None and b.high is not None and b.high <= p["t_min"]:
        return BELOW
    if b.probes >= p["max_probes"]:
        return EXHAUSTED
    return OPEN


def next_sizes(outcomes: dict[int, bool], p: dict, start: int, k: int = 1) -> list[int]:
    """The next k (or fewer) T to probe for one seed; [] once its search has ended."""
    b = bracket(outcomes)
    if status(b, p) != OPEN:
        return []
    k = min(k, p["max_probes"] - b.probes)
    g = p["grow"]
    if b.low is None and b.high is None:               # the first round: around the start
        sizes = [start * g ** (i - (k - 1) / 2) for i in range(k)]
    elif b.high is None:
        sizes = [b.low * g ** i for i in range(1, k + 1)]
    elif b.low is None:
        sizes = [b.high / g ** i for i in range(1, k + 1)]
    else:                                               # split [low, high) into k + 1 equal ratios
        ratio = b.high / b.low
        sizes = [b.low * ratio ** (i / (k + 1)) for i in range(1, k + 1)]
    lo, hi = (b.low or p["t_min"] - 1) + 1, (b.high or p["pool"] + 1) - 1   # strictly inside what is known
    out = []
    for T in sizes:
        T = min(max(round(T), lo, p["t_min"]), hi, p["pool"])
        if T not in outcomes and T not in out:
            out.append(T)
    return out


def budget_probe(brackets: dict[int, Bracket]) -> tuple[int, int] | None:
    """(seed, T) trained again at budget_factor times the steps: the architecture's first failing T
    (the smallest T_fail over its seeds; the lowest seed on a tie). None while none has failed."""
    fails = sorted((b.high, seed) for seed, b in brackets.items() if b.high is not None)
    return (fails[0][1], fails[0][0]) if fails else None


Outcomes = dict[int, dict[int, bool]]   # seed -> {T: passed}


def next_round(outcomes: dict[tuple[int, int], Outcomes], checked: Callable[[tuple[int, int], int, int], bool],
               p: dict, starts: dict[tuple[int, int], int], k: int = 1) -> list[tuple[int, int, int, int, int]]:
    """The next round's probes (H, d_h, seed, T, budget) of every architecture: k a seed still open,
    or, once all its seeds have ended, its budget check unless checked(arch, seed, T) says it is done."""
    out = []
    for arch, by_seed in outcomes.items():
        sizes = {seed: next_sizes(o, p, starts[arch], k) for seed, o in by_seed.items()}
        out += [(*arch, seed, T, 1) for seed, Ts in sizes.items() for T in Ts]
        if p["budget_factor"] > 1 and not any(sizes.values()):
            check = budget_probe({seed: bracket(o) for seed, o in by_seed.items()})
            if check and not checked(arch, *check):
                out.append((*arch, *check, p["budget_factor"]))
    return out


def simulate(p: dict, starts: dict[tuple[int, int], int], passes: Callable[[int, int, int, int, int], bool],
             k: int = 1) -> list[list[tuple[int, int, int, int, int]]]:
    """The rounds a search takes against an oracle passes(H, d_h, seed, T, budget) (tests, cost projections)."""
    outcomes = {arch: {int(s): {} for s in p["seeds"]} for arch in starts}
    checked: set = set()
    rounds = []
    while todo := next_round(outcomes, lambda arch, seed, T: (arch, seed, T) in checked, p, starts, k):
        rounds.append(todo)
        for H, dh, seed, T, budget in todo:
            if budget == 1:
                outcomes[H, dh][seed][T] = passes(H, dh, seed, T, budget)
            else:
                checked.add(((H, dh), seed, T))
    return rounds
