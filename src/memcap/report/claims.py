"""The claims scorecard: one small function per claim, each computing its statistic from the families'
Parquet tables, with a 95% interval, and testing it against the alternative named next to it.

Two kinds of rows: paper claims (the figures and tables of the papers' experiments) and verified
properties (the theory checked numerically, or trained models checked against a proven bound).

A claim function takes `tables` (name -> DataFrame, or None when the file was not given) and returns
an `Outcome` (statistic, its interval, verdict, detail; see memcap.report.verdicts for the verdicts).
It raises `NotRun` when the sweep/experiment it needs is absent from this scale's tables, and `Skip`
when the statistic cannot be computed (the reason is reported). Intervals come from resampling seeds
(MLT) or repetitions (DPC) within each grid point (memcap.report.shapes); points left out of a fit are
named in the detail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from memcap import stats
from memcap.dpc import fits as dpc_fits
from memcap.bounds import bound_slope_per_head
from memcap.mlt_synthetic.grid import SATURATION_ACC
from memcap.report import shapes
from memcap.report.shapes import Curve
from memcap.report.verdicts import (INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, PAPER_CLAIM, PROPERTY, REPRODUCED,
                                    SKIPPED, VERDICTS, NotRun, Outcome, Region, Skip, fmt, outcome, scale_title)
from memcap.bounds import memorization_bound

__all__ = ["CLAIMS", "COLUMNS", "INCONCLUSIVE", "NOT_REPRODUCED", "NOT_RUN", "PAPER_CLAIM", "PROPERTY", "REPRODUCED",
           "NotRun", "Skip", "markdown", "metrics", "plot_data", "scorecard"]

COLUMNS = ["claim_id", "kind", "paper", "source", "claim", "test", "accept", "statistic", "ci_low", "ci_high",
           "paper_value", "paper_source", "detail", "verdict", "scale", "inputs"]


@dataclass(frozen=True)
class Claim:
    claim_id: str
    kind: str         # PAPER_CLAIM | PROPERTY
    paper: str        # MLT | DPC
    source: str       # figure / table / theorem of the paper
    claim: str
    test: str         # the written-down test against its alternative, as applied by `fn`
    accept: Region    # the values of the statistic's 95% interval that reproduce the claim
    paper_value: str  # the paper's own number or statement, where it gives one
    paper_source: str
    inputs: tuple[str, ...]
    fn: Callable


CLAIMS: list[Claim] = []


def claim(claim_id, kind, paper, source, text, test, accept, inputs, paper_value="", paper_source=""):
    def register(fn):
        CLAIMS.append(Claim(claim_id, kind, paper, source, text, test, accept, paper_value, paper_source,
                            tuple(inputs), fn))
        return fn
    return register


# ------------------------------------------------------------------------------------------- helpers
def _rows(df: pd.DataFrame | None, what: str, **eq) -> pd.DataFrame:
    """Rows of `df` matching every column == value; NotRun when there are none."""
    if df is None:
        raise NotRun(f"no {what} table")
    for k, v in eq.items():
        df = df[df[k] == v]
    if df.empty:
        raise NotRun(f"{what}: no rows with {eq}")
    return df


def _exact(fraction: float, detail: str) -> Outcome:
    """A property computed exactly (no sampling): the interval is the point; it holds iff fraction = 1."""
    return outcome(fraction, fraction, fraction, Region(1, 1), detail)


def _each(cs: list[Curve], values: list[float], unit: str = "") -> str:
    return "; ".join(f"{c.label}: {v:.3g}{unit}" for c, v in zip(cs, values))


def _at_least(cs: list[Curve], n: int, what: str) -> list[Curve]:
    """The curves with n+ points; the others are named as dropped; Skip when none is left."""
    keep = [c for c in cs if len(c.x) >= n]
    for c in cs:
        if len(c.x) < n:
            c.dropped.append(f"{c.label}: whole curve ({len(c.x)} usable points, the test needs {n})")
    if not keep:
        raise Skip(f"no curve with {n}+ {what}" + shapes.dropped(cs))
    return keep


def _replicates(cs: list[Curve], what: str) -> str:
    return f"{', '.join(sorted({c.replicates for c in cs}))} {what} per point"


def mlt_curves(runs: pd.DataFrame | None, sweep: str, value: str = "mem_acc") -> list[Curve]:
    """One curve per dataset size T of an MLT sweep; replicates = seeds."""
    return shapes.curves(_rows(runs, "mlt_synthetic runs", sweep=sweep), "dataset_size", "x", value, "T={}")


# ------------------------------------------------------------------------------------------ MLT claims
# "Linear in X" against concave growth: the parabola's end-slope ratio (shapes.end_slope_ratio) is 1 for
# a line; on H = {1, 2, 4} it is 0.47 for √H, 0.34 for log(1 + H) and 0.70 for H^0.75.
LINEAR = Region(0.75, np.inf)
FASTER_THAN_LINEAR = 1.25


def _linear_in_h(runs, sweep: str) -> Outcome:
    cs = [c.keep(c.means < SATURATION_ACC, f"saturated, seed mean >= {SATURATION_ACC}", "H")
          for c in mlt_curves(runs, sweep)]
    use = _at_least(cs, 3, f"non-saturated values of H (acc < {SATURATION_ACC})")
    point, lo, hi, each = shapes.bootstrap(use, shapes.end_slope_ratio)
    note = (f"; faster than linear (interval above {FASTER_THAN_LINEAR}): not counted against the claim"
            if lo > FASTER_THAN_LINEAR else "")
    detail = (f"end-slope ratio {_each(use, each)}; {_replicates(use, 'seeds')}{note}" + shapes.dropped(cs))
    return outcome(point, lo, hi, LINEAR, detail)


LINEAR_TEST = (f"on the non-saturated points (seed mean < {SATURATION_ACC}, 3+ values of H) of every T, fit a "
               "parabola and divide its slope at the largest H by its slope at the smallest: a line gives 1, "
               "the alternative (diminishing returns, e.g. √H or log H) gives < 1; statistic = min over T, "
               f"its 95% interval (seeds resampled) must lie >= {LINEAR.low}")


@claim("mlt_fig2a_linear_H", PAPER_CLAIM, "MLT", "Fig 2a",
       "Memorization grows linearly in H before saturation (shared context, classification)",
       LINEAR_TEST, LINEAR, ["mlt_runs"],
       "linear in H: R² of the line on the non-saturated part above a high threshold in every case "
       "(the number is lost in the text; spec: probably 0.99)", "MLT §5.2 ¶ Fig 2; spec mahdavi.md Fig 2a")
def mlt_fig2a(t):
    return _linear_in_h(t["mlt_runs"], "scale_head_shared")


@claim("mlt_fig4_linear_H_random", PAPER_CLAIM, "MLT", "Fig 4 (left)",
       "Linear growth in H remains with random (general-position) contexts", LINEAR_TEST, LINEAR, ["mlt_runs"],
       "linear in H, as in Fig 2a", "MLT §5.2 (Fig 4)")
def mlt_fig4(t):
    return _linear_in_h(t["mlt_runs"], "scale_head")


# "Grows / falls": Spearman's ρ between x and every seed's value (runs pooled), its interval over seeds,
# and its one-sided p-value against "no trend".
TREND_RHO, TREND_P = 0.5, 0.05
GROWS, FALLS = Region(TREND_RHO, 1), Region(-1, -TREND_RHO)


def _trend(runs, sweep: str, value: str, direction: int, xname: str) -> Outcome:
    cs = mlt_curves(runs, sweep, value)
    ok = []
    for c in _at_least(cs, 3, f"values of {xname}"):
        if np.isnan(shapes.spearman_p(c, direction)):
            c.dropped.append(f"{c.label}: whole curve ({value} constant)")
        else:
            ok.append(c)
    if not ok:
        raise Skip(f"{value} constant in {xname} for every T" + shapes.dropped(cs))
    point, lo, hi, each = shapes.bootstrap(ok, shapes.pooled_spearman, np.min if direction > 0 else np.max)
    ps = [shapes.spearman_p(c, direction) for c in ok]
    p_verdict = REPRODUCED if max(ps) < TREND_P else INCONCLUSIVE
    detail = ("; ".join(f"{c.label}: ρ={r:.2f}, p={p:.2g}" for c, r, p in zip(ok, each, ps))
              + f"; {_replicates(ok, 'seeds')}" + shapes.dropped(cs))
    return outcome(point, lo, hi, GROWS if direction > 0 else FALLS, detail, p_verdict)


@claim("mlt_fig2b_grows_with_n", PAPER_CLAIM, "MLT", "Fig 2b",
       "Memorization grows with the context size n (shared context)",
       f"Spearman ρ between n and every seed's accuracy (3+ values of n), min over T; the alternative (no "
       f"increase) is rejected when ρ's 95% interval (seeds resampled) lies >= {TREND_RHO} and every T's "
       f"one-sided p < {TREND_P}", GROWS, ["mlt_runs"],
       "memorization increases monotonically with n", "MLT §5.2 ¶ Fig 2")
def mlt_fig2b(t):
    return _trend(t["mlt_runs"], "scale_ctx_size_shared", "mem_acc", +1, "n")


DH_GAIN = Region(0, 0.05)


@claim("mlt_fig2c_no_gain_past_n", PAPER_CLAIM, "MLT", "Fig 2c",
       "No gain in memorization from head size past d_h = n (rank r = min(n, d_h))",
       f"flat past the break: on d_h >= n (needs d_h = n and a larger d_h in the grid), |fitted slope| × the "
       f"d_h range, i.e. the accuracy change past n of either sign; max over T; its 95% interval (seeds "
       f"resampled) must lie <= {DH_GAIN.high}", DH_GAIN, ["mlt_runs"],
       "no benefit on memorization beyond d_h = n", "MLT §5.2 ¶ Fig 2")
def mlt_fig2c(t):
    g = _rows(t["mlt_runs"], "mlt_synthetic runs", sweep="scale_dh_shared")
    n = int(g.context_size.iloc[0])
    if n not in set(g.x) or g.x.max() <= n:
        raise Skip(f"the d_h grid {sorted(set(g.x))} lacks d_h = n = {n} or a value above it")
    cs = [c.keep(c.x >= n, f"below the break d_h = n = {n}", "d_h")
          for c in shapes.curves(g, "dataset_size", "x", "mem_acc", "T={}")]
    cs = _at_least(cs, 2, f"values of d_h >= n = {n}")

    def change(c, rs):
        return np.abs(shapes.slope(c, rs) * np.ptp(c.x))

    point, lo, hi, _ = shapes.bootstrap(cs, change, np.max)
    signed = [shapes.slope(c, [v[None, :] for v in c.cells])[0] * np.ptp(c.x) for c in cs]
    return outcome(point, lo, hi, DH_GAIN, f"n={n}; change past n: {_each(cs, signed)}; "
                   f"{_replicates(cs, 'seeds')}")


@claim("mlt_fig5_regression_H", PAPER_CLAIM, "MLT", "Fig 5 (left)",
       "Regression: train MSE falls as H grows (shared context)",
       f"Spearman ρ between H and every seed's train MSE (3+ values of H), max over T; the alternative (no "
       f"decrease) is rejected when ρ's 95% interval lies <= −{TREND_RHO} and every T's one-sided p < {TREND_P}",
       FALLS, ["mlt_runs"], "", "MLT App. (Fig 5)")
def mlt_fig5(t):
    return _trend(t["mlt_runs"], "regress_scale_head_shared", "mem_loss", -1, "H")


LOWER_BOUND = Region(0.9, 1)


@claim("mlt_thm1_trained_above_bound", PROPERTY, "MLT", "Theorem 1",
       "Trained models memorize at least H(min(n, d_h) − 1) + 1 examples (the theorem's lower bound)",
       f"fraction of classification runs with acc·T >= min(T, H(min(n,d_h)−1)+1); its 95% Wilson interval "
       f"(runs as trials) must lie >= {LOWER_BOUND.low}", LOWER_BOUND, ["mlt_runs"],
       "T = H(min(n, d_h) − 1) + 1 examples memorized", "MLT Theorem 1")
def mlt_thm1_trained(t):
    g = _rows(t["mlt_runs"], "mlt_synthetic runs", task="classification")
    bound = memorization_bound(g.heads.to_numpy(), g.context_size.to_numpy(), g.head_dim.to_numpy())
    ok = (g.mem_acc * g.dataset_size + 1e-9) >= np.minimum(g.dataset_size, bound)
    lo, hi = stats.wilson_interval(int(ok.sum()), len(ok))
    below = g[~ok].head(3)
    return outcome(ok.mean(), lo, hi, LOWER_BOUND, f"{int(ok.sum())}/{len(ok)} runs" + "".join(
        f"; below: {r.sweep} H={r.heads} T={r.dataset_size} seed {r.seed}" for r in below.itertuples()))


UNSATURATED = Region(0.5, 1)


@claim("mlt_fig3_not_all_heads_saturate", PAPER_CLAIM, "MLT", "Fig 3 (App. H)",
       "Memorization does not need every head to saturate (unlike the proof's c → ∞ limit)",
       f"mean over (run, seed) rows of the fraction of examples with at least one non-saturated head "
       f"(max_j α < threshold); its 95% interval (rows resampled) must lie >= {UNSATURATED.low}",
       UNSATURATED, ["theory_saturation"],
       "almost all examples have at least one non-saturated head; saturated means max_j α > 0.99",
       "MLT App. H; spec mahdavi.md Fig 3")
def mlt_fig3(t):
    s = _rows(t["theory_saturation"], "theory saturation")
    v = s.frac_examples_any_unsaturated.to_numpy(float)
    point, lo, hi = stats.bootstrap_cells([v], lambda r: r[0].mean(axis=1), shapes.N_RESAMPLES, seed=shapes.SEED)
    return outcome(point, lo, hi, UNSATURATED, f"{len(s)} (run, seed) rows; threshold {s.threshold.iloc[0]}")


@claim("theory_construction_exact", PROPERTY, "MLT", "Theorem 1 / Prop 1 (construction)",
       "The Theorem 1 construction memorizes exactly T = H(r − 1) + 1 examples (rank(Z) = T)",
       "every grid point of CONSTRUCT has status ok (rank = T, residual <= 1e-8 through the model); exact, "
       "no interval", Region(1, 1), ["theory_construct"], "T = H(r − 1) + 1, r = min(n, d_h)",
       "MLT Theorem 1, Prop 1")
def theory_construct(t):
    c = _rows(t["theory_construct"], "theory construct")
    ok = c.status == "ok"
    bad = c[~ok].head(3)
    return _exact(ok.mean(), f"{int(ok.sum())}/{len(c)} points ok" + "".join(
        f"; failed H={r.heads} n={r.context_size} d_h={r.head_dim}: {r.reason}" for r in bad.itertuples()))


@claim("theory_rank_bounds", PROPERTY, "MLT", "Props 2, 5",
       "rank(Z) never exceeds the Prop 2 (shared context) and Prop 5 upper bounds",
       "every (weights, H, seed) row has rank(Z) <= its bound; exact, no interval", Region(1, 1),
       ["theory_rank_bounds"], "rank(Z) <= H(n − 1) + 1 (Prop 2), <= H(d − 1) + 1 (Prop 5)", "MLT Props 2, 5")
def theory_rank_bounds(t):
    b = _rows(t["theory_rank_bounds"], "theory rank bounds")
    return _exact(b.holds.mean(), "; ".join(f"{p}: {int(g.holds.sum())}/{len(g)}" for p, g in b.groupby("proposition")))


EMBEDDING = ("embedding layer", "L0")
BERT_NOTE = "the paper reports Asm 1 violated for BERT (Kruskal rank 291 trained / 349 random < 512)"
# Table 1's ViT rows: the imagenet track (real ImageNet validation images, tools/fetch-imagenet-sample.sh)
# when it ran, else the fallback tracks (package-photo crops, a code-path check, and sklearn digits).
IMAGENET_TRACK, FALLBACK_VISION_TRACKS = "imagenet", ("photos", "digits")


@claim("mlt_table1_asm1_layers", PAPER_CLAIM, "MLT", "Tables 1 and 3",
       "Assumption 1 fails at the embedding layer and holds after attention (ViT models, GPT-2)",
       "every checked (track, model) of the ViT rows and GPT-2 has Asm 1 false at the embedding layer (L0) "
       "and true for every other layer (Random Attention, ViT first block, L1), each decided by its own 95% "
       "Wilson interval against the rank-check threshold; statistic = fraction matching the pattern, its "
       "interval = [matches certain, matches possible]. ViT rows: the imagenet track (real ImageNet images) "
       "when it ran, else the photos and digits tracks (the detail says which); BERT's L1 is not tested ("
       + BERT_NOTE + ")",
       Region(1, 1), ["assumption_checks"],
       "Asm 1 ✗ only for the Embedding layer, ✓ for the other ViT models (Table 1); GPT-2 ✓ after one layer; "
       "BERT Kruskal rank 291/349 < 512 (Table 3)", "MLT §5.1 (Table 1), App. J (Table 3)")
def mlt_table1(t):
    checks = _rows(t["assumption_checks"], "assumption checks")
    c = checks[(checks.check == "asm1") & (checks.status == "ok")].copy()
    if c.empty:
        reasons = sorted(set(checks[checks.status != "ok"].reason.dropna()))[:2]
        raise Skip("no Asm 1 check ran: " + ("; ".join(reasons) or "no rows"))
    if (c.track == IMAGENET_TRACK).any():
        c = c[~c.track.isin(FALLBACK_VISION_TRACKS)]
        used = f"ViT rows from the {IMAGENET_TRACK} track (real ImageNet images); photos/digits rows not used"
    else:
        absent = checks[(checks.track == IMAGENET_TRACK) & (checks.status != "ok")].reason.dropna()
        used = (f"ViT rows from the fallback {'/'.join(FALLBACK_VISION_TRACKS)} tracks: no {IMAGENET_TRACK} rows "
                + (f"({absent.iloc[0][:200]})" if len(absent) else "ran"))
    embedding = c.layer.isin(EMBEDDING)
    untested = c[~embedding & (c.track == "bert")]
    c = c[embedding | (c.track != "bert")]
    expected = ~c.layer.isin(EMBEDDING)
    holds = c.holds.astype(bool)
    if {"ci_low", "ci_high", "threshold"} <= set(c):
        sure_holds, sure_fails = c.ci_low >= c.threshold, c.ci_high < c.threshold
    else:
        sure_holds, sure_fails = holds, ~holds
    certain = np.where(expected, sure_holds, sure_fails)
    wrong = np.where(expected, sure_fails, sure_holds)
    n = len(c)
    detail = used + ". " + "; ".join(f"{r.track}/{r.model}/{r.layer}: {'holds' if h else 'fails'}"
                       + ("" if k else " (interval straddles the threshold)" if not w else " (against the paper)")
                       for r, h, k, w in zip(c.itertuples(), holds, certain, wrong))
    if len(untested):
        detail += "; not tested: " + ", ".join(f"{r.model}/{r.layer}" for r in untested.itertuples())
    return outcome((holds == expected).mean(), certain.sum() / n, (n - wrong.sum()) / n, Region(1, 1), detail)


# ------------------------------------------------------------------------------------------ DPC claims
def dpc_curves(t: dict, experiment: str, label: str = "d={}") -> tuple[list[Curve], str]:
    """One curve per series of a DPC experiment; replicates = repetitions (dpc_runs). With only the summary
    table, the repetition means are used and there is no interval."""
    if t.get("dpc_runs") is not None:
        g = _rows(t["dpc_runs"], "dpc runs", experiment=experiment)
        return shapes.curves(g, "series", "x", "acc_table", label), "repetitions"
    g = _rows(t.get("dpc_summary"), "dpc summary (and no dpc runs)", experiment=experiment)
    return shapes.curves(g, "series", "x", "acc_table_mean", label), "means (no per-repetition table: no spread)"


DPC_SAT = 0.95   # the original's saturation threshold (dpc.fits.saturation_cut)


def _before_cut(cs: list[Curve], xname: str) -> list[Curve]:
    """The original's fit points: up to and including the first point with mean > 0.95."""
    return [c.keep(np.arange(len(c.x)) < dpc_fits.saturation_cut(c.x, c.means),
                   f"after the first point above {DPC_SAT}", xname) for c in cs]


