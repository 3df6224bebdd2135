"""DPC (Dana et al. 2025) claims: Exps 1-6 and the distribution-memorization bounds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from memcap import stats
from memcap.bounds import bound_slope_per_head
from memcap.dpc import fits as dpc_fits
from memcap.report import shapes
from memcap.report.claims.common import LINEAR, _at_least, _each, _exact, _replicates, _rows
from memcap.report.claims.registry import claim
from memcap.report.shapes import Curve
from memcap.report.verdicts import INCONCLUSIVE, PAPER_CLAIM, PROPERTY, Check, Region, Skip, check, fmt, outcome


DPC_SAT = dpc_fits.SATURATION   # the original's saturation threshold, where its fits stop


def dpc_curves(t: dict, experiment: str, label: str = "d={}") -> tuple[list[Curve], str]:
    """One curve per series of a DPC experiment; replicates = repetitions (dpc_runs). With only the summary
    table, the repetition means are used and there is no interval."""
    if t.get("dpc_runs") is not None:
        g = _rows(t["dpc_runs"], "dpc runs", experiment=experiment)
        return shapes.curves(g, "series", "x", "acc_table", label), "repetitions"
    g = _rows(t.get("dpc_summary"), "dpc summary (and no dpc runs)", experiment=experiment)
    return shapes.curves(g, "series", "x", "acc_table_mean", label), "means (no per-repetition table: no spread)"


def _before_cut(cs: list[Curve], xname: str) -> list[Curve]:
    """The original's fit points: up to and including the first point with mean > 0.95."""
    return [c.keep(np.arange(len(c.x)) < dpc_fits.saturation_cut(c.x, c.means, DPC_SAT),
                   f"after the first point above {DPC_SAT}", xname) for c in cs]


LINEAR_TEST = f"linear, not concave: min end-slope ratio on the points <= {DPC_SAT}"


def _linear_part(cs: list[Curve], xname: str) -> tuple[Check, str]:
    """(test, detail) of the concave-vs-linear test on the points with mean <= 0.95."""
    below = [c.keep(c.means <= DPC_SAT, f"saturated, mean > {DPC_SAT}", xname) for c in cs]
    try:
        use = _at_least(below, 3, f"points below {DPC_SAT}")
    except Skip as e:
        nan = float("nan")
        return Check(LINEAR_TEST, nan, nan, nan, LINEAR.text(), INCONCLUSIVE), f"linearity not testable: {e}"
    point, lo, hi, each = shapes.bootstrap(use, shapes.end_slope_ratio)
    test = check(LINEAR_TEST, point, lo, hi, LINEAR)
    return test, (f"linear vs concave: min end-slope ratio {fmt(point, lo, hi)} (needs >= {LINEAR.low}: "
                  f"{test.verdict}; {_each(use, each)})" + shapes.dropped(below))


ABOVE_BOUND = Region(1, np.inf)


@claim("dpc_exp1_linear_H_above_bound", PAPER_CLAIM, "DPC", "Exp 1 (Fig 1a)",
       "Accuracy is linear in H until saturation, with a slope above the bound's",
       "two tests, both must pass: (1) slope / bound slope (1−1/N)·d_h/N², the slope fitted as the original "
       "does (up to the first point above 0.95, 3+ points), min over d; its 95% interval (repetitions "
       f"resampled) must lie >= 1; (2) linear, not concave, on the points <= 0.95: the end-slope ratio "
       f"(as MLT Fig 2a) >= {LINEAR.low}; statistic = (1)", ABOVE_BOUND, ["dpc_runs", "dpc_summary"],
       "linear until saturation; slope far above the bound's (no number stated)", "DPC Fig 1a")
def dpc_exp1(t):
    cs, reps = dpc_curves(t, "exp1")
    linear, lin_detail = _linear_part(cs, "H")
    cut = _at_least(_before_cut(cs, "H"), 3, "points before saturation")

    def ratio(c, rs):
        return shapes.slope(c, rs) / bound_slope_per_head(float(c.meta["head_dim"]), int(c.meta["N"]))

    point, lo, hi, each = shapes.bootstrap(cut, ratio)
    return outcome(point, lo, hi, ABOVE_BOUND, f"slope/bound {_each(cut, each)}; {lin_detail}; "
                   f"{_replicates(cut, reps)}" + shapes.dropped(cut), linear, name="slope / bound slope (min over d)")


QUADRATIC_BETTER = Region(1, np.inf)


