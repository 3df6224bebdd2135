"""The search over T (torch-free): per architecture, seeds' brackets around the memorization
transition until the pooled fit's T₅₀ is known to a factor `width`.

A seed's outcomes are {T: passed} (passed: train accuracy >= the threshold at the lowest-loss
checkpoint, memcap.training). Its datasets are nested (the first T examples of one pool,
memcap.capacity.probes), so its outcome is monotone in T up to training noise: its bracket
[T_pass, T_fail) holds its own threshold (T_fail the smallest failing T, T_pass the largest passing T
below it; a pass above T_fail is counted, not used). Every seed's bracket enters one fit of the
transition (memcap.capacity.transition): T₅₀ with its interval.

A round gives each seed that needs it k probes (k chosen so a round trains about `round_models`
models; k = 1 is bisection):
  - a seed without a pass and a failure: the preset's start (a new seed once a fit exists: k sizes
    around the fitted T₅₀), then T times `grow` until a failure (divided until a pass);
  - a seed whose bracket is wider than the transition needs (wider than rel_tol, and than twice the
    fitted scale s in log T: a bracket finer than the seeds' own spread adds nothing): the k points
    that split it into k + 1 equal ratios.
The architecture's search at a budget has ended once T₅₀'s interval is within a factor `width`
(high / low) with at least `min_seeds` seeds (*reached*); while it is wider and no seed needs a probe,
seeds are added from `seeds` (in order; as many as the interval's width says are needed, an
interval narrowing as 1/√seeds) until all are in (*out of seeds*). A seed's search also ends above the
pool, below t_min or after max_probes.

The budget curve (a preset's `budgets`, e.g. [1, 2, 4] times the paper's steps): once the search at one
budget has ended, its seeds' searches at the next start from their brackets there. Passes count at the
next budget too (a T memorized in fewer steps is taken as memorized in more), and a seed's first probe
there is its previous T_fail: a failure again closes the bracket where it was, a pass moves it up by
`grow` steps. The budget check: once budget 1 has ended, the architecture's first failing T is trained
again at budget_factor times the steps (a pass: T₅₀ is a lower bound of what more steps memorize).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

from memcap.capacity import transition

OPEN, CLOSED, ABOVE, BELOW, EXHAUSTED = "open", "closed", "above pool", "below t_min", "probes exhausted"
# An architecture's search at a budget: still searching, ended at the width, ended with every seed in
# and the interval still wider, or ended without a transition (every seed above the pool or below t_min).
SEARCHING, REACHED, OUT_OF_SEEDS, NO_TRANSITION = "searching", "reached the width", "ran out of seeds", "no transition"
ROUND_MODELS = 12    # models a round's pack holds at least, where seeds allow (k probes a seed)
MAX_K = 4            # probes a seed a round at most: more split a bracket finer than a round needs
MIN_SEEDS = 5        # seeds a search starts with, where a preset does not say (Nichani et al. use 5)
WIDTH = 1.5          # T₅₀'s interval (high / low) at which a search ends, where a preset does not say


@dataclass(frozen=True)
class Bracket:
    low: int | None          # T_pass: the largest passing T below T_fail
    high: int | None         # T_fail: the smallest failing T
    non_monotone: int        # passes above T_fail (training noise)
    probes: int

    def width(self) -> float:
        return (self.high - self.low) / self.low if self.low and self.high else math.inf

    def middle(self) -> float:
        """The bracket's geometric middle (a seed's threshold, to the bracket's resolution)."""
        return math.sqrt(self.low * self.high) if self.low and self.high else math.nan


def bracket(outcomes: dict[int, bool]) -> Bracket:
    fails = [T for T, ok in outcomes.items() if not ok]
    high = min(fails) if fails else None
    passes = [T for T, ok in outcomes.items() if ok and (high is None or T < high)]
    above = sum(1 for T, ok in outcomes.items() if ok and high is not None and T > high)
    return Bracket(max(passes) if passes else None, high, above, len(outcomes))


def status(b: Bracket, p: dict) -> str:
    """A seed's own search: closed at rel_tol, above the pool, below t_min, out of probes, or open."""
    if b.low is not None and b.high is not None and b.high - b.low <= max(1, p["rel_tol"] * b.low):
        return CLOSED
    if b.high is None and b.low is not None and b.low >= p["pool"]:
        return ABOVE
    if b.low is None and b.high is not None and b.high <= p["t_min"]:
        return BELOW
    if b.probes >= p["max_probes"]:
        return EXHAUSTED
    return OPEN


def resolved(b: Bracket, p: dict, scale: float) -> bool:
    """A seed needs no more probes: its search ended, or its bracket is narrower than twice the fitted
    scale s of the transition (in log T)."""
    if status(b, p) != OPEN:
        return True
    return b.low is not None and b.high is not None and math.log(b.high / b.low) <= 2 * scale