def _linear_part(cs: list[Curve], xname: str) -> tuple[str, str]:
    """(verdict, detail) of the concave-vs-linear test on the points with mean <= 0.95."""
    below = [c.keep(c.means <= DPC_SAT, f"saturated, mean > {DPC_SAT}", xname) for c in cs]
    try:
        use = _at_least(below, 3, f"points below {DPC_SAT}")
    except Skip as e:
        return INCONCLUSIVE, f"linearity not testable: {e}"
    point, lo, hi, each = shapes.bootstrap(use, shapes.end_slope_ratio)
    o = outcome(point, lo, hi, LINEAR, "")
    return o.verdict, (f"linear vs concave: min end-slope ratio {fmt(point, lo, hi)} (needs >= {LINEAR.low}: "
                       f"{o.verdict}; {_each(use, each)})" + shapes.dropped(below))


ABOVE_BOUND = Region(1, np.inf)


@claim("dpc_exp1_linear_H_above_bound", PAPER_CLAIM, "DPC", "Exp 1 (Fig 1a)",
       "Accuracy is linear in H until saturation, with a slope above the bound's",
       "two tests, both must pass: (1) slope / bound slope (1−1/N)·d_h/N², the slope fitted as the original "
       "does (up to the first point above 0.95, 3+ points), min over d; its 95% interval (repetitions "
       f"resampled) must lie >= 1; (2) linear, not concave, on the points <= 0.95: the end-slope ratio "
       f"(as MLT Fig 2a) >= {LINEAR.low}; statistic = (1)", ABOVE_BOUND, ["dpc_runs", "dpc_summary"],
       "linear until saturation; slope far above the bound's (no number stated)", "DPC Fig 1a; spec dana.md §3")