@claim("dpc_exp2_quadratic_dh", PAPER_CLAIM, "DPC", "Exp 2 (Fig 1b)",
       "Accuracy grows roughly quadratically in d_h",
       "the paper's fit a·d_h² + b against its alternative, a line a·d_h + b (both least squares on the "
       "repetition means up to 0.95, 3+ points): statistic = RSS(line) / RSS(quadratic); its 95% interval "
       "(repetitions resampled) must lie above 1 (the quadratic fits better); below 1 the line fits better. "
       "The detail gives the exponent p of a power law with a free offset, for reference",
       QUADRATIC_BETTER, ["dpc_runs", "dpc_summary"], "roughly quadratic in d_h (fit a·d_h² + b)",
       "DPC Fig 1b")
def dpc_exp2(t):
    cs, reps = dpc_curves(t, "exp2", "")
    c = cs[0]
    c = c.keep(c.means <= DPC_SAT, f"above {DPC_SAT}", "d_h")
    if len(c.x) < 3:
        raise Skip(f"{len(c.x)} points up to {DPC_SAT}" + shapes.dropped([c]))
    point, lo, hi, _ = shapes.bootstrap([c], shapes.quadratic_over_line)
    p = stats.power_with_offset(c.x, c.means)
    return outcome(point, lo, hi, QUADRATIC_BETTER, f"RSS(line)/RSS(a·d_h²+b) on {len(c.x)} points; power law "
                   f"with a free offset: p = {p:.3g}; {_replicates([c], reps)}" + shapes.dropped([c]))


FLAT = Region(0, 0.25)


@claim("dpc_exp3_linear_then_flat_d", PAPER_CLAIM, "DPC", "Exp 3 (Fig 2a)",
       "Accuracy is linear in d while d <= d_h, then flat",
       "two lines split at d = d_h (2+ points each side); statistic = |slope above| / slope below (either sign "
       "above: a falling curve is not flat; a slope below <= 0 gives +inf); its 95% interval (repetitions "
       f"resampled) must lie <= {FLAT.high}", FLAT, ["dpc_runs", "dpc_summary"],
       "linear in d while d <= d_h, then flat", "DPC Fig 2a")
def dpc_exp3(t):
    cs, reps = dpc_curves(t, "exp3", "")
    c = cs[0]
    dh = float(c.meta["head_dim"])
    lo_i, hi_i = np.flatnonzero(c.x <= dh), np.flatnonzero(c.x >= dh)
    if len(lo_i) < 2 or len(hi_i) < 2:
        raise Skip(f"fewer than 2 points on one side of d = d_h = {dh:g}")

    def slopes(rs):
        m = shapes.means(rs)
        return stats.slope_rows(c.x[lo_i], m[:, lo_i]), stats.slope_rows(c.x[hi_i], m[:, hi_i])

    def ratio(_, rs):
        below, above = slopes(rs)
        return shapes.ratio(np.abs(above), below)

    point, lo, hi, _ = shapes.bootstrap([c], ratio)
    below, above = (float(s[0]) for s in slopes(shapes.observed(c)))
    return outcome(point, lo, hi, FLAT, f"slope d<=d_h {below:.4g}, d>=d_h {above:+.4g}; {_replicates([c], reps)}")


SLOPE_POWER = Region(2, 3)


@claim("dpc_exp4_slope_power", PAPER_CLAIM, "DPC", "Exp 4 (Fig 2b)",
       "The Exp 1 slopes grow with d between quadratically and cubically",
       "exponent p of slope ∝ d^p (log-log least squares over 3+ values of d; each slope fitted as Exp 1's, "
       f"2+ points); its 95% interval (repetitions resampled) must lie in [{SLOPE_POWER.low:g}, "
       f"{SLOPE_POWER.high:g}]", SLOPE_POWER, ["dpc_runs", "dpc_summary"],
       "between quadratic (p = 2) and cubic (p = 3)", "DPC Fig 2b")
def dpc_exp4(t):
    cs, reps = dpc_curves(t, "exp1")
    cut = [c for c in _before_cut(cs, "H") if len(c.x) >= 2 and shapes.slope(c, shapes.observed(c))[0] > 0]
    if len(cut) < 3:
        raise Skip(f"only {len(cut)} values of d with a positive Exp 1 slope")
    d = np.log([float(c.meta["dim"]) for c in cut])

    def power(parts):
        s = np.stack([shapes.slope(c, r) for c, r in zip(cut, parts)], axis=1)
        return stats.slope_rows(d, np.log(np.maximum(s, 1e-9)))

    point, lo, hi = shapes.bootstrap_across(cut, power)
    each = [shapes.slope(c, shapes.observed(c))[0] for c in cut]
    return outcome(point, lo, hi, SLOPE_POWER, f"slope {_each(cut, each)}; {_replicates(cut, reps)}"
                   + shapes.dropped(cut))


