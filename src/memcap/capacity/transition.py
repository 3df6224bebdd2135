"""The memorization transition of one architecture (torch-free): T₅₀, where half the trained models
memorize, with its interval, T₉₀ and the transition's width.

A seed's datasets are nested (the first T examples of one pool: memcap.capacity.probes), so a seed
memorizes every T below a threshold T_s of its own and none above it; its probes say only that T_s lies
in [T_pass, T_fail) (memcap.capacity.search.bracket), above its largest pass (no failure yet), or below
its smallest failure (no pass yet). Across seeds (initialisations and data draws), log T_s is taken to
be logistic with location log T₅₀ and scale s, so that

    P(memorized | T) = 1 / (1 + exp((log T − log T₅₀) / s))

(Cover's capacity is the 50% point of such a curve). Every probe of every seed enters through its
seed's interval, the likelihood of interval-censored data: one seed is one observation, however many
probes its search trained, so a seed bisected to 5% does not count as ten independent trials. The fit
is maximum likelihood (scipy.optimize) in the parametrization (μ/s, 1/s), where the likelihood is
log-concave (Burridge 1981): one optimum, found from any start.

T₅₀'s interval is the profile likelihood's: every μ whose likelihood ratio to the best stays under a
cutoff. With n seeds the cutoff is n·log(1 + t²/(n − 1)) at Student's t quantile with n − 1 degrees of
freedom, the cutoff at which the profile interval of normal data is exactly the t interval (χ²₁'s 3.84
as n grows); tests/test_capacity_transition.py measures its coverage on simulated searches. Every end is
a T, positive by construction; an upper end the data cannot close is ∞, a lower one 1 (one example).

The scale s is floored at SCALE_FLOOR: seeds whose intervals all overlap (every seed's threshold in a
common bracket) have no measurable spread, and their width is reported as an upper bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from memcap.lazy_import import OnFirstUse

optimize = OnFirstUse("scipy.optimize")
special = OnFirstUse("scipy.special")
stats = OnFirstUse("scipy.stats")

SCALE_FLOOR = 1e-3            # s in log T: 0.1% of T, far below any probe's spacing
LOGIT_90 = math.log(9.0)      # (log T − log T₅₀)/s at P = 0.1 and −this at P = 0.9
# How far (in log T) past the seeds' outermost bounds an interval's end is looked for before it is ∞ / 0.
REACH = math.log(1e3)


class NoTransition(ValueError):
    """The probes do not bracket a transition: every one passed, every one failed, or too few seeds."""


@dataclass(frozen=True)
class Interval:
    """One seed's threshold in log T: low < log T_s < high (−inf / inf where unbounded)."""
    low: float
    high: float


@dataclass(frozen=True)
class Fit:
    """A location-scale fit of interval-censored logistic data (in log T for a transition)."""
    location: float          # μ: log T₅₀ (or a log-ratio, memcap.capacity.convergence)
    low: float               # the profile-likelihood interval of μ (−inf / inf: not closed)
    high: float
    scale: float             # s (SCALE_FLOOR: no spread measurable)
    scale_high: float        # the profile interval's upper end of s (a bound on the width when s is floored)
    n: int                   # observations (seeds)
    confidence: float

    @property
    def floored(self) -> bool:
        return self.scale <= SCALE_FLOOR * 1.0001


@dataclass(frozen=True)
class Transition:
    """T₅₀ [low, high], T₉₀, the width T₁₀/T₉₀ (with its upper end), from `seeds` seeds."""
    t50: float
    t50_low: float
    t50_high: float
    t90: float
    width: float             # T₁₀ / T₉₀ = 81^s: the factor over which memorization switches off
    width_high: float        # its profile upper end: a bound when `sharp`
    sharp: bool              # no spread measurable between the seeds (s at SCALE_FLOOR)
    seeds: int
    confidence: float

    @property
    def ratio(self) -> float:
        """high / low of T₅₀'s interval: the search's stopping width (memcap.capacity.search)."""
        return self.t50_high / self.t50_low if self.t50_low > 0 else math.inf