def dpc_exp1(t):
    cs, reps = dpc_curves(t, "exp1")
    lin_verdict, lin_detail = _linear_part(cs, "H")
    cut = _at_least(_before_cut(cs, "H"), 3, "points before saturation")

    def ratio(c, rs):
        return shapes.slope(c, rs) / bound_slope_per_head(float(c.meta["head_dim"]), int(c.meta["N"]))

    point, lo, hi, each = shapes.bootstrap(cut, ratio)
    return outcome(point, lo, hi, ABOVE_BOUND, f"slope/bound {_each(cut, each)}; {lin_detail}; "
                   f"{_replicates(cut, reps)}" + shapes.dropped(cut), lin_verdict)


QUADRATIC = Region(1.5, 2.5)


@claim("dpc_exp2_quadratic_dh", PAPER_CLAIM, "DPC", "Exp 2 (Fig 1b)",
       "Accuracy grows roughly quadratically in d_h",
       "exponent p of (acc − 1/N) ∝ d_h^p (log-log least squares on the points between chance and 0.95); "
       f"its 95% interval (repetitions resampled) must lie in [{QUADRATIC.low}, {QUADRATIC.high}]: a line "
       "through chance gives p = 1", QUADRATIC, ["dpc_runs", "dpc_summary"],
       "roughly quadratic in d_h (fit a·d_h² + b)", "DPC Fig 1b; spec dana.md §3")
