"""The search over T, per seed (torch-free): a bracket [T_pass, T_fail) of the smallest T not memorized.

A seed's outcomes are {T: passed} (passed: train accuracy >= the threshold at the lowest-loss
checkpoint, memcap.training). Its datasets are nested (the first T examples of one pool,
memcap.capacity.probes), so its outcome is monotone in T up to training noise. T_fail is the smallest
failing T, T_pass the largest passing T below it; a pass above T_fail (noise) is counted, not used.

Next probes: the preset's start; then T times `grow` until a failure (divided until a pass); then the
geometric middle of the bracket, or with k probes a round the k points that split it into k + 1 equal
ratios, until (T_fail − T_pass) <= rel_tol·T_pass. A seed's capacity is then the bracket's geometric
middle; the architecture's T* is the mean over seeds with a t interval (memcap.capacity.summary).

The budget curve (a preset's `budgets`, e.g. [1, 2, 4] times the paper's steps): once a seed's search
at one budget has ended, its search at the next starts from that bracket. Its passes count at the next
budget too (a T memorized in fewer steps is taken as memorized in more), and its first probe there is
the previous T_fail: a failure again closes the bracket where it was, a pass moves it up by `grow`
steps, then the bracket is split as before. So budget 1 is the search without a curve (the same
probes), and the budget check's probe (the first failing T at 2x) is the curve's first probe at 2 of
that seed, trained once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
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


def next_sizes(outcomes: dict[int, bool], p: dict, start: int, k: int = 1, probes: int | None = None) -> list[int]:
    """The next k (or fewer) T to probe for one seed; [] once its search has ended (probes: those
    trained at this budget, where outcomes also holds passes taken from a smaller one)."""
    b = bracket(outcomes)
    if probes is not None:
        b = replace(b, probes=probes)
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
ByBudget = dict[int, Outcomes]          # budget -> seed -> {T: passed}


def at_budget(curve: dict[int, dict[int, bool]], budget: int) -> dict[int, bool]:
    """One seed's outcomes at a budget ({budget: {T: passed}}): its probes there, and the passes of
    smaller budgets at T not probed there."""
    own = curve.get(budget, {})
    taken = {T: True for b, o in curve.items() if b < budget for T, ok in o.items() if ok and T not in own}
    return {**taken, **own}


def bracket_at(curve: dict[int, dict[int, bool]], budget: int) -> Bracket:
    """The seed's bracket at a budget; `probes` counts only those trained at it."""
    return replace(bracket(at_budget(curve, budget)), probes=len(curve.get(budget, {})))


def seed_next(curve: dict[int, dict[int, bool]], budgets: list[int], p: dict, start: int,
              k: int = 1) -> list[tuple[int, int]]:
    """The next (T, budget) probes of one seed on its budget curve: the first budget whose search is
    still open; [] once every budget's has ended."""
    prev = None
    for budget in budgets:
        own = curve.get(budget, {})
        if prev is not None and not own and prev.high is not None:
            return [(prev.high, budget)]        # the previous budget's first failure, asked again
        sizes = next_sizes(at_budget(curve, budget), p, start, k, probes=len(own))
        if sizes:
            return [(T, budget) for T in sizes]
        prev = bracket_at(curve, budget)
    return []


def seed_curve(by_budget: ByBudget, seed: int) -> dict[int, dict[int, bool]]:
    return {b: o.get(seed, {}) for b, o in by_budget.items()}


def next_round(outcomes: dict[tuple[int, int], ByBudget], checked: Callable[[tuple[int, int], int, int], bool],
               p: dict, starts: dict[tuple[int, int], int], k: int = 1,
               budgets: Callable[[tuple[int, int]], list[int]] = lambda arch: [1]) -> list[tuple[int, int, int, int, int]]:
    """The next round's probes (H, d_h, seed, T, budget) of every architecture: k a seed still open at
    budget 1, then its curve's (budgets(arch), memcap.capacity.grid.curve_budgets); once all its seeds
    have ended at budget 1, its budget check unless checked(arch, seed, T) says it is done or it is
    planned already (the curve's own probe)."""
    out = []
    for arch, by_budget in outcomes.items():
        seeds = list(by_budget[1])
        todo = [(*arch, seed, T, b) for seed in seeds
                for T, b in seed_next(seed_curve(by_budget, seed), budgets(arch), p, starts[arch], k)]
        out += todo
        if p["budget_factor"] > 1 and not any(b == 1 for *_, b in todo):
            check = budget_probe({seed: bracket(by_budget[1][seed]) for seed in seeds})
            if check and not checked(arch, *check) and (*arch, *check, p["budget_factor"]) not in todo:
                out.append((*arch, *check, p["budget_factor"]))
    return out


def simulate(p: dict, starts: dict[tuple[int, int], int], passes: Callable[[int, int, int, int, int], bool],
             k: int = 1, budgets: Callable[[tuple[int, int]], list[int]] = lambda arch: [1]
             ) -> list[list[tuple[int, int, int, int, int]]]:
    """The rounds a search takes against an oracle passes(H, d_h, seed, T, budget) (tests, cost projections)."""
    every = sorted({1, p["budget_factor"], *(b for arch in starts for b in budgets(arch))})
    outcomes = {arch: {b: {int(s): {} for s in p["seeds"]} for b in every} for arch in starts}
    rounds = []
    while todo := next_round(outcomes, lambda arch, seed, T: T in outcomes[arch][p["budget_factor"]][seed], p,
                             starts, k, budgets):
        rounds.append(todo)
        for H, dh, seed, T, budget in todo:
            outcomes[H, dh][budget][seed][T] = passes(H, dh, seed, T, budget)
    return rounds