def seed_interval(outcomes: dict[int, bool]) -> Interval | None:
    """A seed's threshold from its probes {T: passed}: (log T_pass, log T_fail), a pass above the first
    failure (training noise) counted by the bracket and not used; None without a probe."""
    if not outcomes:
        return None
    fails = [T for T, ok in outcomes.items() if not ok]
    high = min(fails) if fails else None
    passes = [T for T, ok in outcomes.items() if ok and (high is None or T < high)]
    low = max(passes) if passes else None
    return Interval(math.log(low) if low else -math.inf, math.log(high) if high else math.inf)


def _log_f(x: float) -> float:
    """log F(x) for the standard logistic F (−inf at x = −inf)."""
    if x == -math.inf:
        return -math.inf
    return -math.log1p(math.exp(-x)) if x > -30 else x


def _log_mass(a: float, b: float) -> float:
    """log(F(b) − F(a)) for the standard logistic F, a < b (±inf allowed), without cancellation: in
    the lower tail from F, in the upper from the survival function 1 − F(x) = F(−x). Plain floats: a
    fit has a few seeds, where numpy's per-call cost is most of the time."""
    if a + b > 0:                                # both ends mostly in the upper tail: by symmetry
        a, b = -b, -a
    top, bottom = _log_f(b), _log_f(a)
    if bottom == -math.inf:
        return top
    return top + math.log1p(-math.exp(min(bottom - top, 0.0))) if bottom < top else -math.inf


class IntervalLogistic:
    """The log-likelihood of interval-censored observations (lows, highs) under a logistic(μ, s)."""

    def __init__(self, intervals: list[Interval]):
        self.intervals = [(i.low, i.high) for i in intervals]
        finite = [v for i in self.intervals for v in i if math.isfinite(v)]
        self.span = (min(finite), max(finite))

    def loglik(self, mu: float, scale: float) -> float:
        b = 1.0 / scale
        total = 0.0
        for lo, hi in self.intervals:
            total += _log_mass(b * (lo - mu), b * (hi - mu))
            if total == -math.inf:
                break
        return total

    def best_scale(self, mu: float) -> tuple[float, float]:
        """max over s >= SCALE_FLOOR of the likelihood at μ (log-concave in 1/s, so unimodal in log s):
        (loglik, s)."""
        res = optimize.minimize_scalar(lambda log_s: -self.loglik(mu, math.exp(log_s)),
                                       bounds=(math.log(SCALE_FLOOR), math.log(1e6)), method="bounded",
                                       options={"xatol": 1e-4})
        cands = [(-res.fun, math.exp(res.x)), (self.loglik(mu, SCALE_FLOOR), SCALE_FLOOR)]   # the floor itself
        return max(cands)

    def mle(self) -> tuple[float, float, float]:
        """(μ̂, ŝ, log-likelihood): over μ the profile, a concave function of μ at the optimum's s."""
        lo, hi = self.span
        pad = max(hi - lo, 1.0)
        res = optimize.minimize_scalar(lambda mu: -self.best_scale(mu)[0], bounds=(lo - pad, hi + pad),
                                       method="bounded", options={"xatol": 1e-7})
        ll, s = self.best_scale(res.x)
        # a flat top (seeds' intervals overlapping, s at the floor) is the middle of where it is flat
        return float(res.x), s, ll


def cutoff(n: int, confidence: float) -> float:
    """The likelihood-ratio cutoff of a two-sided `confidence` interval from n observations: the one at
    which normal data's profile interval is Student's t interval, n·log(1 + t²/(n − 1))."""
    t = stats.t.ppf(0.5 + confidence / 2, n - 1)
    return n * math.log1p(t * t / (n - 1))