def dpc_exp2(t):
    cs, reps = dpc_curves(t, "exp2", "")
    c = cs[0]
    chance = 1 / int(c.meta["N"])
    c = c.keep((c.means > chance) & (c.means <= DPC_SAT), f"at chance 1/N = {chance:.3g} or above {DPC_SAT}",
               "d_h")
    if len(c.x) < 3:
        raise Skip(f"{len(c.x)} points between chance and {DPC_SAT}" + shapes.dropped([c]))
    point, lo, hi, _ = shapes.bootstrap([c], shapes.log_exponent(chance))
    fit = stats.power_exponent(c.x, c.means, chance)
    return outcome(point, lo, hi, QUADRATIC, f"log-log R² {fit['r2']:.3f} on {len(c.x)} points; "
                   f"{_replicates([c], reps)}" + shapes.dropped([c]))


FLAT = Region(0, 0.25)


@claim("dpc_exp3_linear_then_flat_d", PAPER_CLAIM, "DPC", "Exp 3 (Fig 2a)",
       "Accuracy is linear in d while d <= d_h, then flat",
       "two lines split at d = d_h (2+ points each side); statistic = |slope above| / slope below (either sign "
       "above: a falling curve is not flat; a slope below <= 0 gives +inf); its 95% interval (repetitions "
       f"resampled) must lie <= {FLAT.high}", FLAT, ["dpc_runs", "dpc_summary"],
       "linear in d while d <= d_h, then flat", "DPC Fig 2a; spec dana.md §3")
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
        return shapes._ratio(np.abs(above), below)

    point, lo, hi, _ = shapes.bootstrap([c], ratio)
    below, above = (float(s[0]) for s in slopes([v[None, :] for v in c.cells]))
    return outcome(point, lo, hi, FLAT, f"slope d<=d_h {below:.4g}, d>=d_h {above:+.4g}; {_replicates([c], reps)}")


