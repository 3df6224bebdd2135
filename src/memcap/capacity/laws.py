"""The capacity's laws (torch-free): α of T₅₀ ∝ H^α, β of T₅₀ ∝ d_h^β below n, the ratio past n, and
the readout's law T₅₀ ∝ H^α·d_v^γ, each over every row of its grid.

Each row enters with its T₅₀ at its largest budget and that estimate's own uncertainty (its profile
interval on the log scale), as a measurement or, where more steps would memorize more (its budget curve
still rising, or no curve and its budget check passing at twice the steps) or every probe passed, as a
lower bound: a censored observation (Tobit), never dropped. A row is left out only for a stated
reason (its readout cannot name the classes; no transition below t_min).

    log T₅₀,i = x_i·b + e_i,   e_i ~ N(0, se_i² + τ²)

(τ: the architectures' scatter about the law), fitted by maximum likelihood (scipy.optimize); the
exponent's 95% interval is its profile likelihood's, at the cutoff that gives Student's t interval for
uncensored normal data with n − p degrees of freedom (memcap.capacity.transition.cutoff).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from memcap.lazy_import import OnFirstUse

optimize = OnFirstUse("scipy.optimize")
special = OnFirstUse("scipy.special")
stats = OnFirstUse("scipy.stats")
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)

TAU_FLOOR = 1e-4


@dataclass(frozen=True)
class Point:
    """One row in a law: its covariates (logs), log T₅₀, its standard error, whether a lower bound."""
    x: tuple[float, ...]
    y: float
    se: float
    lower: bool


@dataclass(frozen=True)
class Law:
    estimate: float
    low: float
    high: float
    intercept: float
    tau: float
    points: int
    censored: int


def point(t50: float, low: float, high: float, lower: bool, *x: float) -> Point:
    """A row as a point of a law: log covariates, log T₅₀, the log-interval's half width / 1.96."""
    se = (math.log(high) - math.log(low)) / (2 * 1.96) if low > 0 and math.isfinite(high) else 1.0
    return Point(tuple(math.log(v) for v in x), math.log(t50), max(se, 1e-3), lower)


class Censored:
    def __init__(self, points: list[Point]):
        self.X = np.column_stack([np.ones(len(points)), np.array([p.x for p in points], float)])
        self.y = np.array([p.y for p in points], float)
        self.se = np.array([p.se for p in points], float)
        self.lower = np.array([p.lower for p in points], bool)

    def nll(self, b: np.ndarray, log_tau: float) -> float:
        sigma = np.sqrt(self.se ** 2 + math.exp(2 * log_tau))
        z = (self.y - self.X @ b) / sigma
        exact = -0.5 * z[~self.lower] ** 2 - LOG_SQRT_2PI - np.log(sigma[~self.lower])
        bound = special.log_ndtr(-z[self.lower])              # the true value above the bound
        return float(-(exact.sum() + bound.sum()))

    def best(self, fixed: dict[int, float] | None = None) -> tuple[float, np.ndarray, float]:
        """min nll with coefficients in `fixed` held: (nll, b, log τ)."""
        fixed = fixed or {}
        free = [j for j in range(self.X.shape[1]) if j not in fixed]

        def unpack(theta):
            b = np.empty(self.X.shape[1])
            for j, v in fixed.items():
                b[j] = v
            b[free] = theta[:-1]
            return b, theta[-1]
        start_b, *_ = np.linalg.lstsq(self.X[:, free], self.y - sum(self.X[:, j] * v for j, v in fixed.items()), rcond=None)
        theta0 = np.append(start_b, math.log(max(np.std(self.y) / 4, 0.05)))
        bounds = [(None, None)] * len(free) + [(math.log(TAU_FLOOR), math.log(100.0))]
        res = optimize.minimize(lambda t: self.nll(*unpack(t)), theta0, method="L-BFGS-B", bounds=bounds)
        b, log_tau = unpack(res.x)
        return float(res.fun), b, float(log_tau)


def cutoff(n: int, params: int, confidence: float) -> float:
    dof = max(n - params, 1)
    t = stats.t.ppf(0.5 + confidence / 2, dof)
    return n * math.log1p(t * t / dof)


def why_not(points: list[Point]) -> str:
    """Why these points cannot be fitted ('' where they can): at least 2 degrees of freedom beside the
    coefficients, 2 values of each covariate, and one measured row (not only lower bounds)."""
    if not points:
        return "no row to fit"
    need = len(points[0].x) + 3
    if len(points) < need:
        return f"{len(points)} row{'s' * (len(points) != 1)}: a fit needs {need}"
    if any(len({p.x[j] for p in points}) < 2 for j in range(len(points[0].x))):
        return "one value of a covariate"
    if all(p.lower for p in points):
        return "every row a lower bound"
    return ""


def fit(points: list[Point], coef: int = 1, confidence: float = 0.95) -> Law | None:
    """The law's coefficient `coef` (1: the first covariate's exponent) with its profile interval; None
    where `why_not` says it cannot be fitted."""
    if why_not(points):
        return None
    model = Censored(points)
    nll, b, log_tau = model.best()
    c = cutoff(len(points), model.X.shape[1], confidence)
    gap = lambda v: 2 * (model.best({coef: v})[0] - nll) - c                                   # noqa: E731
    est = float(b[coef])
    return Law(est, _root(gap, est, -1), _root(gap, est, 1), float(b[0]), math.exp(log_tau), len(points),
               int(sum(p.lower for p in points)))


def _root(gap, est: float, direction: int) -> float:
    """The profile interval's end on one side: steps out until gap > 0, then brentq; ±inf past 20."""
    step = 0.1
    inside = est
    while step < 20:
        v = est + direction * step
        if gap(v) > 0:
            return float(optimize.brentq(gap, min(inside, v), max(inside, v), xtol=1e-4))
        inside, step = v, step * 2
    return math.copysign(math.inf, direction)


def ratio(a: Point, b: Point, confidence: float = 0.95) -> tuple[float, float, float]:
    """T₅₀(a) / T₅₀(b) with a normal interval on the log scale (two architectures' independent fits)."""
    z = stats.norm.ppf(0.5 + confidence / 2)
    d, se = a.y - b.y, math.hypot(a.se, b.se)
    return math.exp(d), math.exp(d - z * se), math.exp(d + z * se)