def next_sizes(outcomes: dict[int, bool], p: dict, start: int, k: int = 1, probes: int | None = None,
               around: transition.Transition | None = None) -> list[int]:
    """The next k (or fewer) T to probe for one seed; [] once its search has ended (probes: those
    trained at this budget, where outcomes also holds passes taken from a smaller one; around: the
    architecture's fit, where a seed without probes starts)."""
    b = bracket(outcomes)
    if probes is not None:
        b = replace(b, probes=probes)
    if status(b, p) != OPEN:
        return []
    k = min(k, p["max_probes"] - b.probes)
    g = p["grow"]
    if b.low is None and b.high is None and around is not None:    # a seed added to a fitted transition
        half = max(math.log(around.width) / 2, math.log(g) / 2)      # T₉₀ to T₁₀, at least a factor grow
        sizes = [around.t50 * math.exp(half * (2 * i / (k - 1) - 1)) if k > 1 else around.t50 for i in range(k)]
    elif b.low is None and b.high is None:               # the first round: around the start
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


Curve = dict[int, dict[int, bool]]      # one seed: budget -> {T: passed}
Outcomes = dict[int, dict[int, bool]]   # seed -> {T: passed}
ByBudget = dict[int, Outcomes]          # budget -> seed -> {T: passed}


def at_budget(curve: Curve, budget: int) -> dict[int, bool]:
    """One seed's outcomes at a budget: its probes there, and the passes of smaller budgets at T not
    probed there."""
    own = curve.get(budget, {})
    taken = {T: True for b, o in curve.items() if b < budget for T, ok in o.items() if ok and T not in own}
    return {**taken, **own}


def bracket_at(curve: Curve, budget: int) -> Bracket:
    """The seed's bracket at a budget; `probes` counts only those trained at it."""
    return replace(bracket(at_budget(curve, budget)), probes=len(curve.get(budget, {})))


def min_seeds(p: dict) -> int:
    return min(int(p.get("min_seeds", MIN_SEEDS)), len(p["seeds"]))


def width(p: dict) -> float:
    return float(p.get("width", WIDTH))


def in_play(curves: dict[int, Curve], p: dict, budget: int) -> list[int]:
    """The seeds of an architecture's search at a budget: the first min_seeds, and every seed added
    (one with a probe at this budget or a smaller one), in the preset's order."""
    seeds = [int(s) for s in p["seeds"]]
    return [s for i, s in enumerate(seeds)
            if i < min_seeds(p) or any(curves.get(s, {}).get(b) for b in curves.get(s, {}) if b <= budget)]


@dataclass(frozen=True)
class State:
    """An architecture's search at one budget."""
    seeds: list[int]
    brackets: dict[int, Bracket]
    fit: transition.Transition | None
    why_no_fit: str
    verdict: str


def fit_of(curves: dict[int, Curve], seeds: list[int], budget: int) -> tuple[transition.Transition | None, str]:
    """The pooled fit at a budget from these seeds' probes, or None and why not."""
    try:
        return transition.transition({s: at_budget(curves.get(s, {}), budget) for s in seeds}), ""
    except transition.NoTransition as why:
        return None, str(why)


def seed_scale(fit: transition.Transition | None, fine: bool) -> float:
    """The fitted scale s a seed's bracket need not beat (0 where every bracket goes to rel_tol)."""
    return 0.0 if fine or fit is None else math.log(fit.width) / (2 * transition.LOGIT_90)


def state(curves: dict[int, Curve], p: dict, budget: int, fine: bool = False) -> State:
    """fine: an architecture on a budget curve, whose every seed's bracket goes to rel_tol at every
    budget, so that the rise per doubling, a ±10% question, can be answered seed by seed
    (memcap.capacity.convergence); its search at a budget ends once they all have and the width is
    reached (or every seed is in)."""
    seeds = in_play(curves, p, budget)
    brackets = {s: bracket_at(curves.get(s, {}), budget) for s in seeds}
    fit, why = fit_of(curves, seeds, budget)
    settled = all(resolved(b, p, seed_scale(fit, fine)) for b in brackets.values())
    bracketed = all(status(b, p) != OPEN or (b.low and b.high) for b in brackets.values())
    if fit and fit.ratio <= width(p) and len(seeds) >= min_seeds(p) and bracketed and (settled or not fine):
        verdict = REACHED
    elif settled and fit is None and all(status(b, p) != OPEN for b in brackets.values()):
        verdict = NO_TRANSITION
    elif settled and len(seeds) == len(p["seeds"]):
        verdict = OUT_OF_SEEDS
    else:
        verdict = SEARCHING
    return State(seeds, brackets, fit, why, verdict)


def seeds_to_add(st: State, p: dict, packs: bool = True) -> list[int]:
    """Where no seed needs a probe and T₅₀'s interval is still wider than `width`: the next seeds, as
    many as an interval narrowing as 1/√seeds needs (at least one), and where rounds are packs
    enough to fill one."""
    left = [int(s) for s in p["seeds"] if int(s) not in st.seeds]
    if not left:
        return []
    if st.fit is None or not math.isfinite(st.fit.ratio):
        return left[:1]
    n = len(st.seeds)
    need = math.ceil(n * (math.log(st.fit.ratio) / math.log(width(p))) ** 2) - n
    return left[:max(need, math.ceil(ROUND_MODELS / MAX_K) if packs else 1)]