SLOPE_POWER = Region(2, 3)


@claim("dpc_exp4_slope_power", PAPER_CLAIM, "DPC", "Exp 4 (Fig 2b)",
       "The Exp 1 slopes grow with d between quadratically and cubically",
       "exponent p of slope ∝ d^p (log-log least squares over 3+ values of d; each slope fitted as Exp 1's, "
       f"2+ points); its 95% interval (repetitions resampled) must lie in [{SLOPE_POWER.low:g}, "
       f"{SLOPE_POWER.high:g}]", SLOPE_POWER, ["dpc_runs", "dpc_summary"],
       "between quadratic (p = 2) and cubic (p = 3)", "DPC Fig 2b; spec dana.md §3")
def dpc_exp4(t):
    cs, reps = dpc_curves(t, "exp1")
    cut = [c for c in _before_cut(cs, "H") if len(c.x) >= 2 and shapes.slope(c, [v[None, :] for v in c.cells])[0] > 0]
    if len(cut) < 3:
        raise Skip(f"only {len(cut)} values of d with a positive Exp 1 slope")
    d = np.log([float(c.meta["dim"]) for c in cut])
    bounds = np.cumsum([0] + [len(c.cells) for c in cut])

    def power(rs):
        s = np.stack([shapes.slope(c, rs[bounds[i]:bounds[i + 1]]) for i, c in enumerate(cut)], axis=1)
        return stats.slope_rows(d, np.log(np.maximum(s, 1e-9)))

    point, lo, hi = stats.bootstrap_cells([v for c in cut for v in c.cells], power, shapes.N_RESAMPLES,
                                          seed=shapes.SEED)
    each = [shapes.slope(c, [v[None, :] for v in c.cells])[0] for c in cut]
    return outcome(point, lo, hi, SLOPE_POWER, f"slope {_each(cut, each)}; {_replicates(cut, reps)}"
                   + shapes.dropped(cut))