MLP_AHEAD = Region(1e-12, np.inf)


@claim("dpc_exp5_mlp_mid_aot_linear", PAPER_CLAIM, "DPC", "Exp 5 (Fig 3)",
       "At equal parameter count, the MLP is ahead at mid sizes while attention stays linear",
       "two tests, both must pass: (1) acc(MLP) − acc(AoT) at the middle common grid point, min over d; its "
       "95% interval (repetitions resampled) must lie > 0; (2) AoT linear, not concave, on the points <= 0.95 "
       f"(end-slope ratio >= {LINEAR.low}); statistic = (1). The MLP's plateau is not tested",
       MLP_AHEAD, ["dpc_runs", "dpc_summary"], "MLP ahead at mid sizes but plateaus; AoT stays linear",
       "DPC Fig 3")
def dpc_exp5(t):
    aot, reps = dpc_curves(t, "exp5_aot")
    mlp, _ = dpc_curves(t, "exp5_mlp")
    mlp = {c.label: c for c in mlp}
    pairs = []
    for a in aot:
        m = mlp.get(a.label)
        xs = sorted(set(a.x) & set(m.x)) if m is not None else []
        if xs:
            mid = xs[len(xs) // 2]
            pairs.append((a.label, mid, a.cells[list(a.x).index(mid)], m.cells[list(m.x).index(mid)]))
    if not pairs:
        raise Skip("no common grid points between AoT and MLP")
    cells = [v for _, _, ca, cm in pairs for v in (ca, cm)]

    def lead(rs):
        m = shapes.means(rs)
        return (m[:, 1::2] - m[:, 0::2]).min(axis=1)

    point, lo, hi = stats.bootstrap_cells(cells, lead, shapes.N_RESAMPLES, seed=shapes.SEED)
    linear, lin_detail = _linear_part(aot, "H")
    return outcome(point, lo, hi, MLP_AHEAD, "; ".join(
        f"{s}: MLP lead at H={mid:g} {cm.mean() - ca.mean():+.3f}" for s, mid, ca, cm in pairs)
        + f"; AoT {lin_detail}", replace(linear, name=f"AoT {linear.name}"), name="MLP lead at mid H (min over d)")


SLOPE_RATIO = Region(1.3, 1.7)


@claim("dpc_exp6_slope_ratio", PAPER_CLAIM, "DPC", "Exp 6 (Fig 4)",
       "Measured slope is about 1.3–1.7× the Corollary bound's slope (N = 10, d = d_h = 2)",
       "fitted slope (the original's cut, 2+ points) / bound slope (1−1/N)·d_h/N²; its 95% interval "
       f"(repetitions resampled) must lie in the paper's [{SLOPE_RATIO.low}, {SLOPE_RATIO.high}]",
       SLOPE_RATIO, ["dpc_runs", "dpc_summary"], "1.3–1.7× (1.3 / 1.5 / 1.7 depending on the source)",
       "DPC Fig 4 and its text")
def dpc_exp6(t):
    cs, reps = dpc_curves(t, "exp6", "")
    c = _before_cut(cs, "H")[0]
    if len(c.x) < 2:
        raise Skip("fewer than 2 points before saturation")

    def ratio(c, rs):
        return shapes.slope(c, rs) / bound_slope_per_head(float(c.meta["head_dim"]), int(c.meta["N"]))

    point, lo, hi, _ = shapes.bootstrap([c], ratio)
    slope = shapes.slope(c, shapes.observed(c))[0]
    return outcome(point, lo, hi, SLOPE_RATIO, f"slope {slope:.4g} on {len(c.x)} points; "
                   f"{_replicates([c], reps)}" + shapes.dropped([c]))


@claim("dpc_theory_kl_bounds", PROPERTY, "DPC", "Thm 2, LS vs WLS (App.)",
       "The constructions' KL divergences stay below their stated bounds",
       "every row of the DPC theory table with a finite bound has kl <= bound (1e-9 slack); exact, no interval",
       Region(1, 1), ["dpc_theory"], "KL <= the theorem's bound", "DPC Thm 2, App.")
def dpc_theory(t):
    th = _rows(t["dpc_theory"], "dpc theory")
    if "bound" not in th:
        raise Skip("theory table has no bound column")
    th = th[np.isfinite(th.bound.astype(float))]
    if th.empty:
        raise Skip("no row with a finite bound")
    ok = th.kl <= th.bound + 1e-9
    return _exact(ok.mean(), "; ".join(f"{p}: {int(g.sum())}/{len(g)}" for p, g in ok.groupby(th.part)))