def budget_next(curves: dict[int, Curve], p: dict, budget: int, before: int | None, start: int,
                k: int | None, fine: bool = False) -> list[tuple[int, int, int]]:
    """The next (seed, T, budget) probes of an architecture at one budget; [] once its search there has
    ended (before: the budget before on its curve, where a seed's first probe here comes from; fine:
    the architecture has a curve, state's)."""
    st = state(curves, p, budget, fine)
    if st.verdict != SEARCHING:
        return []
    needs = [s for s in st.seeds if not resolved(st.brackets[s], p, seed_scale(st.fit, fine))]
    if not needs:
        needs = seeds_to_add(st, p, packs=k is None)
    k = k or min(MAX_K, max(1, math.ceil(ROUND_MODELS / max(len(needs), 1))))
    out = []
    for s in needs:
        curve = curves.get(s, {})
        prev = bracket_at(curve, before) if before is not None else None
        if prev is not None and not curve.get(budget) and prev.high is not None and prev.high not in at_budget(curve, budget):
            out.append((s, prev.high, budget))        # the budget before's first failure, asked again
            continue
        sizes = next_sizes(at_budget(curve, budget), p, start, k, probes=len(curve.get(budget, {})), around=st.fit)
        out += [(s, T, budget) for T in sizes]
    return out


def arch_next(curves: dict[int, Curve], p: dict, start: int, budgets: list[int], k: int | None = None
              ) -> list[tuple[int, int, int]]:
    """The next probes of an architecture on its budget curve: those of the first budget whose search
    has not ended; [] once every budget's has."""
    before = None
    for budget in budgets:
        todo = budget_next(curves, p, budget, before, start, k, fine=len(budgets) > 1)
        if todo:
            return todo
        before = budget
    return []


def curves_of(by_budget: ByBudget) -> dict[int, Curve]:
    """budget -> seed -> outcomes, as seed -> budget -> outcomes."""
    out: dict[int, Curve] = {}
    for b, seeds in by_budget.items():
        for s, o in seeds.items():
            out.setdefault(int(s), {})[b] = o
    return out


def next_round(outcomes: dict[tuple[int, int], ByBudget], checked: Callable[[tuple[int, int], int, int], bool],
               p: dict, starts: dict[tuple[int, int], int], k: int | None = None,
               budgets: Callable[[tuple[int, int]], list[int]] = lambda arch: [1]) -> list[tuple[int, int, int, int, int]]:
    """The next round's probes (H, d_h, seed, T, budget) of every architecture: its search at budget 1,
    then its curve's (budgets(arch), memcap.capacity.grid.curve_budgets); once budget 1 has ended, its
    budget check unless checked(arch, seed, T) says it is done or it is planned already (the curve's
    own probe). k: probes a seed a round (None: enough for ROUND_MODELS models)."""
    out = []
    for arch, by_budget in outcomes.items():
        curves = curves_of(by_budget)
        todo = [(*arch, seed, T, b) for seed, T, b in arch_next(curves, p, starts[arch], budgets(arch), k)]
        out += todo
        if p["budget_factor"] > 1 and not any(b == 1 for *_, b in todo):
            st = state(curves, p, 1)
            check = budget_probe(st.brackets)
            if check and not checked(arch, *check) and (*arch, *check, p["budget_factor"]) not in todo:
                out.append((*arch, *check, p["budget_factor"]))
    return out


def simulate(p: dict, starts: dict[tuple[int, int], int], passes: Callable[[int, int, int, int, int], bool],
             k: int | None = None, budgets: Callable[[tuple[int, int]], list[int]] = lambda arch: [1],
             known: dict[tuple[int, int], ByBudget] | None = None) -> list[list[tuple[int, int, int, int, int]]]:
    """The rounds a search takes against an oracle passes(H, d_h, seed, T, budget) (tests, cost
    projections), from the probes already `known` (arch -> budget -> seed -> {T: passed}), which
    cost nothing."""
    every = sorted({1, p["budget_factor"], *(b for arch in starts for b in budgets(arch))})
    outcomes = {arch: {b: {int(s): dict((known or {}).get(arch, {}).get(b, {}).get(int(s), {})) for s in p["seeds"]}
                       for b in every} for arch in starts}
    rounds = []
    while todo := next_round(outcomes, lambda arch, seed, T: T in outcomes[arch][p["budget_factor"]][seed], p,
                             starts, k, budgets):
        rounds.append(todo)
        for H, dh, seed, T, budget in todo:
            outcomes[H, dh][budget][seed][T] = passes(H, dh, seed, T, budget)
    return rounds