MLP_AHEAD = Region(1e-12, np.inf)


@claim("dpc_exp5_mlp_mid_aot_linear", PAPER_CLAIM, "DPC", "Exp 5 (Fig 3)",
       "At equal parameter count, the MLP is ahead at mid sizes while attention stays linear",
       "two tests, both must pass: (1) acc(MLP) − acc(AoT) at the middle common grid point, min over d; its "
       "95% interval (repetitions resampled) must lie > 0; (2) AoT linear, not concave, on the points <= 0.95 "
       f"(end-slope ratio >= {LINEAR.low}); statistic = (1). The MLP's plateau is not tested",
       MLP_AHEAD, ["dpc_runs", "dpc_summary"], "MLP ahead at mid sizes but plateaus; AoT stays linear",
       "DPC Fig 3; spec dana.md §3")
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
    lin_verdict, lin_detail = _linear_part(aot, "H")
    return outcome(point, lo, hi, MLP_AHEAD, "; ".join(
        f"{s}: MLP lead at H={mid:g} {cm.mean() - ca.mean():+.3f}" for s, mid, ca, cm in pairs)
        + f"; AoT {lin_detail}", lin_verdict)


SLOPE_RATIO = Region(1.3, 1.7)


@claim("dpc_exp6_slope_ratio", PAPER_CLAIM, "DPC", "Exp 6 (Fig 4)",
       "Measured slope is about 1.3–1.7× the Corollary bound's slope (N = 10, d = d_h = 2)",
       "fitted slope (the original's cut, 2+ points) / bound slope (1−1/N)·d_h/N²; its 95% interval "
       f"(repetitions resampled) must lie in the paper's [{SLOPE_RATIO.low}, {SLOPE_RATIO.high}]",
       SLOPE_RATIO, ["dpc_runs", "dpc_summary"], "1.3–1.7× (1.3 / 1.5 / 1.7 depending on the source)",
       "DPC Fig 4; spec dana.md §3, §6")