def fit(intervals: list[Interval], confidence: float = 0.95, floor: float | None = None) -> Fit:
    """Maximum likelihood of μ and s with μ's profile interval (memcap.capacity.transition's doc);
    floor: the smallest μ there is (a threshold's log T >= 0: one example), where an interval the data
    cannot close below ends."""
    intervals = [i for i in intervals if i is not None]
    if len(intervals) < 2:
        raise NoTransition(f"{len(intervals)} seed(s) with probes: a transition needs at least 2")
    if all(math.isinf(i.high) for i in intervals):
        raise NoTransition("every probe passed: no failure bounds the transition (T₅₀ is above the largest T "
                           "probed; probe larger T or read it as a lower bound)")
    if all(math.isinf(i.low) for i in intervals):
        raise NoTransition("every probe failed: no pass bounds the transition (T₅₀ is below the smallest T "
                           "probed; probe smaller T or read it as an upper bound)")
    model = IntervalLogistic(intervals)
    mu, s, ll = model.mle()
    mu = _flat_middle(model, mu, ll)
    c = cutoff(len(intervals), confidence)
    gap = lambda m: 2 * (ll - model.best_scale(m)[0]) - c                                     # noqa: E731
    lo, hi = model.span
    end = lo - REACH if floor is None else max(lo - REACH, min(floor, mu))
    low = _root(gap, mu, end)
    if floor is not None and math.isinf(low):
        low = end
    high = _root(gap, mu, hi + REACH)
    return Fit(mu, low, high, s, _scale_high(model, mu, ll, c), len(intervals), confidence)


def _flat_middle(model: IntervalLogistic, mu: float, ll: float) -> float:
    """Where the profile is flat at its top (every seed's interval overlapping, s at the floor), the
    middle of the flat part, not wherever the optimizer stopped."""
    flat = lambda m: model.best_scale(m)[0] >= ll - 1e-6                                         # noqa: E731
    lo, hi = model.span
    left = _edge(flat, mu, lo - 1.0)
    right = _edge(flat, mu, hi + 1.0)
    return (left + right) / 2 if right - left > 1e-4 else mu


def _edge(inside, start: float, end: float, tol: float = 1e-5) -> float:
    """The boundary between start (inside) and end by bisection; end if end is inside too."""
    if inside(end):
        return end
    a, b = start, end
    while abs(b - a) > tol:
        m = (a + b) / 2
        a, b = (m, b) if inside(m) else (a, m)
    return a


def _root(gap, mu: float, end: float) -> float:
    """Where gap(μ) crosses 0 between the optimum (gap < 0) and `end`; ±inf if it does not by then."""
    if gap(end) <= 0:
        return math.copysign(math.inf, end - mu)
    return float(optimize.brentq(gap, mu, end, xtol=1e-5)) if mu < end else float(optimize.brentq(gap, end, mu, xtol=1e-5))


def _scale_high(model: IntervalLogistic, mu: float, ll: float, c: float) -> float:
    """The upper end of s's profile interval (s maximized over μ at each s): the widest transition
    the seeds allow."""
    def gap(log_s: float) -> float:
        s = math.exp(log_s)
        lo, hi = model.span
        res = optimize.minimize_scalar(lambda m: -model.loglik(m, s), bounds=(lo - REACH, hi + REACH), method="bounded")
        return 2 * (ll - (-res.fun)) - c
    start = math.log(max(model.best_scale(mu)[1], SCALE_FLOOR))
    end = math.log(10.0)   # s = 10: T₁₀/T₉₀ = 81^10, no transition at all
    if gap(end) <= 0:
        return math.inf
    return math.exp(optimize.brentq(gap, start, end, xtol=1e-4))


def transition(outcomes: dict[int, dict[int, bool]], confidence: float = 0.95) -> Transition:
    """T₅₀ and the rest from every seed's probes {seed: {T: passed}} (NoTransition: why there is none)."""
    intervals = [seed_interval(o) for o in outcomes.values()]
    f = fit([i for i in intervals if i is not None], confidence, floor=0.0)   # T₅₀ >= 1 example
    return of_fit(f)


def of_fit(f: Fit) -> Transition:
    return Transition(t50=math.exp(f.location), t50_low=math.exp(f.low), t50_high=math.exp(f.high),
                      t90=math.exp(f.location - LOGIT_90 * f.scale), width=math.exp(2 * LOGIT_90 * f.scale),
                      width_high=math.exp(2 * LOGIT_90 * min(f.scale_high, 50.0)) if math.isfinite(f.scale_high) else math.inf,
                      sharp=f.floored, seeds=f.n, confidence=f.confidence)


def simulate_thresholds(t50: float, scale: float, seeds: int, rng: np.random.Generator) -> np.ndarray:
    """Seeds' thresholds T_s drawn from the transition (tests, cost projections): log T_s logistic."""
    return np.exp(math.log(t50) + scale * rng.logistic(size=seeds))