def dpc_exp6(t):
    cs, reps = dpc_curves(t, "exp6", "")
    c = _before_cut(cs, "H")[0]
    if len(c.x) < 2:
        raise Skip("fewer than 2 points before saturation")

    def ratio(c, rs):
        return shapes.slope(c, rs) / bound_slope_per_head(float(c.meta["head_dim"]), int(c.meta["N"]))

    point, lo, hi, _ = shapes.bootstrap([c], ratio)
    slope = shapes.slope(c, [v[None, :] for v in c.cells])[0]
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


# ------------------------------------------------------------------------------- capacity-search claims
def _capacity(c: pd.DataFrame, bound: str) -> Outcome:
    """The search brackets each capacity in [low, high): it meets the bound for sure when low >= bound,
    misses it for sure when high <= bound; statistic = fraction with low >= bound, interval = [sure,
    possible] fraction."""
    sure = c.capacity_low >= c[bound]
    high = c.capacity_high.astype(float).fillna(np.inf)
    possible = high > c[bound]
    n = len(c)
    below = c[~sure]
    return outcome(sure.mean(), sure.sum() / n, possible.sum() / n, Region(1, 1),
                   f"{int(sure.sum())}/{n} architectures" + "".join(
                       f"; H={r.heads} d_h={r.head_dim}: [{r.capacity_low}, {r.capacity_high}) vs {getattr(r, bound)}"
                       for r in below.itertuples()))


@claim("capacity_above_mlt_bound", PROPERTY, "MLT", "Theorem 1 (capacity by search)",
       "Trained capacity (largest T memorized by every seed) is at least H(min(n, d_h) − 1) + 1",
       "every searched architecture's capacity bracket [low, high) lies at or above the MLT bound; a bracket "
       "containing the bound is inconclusive (a finer search would decide)", Region(1, 1), ["capacity"],
       "T = H(min(n, d_h) − 1) + 1", "MLT Theorem 1")
def capacity_mlt(t):
    return _capacity(_rows(t["capacity"], "capacity"), "mlt_bound")


@claim("capacity_vs_dpc_bound", PROPERTY, "DPC", "Corollary 1 (capacity by search)",
       "Trained capacity is at least H·d_h + d (DPC's count of memorized associations)",
       "every searched architecture's capacity bracket [low, high) lies at or above H·d_h + d; a bracket "
       "containing it is inconclusive", Region(1, 1), ["capacity"], "H·d_h + d associations", "DPC Corollary 1")
def capacity_dpc(t):
    return _capacity(_rows(t["capacity"], "capacity"), "dpc_bound")


# ------------------------------------------------------------------------------------------- scorecard
# The family that writes each input table: a table without a scale column has its family's scale.
INPUT_FAMILY = {"mlt_runs": "mlt_synthetic", "theory_construct": "theory", "theory_rank_bounds": "theory",
                "theory_saturation": "theory", "assumption_checks": "assumptions", "dpc_runs": "dpc",
                "dpc_summary": "dpc", "dpc_theory": "dpc", "capacity": "capacity"}


def _scale(tables: dict, inputs: tuple[str, ...], scale: str | dict[str, str]) -> str:
    for name in inputs:
        df = tables.get(name)
        if df is not None and "scale" in df and len(df):
            return str(df["scale"].iloc[0])
    return scale if isinstance(scale, str) else scale[INPUT_FAMILY[inputs[0]]]


def scorecard(tables: dict[str, pd.DataFrame | None], scale: str | dict[str, str]) -> pd.DataFrame:
    """One row per claim: statistic with its 95% interval, the written test, the verdict, the scale.

    scale: one for every family, or each family's (memcap.params.scales), for the rows whose tables
    have no scale column."""
    tables = {name: tables.get(name) for c in CLAIMS for name in c.inputs}   # absent table -> None
    rows = []
    for c in CLAIMS:
        base = {"claim_id": c.claim_id, "kind": c.kind, "paper": c.paper, "source": c.source, "claim": c.claim,
                "test": c.test, "accept": c.accept.text(), "paper_value": c.paper_value,
                "paper_source": c.paper_source, "scale": _scale(tables, c.inputs, scale), "inputs": ", ".join(c.inputs)}
        try:
            o = c.fn(tables)
            res = {"statistic": o.statistic, "ci_low": o.ci_low, "ci_high": o.ci_high, "detail": o.detail,
                   "verdict": o.verdict}
        except NotRun as e:
            res = {"detail": str(e), "verdict": NOT_RUN}
        except Skip as e:
            res = {"detail": str(e), "verdict": f"{SKIPPED}: {e}"}
        rows.append({"statistic": np.nan, "ci_low": np.nan, "ci_high": np.nan, **base, **res})
    return pd.DataFrame(rows, columns=COLUMNS).astype({"statistic": float, "ci_low": float, "ci_high": float})


def _short(verdict: str) -> str:
    return SKIPPED if verdict.startswith(SKIPPED) else verdict


def metrics(card: pd.DataFrame) -> dict:
    """Verdict counts per kind and per paper (every verdict listed, zeros included), for `dvc metrics`."""
    def counts(rows):
        v = rows.verdict.map(_short).value_counts()
        return {k.replace(" at this scale", "").replace(" ", "_"): int(v.get(k, 0)) for k in VERDICTS}
    return {"all": counts(card),
            "paper_claims": counts(card[card.kind == PAPER_CLAIM]),
            "verified_properties": counts(card[card.kind == PROPERTY]),
            **{f"{p}_paper_claims": counts(card[(card.paper == p) & (card.kind == PAPER_CLAIM)])
               for p in ("MLT", "DPC")}}


def metrics_json(card: pd.DataFrame) -> str:
    return json.dumps(metrics(card), indent=2) + "\n"


def plot_data(card: pd.DataFrame) -> pd.DataFrame:
    """claim_id, statistic, ci_low, ci_high, verdict (±inf left empty) for `dvc plots`."""
    out = card[["claim_id", "statistic", "ci_low", "ci_high", "verdict"]].copy()
    out["verdict"] = out.verdict.map(_short)
    num = ["statistic", "ci_low", "ci_high"]
    out[num] = out[num].where(np.isfinite(out[num]) & (out[num].abs() < shapes.INF_CAP))
    return out


def interval(r) -> str:
    """'1.23 [1.01, 1.45]', '1' (exact), or '' (not computed)."""
    if np.isnan(r.statistic):
        return ""
    if r.ci_low == r.ci_high == r.statistic:
        return f"{r.statistic:.4g}"
    return f"{r.statistic:.4g} [{r.ci_low:.4g}, {r.ci_high:.4g}]"


SECTIONS = [(PAPER_CLAIM, "Paper claims", "the figures and tables of the papers' experiments"),
            (PROPERTY, "Verified properties", "the theory checked numerically, and trained models checked "
                                              "against a proven bound")]
HOW_TO_READ = (
    "How to read a verdict: the statistic comes with its 95% interval (seeds or repetitions resampled; "
    "Wilson for fractions of runs; exact properties have none). **reproduced**: the whole interval lies in "
    "the accepted region (the `accept` column), so the named alternative is rejected. **not reproduced**: "
    "the whole interval lies outside it. **inconclusive**: the interval straddles the threshold; more "
    "seeds/repetitions or the paper's scale would decide. **not run at this scale**: the sweep it needs "
    "is absent. **skipped**: the statistic cannot be computed (why is given). Points left out of a fit "
    "are named in the detail.")


def markdown(card: pd.DataFrame) -> str:
    lines = [f"# Claims scorecard {scale_title(card.scale, 'reduced grids, not the papers’ scale')}", "",
             "Each verdict applies the test written next to the claim in `src/memcap/report/claims.py` to the",
             "families' Parquet results.", "", HOW_TO_READ, ""]
    for kind, title, what in SECTIONS:
        part = card[card.kind == kind]
        counts = part.verdict.map(_short).value_counts()
        table = pd.DataFrame({
            "claim": part.claim, "paper": part.paper, "source": part.source,
            "statistic [95% CI]": [interval(r) for r in part.itertuples()], "accept": part.accept,
            "verdict": "**" + part.verdict + "**", "paper's number": part.paper_value,
            "paper source": part.paper_source, "test": part.test, "detail": part.detail, "scale": part.scale,
        }).astype(str).apply(lambda col: col.str.replace("|", "/", regex=False))   # a '|' would split a cell
        lines += [f"## {title}", "", f"{title} ({what}): " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + ".",
                  "", table.to_markdown(index=False, disable_numparse=True), ""]
    return "\n".join(lines)
