"""The claims scorecard: one small function per paper claim, each computing its statistic from the
families' Parquet tables and applying the test written next to it.

A claim function takes `tables` (name -> DataFrame, or None when the file was not given) and returns
`(statistic, passed, detail)`. It raises `NotRun` when the sweep/experiment it needs is absent from
this scale's tables, and `Skip` when the statistic cannot be computed (the reason is reported).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from memcap.dpc import fits as dpc_fits
from memcap.dpc.bounds import bound_slope_per_head
from memcap.mlt.figures import SATURATION_ACC
from memcap.stats import before_saturation, linear_fit, spearman
from memcap.theory.bound import memorization_bound

REPRODUCED, NOT_REPRODUCED, NOT_RUN = "reproduced", "not reproduced", "not run at this scale"
COLUMNS = ["claim_id", "paper", "source", "claim", "test", "statistic", "detail", "verdict", "scale", "inputs"]


class NotRun(Exception):
    """The claim's inputs were not produced at this scale (sweep / experiment absent)."""


class Skip(Exception):
    """The statistic cannot be computed; the message says why."""


@dataclass(frozen=True)
class Claim:
    claim_id: str
    paper: str        # MLT (Mahdavi et al. 2024) | DPC (Dana et al. 2025)
    source: str       # figure / table / theorem of the paper
    claim: str
    test: str         # the written-down test, as applied by `fn`
    inputs: tuple[str, ...]
    fn: Callable


CLAIMS: list[Claim] = []


def claim(claim_id, paper, source, text, test, inputs):
    def register(fn):
        CLAIMS.append(Claim(claim_id, paper, source, text, test, tuple(inputs), fn))
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


def mlt_linear_fits(runs: pd.DataFrame, sweep: str, min_points: int = 3) -> pd.DataFrame:
    """Per T: linear fit of the seed-mean accuracy vs x on the part below MLT's saturation cut."""
    g = _rows(runs, "mlt_synthetic runs", sweep=sweep)
    rows = []
    for T, gt in g.groupby("dataset_size"):
        mean = gt.groupby("x")["mem_acc"].mean()
        x, y = before_saturation(mean.index, mean.values, SATURATION_ACC)
        if len(x) >= min_points:
            rows.append({"dataset_size": T, **linear_fit(x, y)})
    if not rows:
        raise Skip(f"{sweep}: no T with {min_points}+ non-saturated points (acc < {SATURATION_ACC})")
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ MLT claims
R2_MIN = 0.9


@claim("mlt_fig2a_linear_H", "MLT", "Fig 2a",
       "Memorization grows linearly in H before saturation (shared context, classification)",
       f"min over T of the R² of acc ~ a + b·H on the non-saturated points (acc < {SATURATION_ACC}, 3+ points) "
       f">= {R2_MIN}, and every slope > 0", ["mlt_runs"])
def mlt_fig2a(t):
    f = mlt_linear_fits(t["mlt_runs"], "scale_head_shared")
    return float(f.r2.min()), bool(f.r2.min() >= R2_MIN and (f.slope > 0).all()), \
        "; ".join(f"T={r.dataset_size}: R²={r.r2:.3f}, slope={r.slope:.3g}" for r in f.itertuples())


@claim("mlt_fig4_linear_H_random", "MLT", "Fig 4 (left)",
       "Linear growth in H remains with random (general-position) contexts",
       f"min over T of the R² of acc ~ a + b·H (non-saturated, 3+ points) >= {R2_MIN}, every slope > 0",
       ["mlt_runs"])
def mlt_fig4(t):
    f = mlt_linear_fits(t["mlt_runs"], "scale_head")
    return float(f.r2.min()), bool(f.r2.min() >= R2_MIN and (f.slope > 0).all()), \
        "; ".join(f"T={r.dataset_size}: R²={r.r2:.3f}" for r in f.itertuples())


SPEARMAN_MIN = 0.8
RANK_EPS = 1e-9   # Spearman ρ of 4 points is a multiple of 0.2 up to rounding: 0.8 must pass >= 0.8


def _rho_per_T(runs, sweep: str, y: str, what: str) -> dict:
    """Spearman ρ(x, seed mean of y) for each T of a sweep; Skip when no T has a defined ρ."""
    g = _rows(runs, "mlt_synthetic runs", sweep=sweep)
    rho = {T: spearman(*zip(*gt.groupby("x")[y].mean().items()))[0] for T, gt in g.groupby("dataset_size")}
    if all(np.isnan(v) for v in rho.values()):
        raise Skip(f"{what} for every T")
    return rho


@claim("mlt_fig2b_grows_with_n", "MLT", "Fig 2b",
       "Memorization grows with the context size n (shared context)",
       f"min over T of Spearman ρ(n, seed-mean acc) >= {SPEARMAN_MIN}", ["mlt_runs"])
def mlt_fig2b(t):
    rho = _rho_per_T(t["mlt_runs"], "scale_ctx_size_shared", "mem_acc",
                     "accuracy constant in n (or < 3 values of n)")
    m = float(np.nanmin(list(rho.values())))
    return m, m >= SPEARMAN_MIN - RANK_EPS, "; ".join(f"T={T}: ρ={v:.2f}" for T, v in rho.items())


DH_GAIN_MAX = 0.05


@claim("mlt_fig2c_no_gain_past_n", "MLT", "Fig 2c",
       "No gain in memorization from head size past d_h = n (rank r = min(n, d_h))",
       f"max over T of [acc(largest d_h) − acc(d_h = n)] <= {DH_GAIN_MAX} (seed means; needs d_h = n in the grid)",
       ["mlt_runs"])
def mlt_fig2c(t):
    g = _rows(t["mlt_runs"], "mlt_synthetic runs", sweep="scale_dh_shared")
    n = int(g.context_size.iloc[0])
    if n not in set(g.x) or g.x.max() <= n:
        raise Skip(f"the d_h grid {sorted(set(g.x))} lacks d_h = n = {n} or a value above it")
    gains = {T: gt[gt.x == gt.x.max()].mem_acc.mean() - gt[gt.x == n].mem_acc.mean()
             for T, gt in g.groupby("dataset_size")}
    m = float(max(gains.values()))
    return m, m <= DH_GAIN_MAX, f"n={n}; " + "; ".join(f"T={T}: gain {v:+.3f}" for T, v in gains.items())


@claim("mlt_fig5_regression_H", "MLT", "Fig 5 (left)",
       "Regression: train MSE falls as H grows (shared context)",
       f"max over T of Spearman ρ(H, seed-mean MSE) <= −{SPEARMAN_MIN}", ["mlt_runs"])
def mlt_fig5(t):
    rho = _rho_per_T(t["mlt_runs"], "regress_scale_head_shared", "mem_loss",
                     "MSE constant in H (or < 3 values of H)")
    m = float(np.nanmax(list(rho.values())))
    return m, m <= -SPEARMAN_MIN + RANK_EPS, "; ".join(f"T={T}: ρ={v:.2f}" for T, v in rho.items())


LOWER_BOUND_FRACTION = 0.9


@claim("mlt_thm1_trained_above_bound", "MLT", "Theorem 1",
       "Trained models memorize at least H(min(n, d_h) − 1) + 1 examples (the theorem's lower bound)",
       f"fraction of classification runs with acc·T >= min(T, H(min(n,d_h)−1)+1) is >= {LOWER_BOUND_FRACTION}",
       ["mlt_runs"])
def mlt_thm1_trained(t):
    g = _rows(t["mlt_runs"], "mlt_synthetic runs", task="classification")
    bound = memorization_bound(g.heads.to_numpy(), g.context_size.to_numpy(), g.head_dim.to_numpy())
    ok = (g.mem_acc * g.dataset_size + 1e-9) >= np.minimum(g.dataset_size, bound)
    return float(ok.mean()), bool(ok.mean() >= LOWER_BOUND_FRACTION), f"{int(ok.sum())}/{len(ok)} runs"


UNSAT_MIN = 0.5


@claim("mlt_fig3_not_all_heads_saturate", "MLT", "Fig 3",
       "Memorization does not need every head to saturate (unlike the proof's c → ∞ limit)",
       f"mean over runs of the fraction of examples with at least one non-saturated head >= {UNSAT_MIN}",
       ["theory_saturation"])
def mlt_fig3(t):
    s = _rows(t["theory_saturation"], "theory saturation")
    m = float(s.frac_examples_any_unsaturated.mean())
    return m, m >= UNSAT_MIN, f"{len(s)} (run, seed) rows; threshold {s.threshold.iloc[0]}"


@claim("theory_construction_exact", "MLT", "Theorem 1 / Prop 1 (construction)",
       "The Theorem 1 construction memorizes exactly T = H(r − 1) + 1 examples (rank(Z) = T)",
       "every grid point of CONSTRUCT has status ok (rank = T, residual <= 1e-8 through the model)",
       ["theory_construct"])
def theory_construct(t):
    c = _rows(t["theory_construct"], "theory construct")
    ok = c.status == "ok"
    bad = c[~ok].head(3)
    return float(ok.mean()), bool(ok.all()), f"{int(ok.sum())}/{len(c)} points ok" + \
        ("".join(f"; failed H={r.heads} n={r.context_size} d_h={r.head_dim}: {r.reason}" for r in bad.itertuples()))


@claim("theory_rank_bounds", "MLT", "Props 2, 5",
       "rank(Z) never exceeds the Prop 2 (shared context) and Prop 5 upper bounds",
       "every (weights, H, seed) row has rank(Z) <= its bound", ["theory_rank_bounds"])
def theory_rank_bounds(t):
    b = _rows(t["theory_rank_bounds"], "theory rank bounds")
    return float(b.holds.mean()), bool(b.holds.all()), \
        "; ".join(f"{p}: {int(g.holds.sum())}/{len(g)}" for p, g in b.groupby("proposition"))


def _asm1_pattern(checks: pd.DataFrame) -> pd.DataFrame:
    """Asm 1 rows that ran, with the expected outcome: fails at the embedding layer, holds after attention."""
    c = checks[(checks.check == "asm1") & (checks.status == "ok")].copy()
    embedding = c.layer.isin(["embedding layer", "L0"])
    after_attention = c.layer.isin(["random attention", "L1"])
    c = c[embedding | after_attention]
    c["expected"] = ~c.layer.isin(["embedding layer", "L0"])
    return c


@claim("mlt_table1_asm1_layers", "MLT", "Tables 1 and 3",
       "Assumption 1 fails at the embedding layer and holds after one attention layer",
       "every checked (track, model) has Asm 1 false at the embedding layer (L0) and true after one "
       "attention layer (Random Attention / L1)", ["assumption_checks"])
def mlt_table1(t):
    checks = _rows(t["assumption_checks"], "assumption checks")
    c = _asm1_pattern(checks)
    if c.empty:
        reasons = sorted(set(checks[checks.status != "ok"].reason.dropna()))[:2]
        raise Skip("no Asm 1 check ran: " + ("; ".join(reasons) or "no rows"))
    match = c.holds.astype(bool) == c.expected
    return float(match.mean()), bool(match.all()), "; ".join(
        f"{r.track}/{r.model}/{r.layer}: {'holds' if r.holds else 'fails'}" for r in c.itertuples())


# ------------------------------------------------------------------------------------------ DPC claims
def _dpc_points(summary: pd.DataFrame | None, experiment: str) -> pd.DataFrame:
    return _rows(summary, "dpc summary", experiment=experiment)


@claim("dpc_exp1_linear_H_above_bound", "DPC", "Exp 1 (Fig 1a)",
       "Accuracy is linear in H until saturation, with a slope above the bound's",
       f"for every d: R² of the line before saturation (acc_table, 3+ points) >= {R2_MIN} and fitted slope / "
       "bound slope d_h(1−1/N)/N² > 1; statistic = min ratio", ["dpc_summary"])
def dpc_exp1(t):
    p = _dpc_points(t["dpc_summary"], "exp1")
    rows = []
    for s, g in p.groupby("series"):
        g = g.sort_values("x")
        k = dpc_fits.saturation_cut(g.x, g.acc_table_mean)
        if k < 3:
            continue
        f = linear_fit(g.x[:k], g.acc_table_mean[:k])
        N, dh = int(g.N.iloc[0]), float(g.head_dim.iloc[0])
        rows.append((s, f["r2"], f["slope"] / bound_slope_per_head(dh, N)))
    if not rows:
        raise Skip("no d with 3+ points before saturation")
    r2, ratio = min(r[1] for r in rows), min(r[2] for r in rows)
    return float(ratio), bool(r2 >= R2_MIN and ratio > 1), \
        "; ".join(f"d={s}: R²={a:.3f}, slope/bound={b:.2f}" for s, a, b in rows)


@claim("dpc_exp2_quadratic_dh", "DPC", "Exp 2 (Fig 1b)",
       "Accuracy grows roughly quadratically in d_h", f"fit acc = a·d_h² + b: a > 0 and R² >= {R2_MIN}",
       ["dpc_summary"])
def dpc_exp2(t):
    g = _dpc_points(t["dpc_summary"], "exp2").sort_values("x")
    x, y = g.x.to_numpy(float), g.acc_table_mean.to_numpy(float)
    a, b = dpc_fits.power_fit(x, y, 2)
    r2 = 1 - ((y - a * x ** 2 - b) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    return float(r2), bool(a > 0 and r2 >= R2_MIN), f"a={a:.4g}, b={b:.3f}"


FLAT_RATIO = 0.25


@claim("dpc_exp3_linear_then_flat_d", "DPC", "Exp 3 (Fig 2a)",
       "Accuracy is linear in d while d <= d_h, then flat",
       f"two lines split at d = d_h: slope below > 0 and slope above <= {FLAT_RATIO} × slope below; "
       "statistic = slope above / slope below", ["dpc_summary"])
def dpc_exp3(t):
    g = _dpc_points(t["dpc_summary"], "exp3").sort_values("x")
    (a_lo, _), (a_hi, _) = dpc_fits.two_piece_fit(g.x, g.acc_table_mean, float(g.head_dim.iloc[0]))
    if np.isnan(a_lo) or np.isnan(a_hi):
        raise Skip("fewer than 2 points on one side of d = d_h")
    ratio = a_hi / a_lo if a_lo > 0 else np.inf
    return float(ratio), bool(a_lo > 0 and ratio <= FLAT_RATIO), f"slope d<=d_h {a_lo:.4g}, d>=d_h {a_hi:.4g}"


@claim("dpc_exp4_slope_power", "DPC", "Exp 4 (Fig 2b)",
       "The Exp 1 slopes grow with d between quadratically and cubically",
       "exponent p of slope ∝ d^p (log-log least squares over d, 3+ values of d) within [2, 3]", ["dpc_summary"])
def dpc_exp4(t):
    p = _dpc_points(t["dpc_summary"], "exp1")
    pts = []
    for s, g in p.groupby("series"):
        a, _, k = dpc_fits.linear_before_saturation(g.x, g.acc_table_mean)
        if k >= 2 and a > 0:
            pts.append((float(g.dim.iloc[0]), a))
    if len(pts) < 3:
        raise Skip(f"only {len(pts)} values of d with a positive Exp 1 slope")
    d, a = np.log(np.array(pts)).T
    power = float(np.polyfit(d, a, 1)[0])
    return power, bool(2 <= power <= 3), "; ".join(f"d={np.exp(x):.0f}: slope {np.exp(y):.4g}" for x, y in zip(d, a))


@claim("dpc_exp5_mlp_mid_aot_linear", "DPC", "Exp 5 (Fig 3)",
       "At equal parameter count, the MLP is ahead at mid sizes while attention stays linear",
       f"for every d: acc(MLP) > acc(AoT) at the middle grid point, and AoT's R² before saturation >= {R2_MIN}; "
       "statistic = min accuracy lead of the MLP at the middle point", ["dpc_summary"])
def dpc_exp5(t):
    aot = _dpc_points(t["dpc_summary"], "exp5_aot")
    mlp = _dpc_points(t["dpc_summary"], "exp5_mlp")
    leads, r2s = [], []
    for s, ga in aot.groupby("series"):
        gm = mlp[mlp.series == s]
        xs = sorted(set(ga.x) & set(gm.x))
        if not xs:
            continue
        mid = xs[len(xs) // 2]
        leads.append((s, float(gm[gm.x == mid].acc_table_mean.iloc[0] - ga[ga.x == mid].acc_table_mean.iloc[0])))
        ga = ga.sort_values("x")
        k = dpc_fits.saturation_cut(ga.x, ga.acc_table_mean)
        r2s.append(linear_fit(ga.x[:k], ga.acc_table_mean[:k])["r2"] if k >= 3 else np.nan)
    if not leads:
        raise Skip("no common grid points between AoT and MLP")
    lead = min(v for _, v in leads)
    r2 = np.nanmin(r2s) if not all(np.isnan(r2s)) else np.nan
    return lead, bool(lead > 0 and r2 >= R2_MIN), \
        "; ".join(f"d={s}: MLP lead {v:+.3f}" for s, v in leads) + f"; AoT min R² {r2:.3f}"


RATIO_RANGE = (1.2, 1.8)


@claim("dpc_exp6_slope_ratio", "DPC", "Exp 6 (Fig 4)",
       "Measured slope is about 1.3–1.7× the Corollary bound's slope (N = 10, d = d_h = 2)",
       f"fitted slope before saturation / bound slope within {RATIO_RANGE} (1.3–1.7 with ±0.1 tolerance)",
       ["dpc_summary"])
def dpc_exp6(t):
    g = _dpc_points(t["dpc_summary"], "exp6").sort_values("x")
    a, _, k = dpc_fits.linear_before_saturation(g.x, g.acc_table_mean)
    if np.isnan(a):
        raise Skip("fewer than 2 points before saturation")
    N, dh = int(g.N.iloc[0]), float(g.head_dim.iloc[0])
    ratio = a / bound_slope_per_head(dh, N)
    return float(ratio), bool(RATIO_RANGE[0] <= ratio <= RATIO_RANGE[1]), f"slope {a:.4g} on {k} points"


@claim("dpc_theory_kl_bounds", "DPC", "Thm 2, LS vs WLS (App.)",
       "The constructions' KL divergences stay below their stated bounds",
       "every row of the DPC theory table with a finite bound has kl <= bound (1e-9 slack)", ["dpc_theory"])
def dpc_theory(t):
    th = _rows(t["dpc_theory"], "dpc theory")
    if "bound" not in th:
        raise Skip("theory table has no bound column")
    th = th[np.isfinite(th.bound.astype(float))]
    if th.empty:
        raise Skip("no row with a finite bound")
    ok = th.kl <= th.bound + 1e-9
    return float(ok.mean()), bool(ok.all()), "; ".join(f"{p}: {int(g.sum())}/{len(g)}" for p, g in ok.groupby(th.part))


# ------------------------------------------------------------------------------- capacity-search claims
@claim("capacity_above_mlt_bound", "MLT", "Theorem 1 (capacity by search)",
       "Trained capacity (largest T memorized by every seed) is at least H(min(n, d_h) − 1) + 1",
       "for every searched architecture, the bracket's lower end >= the MLT bound", ["capacity"])
def capacity_mlt(t):
    c = _rows(t["capacity"], "capacity")
    ok = c.capacity_low >= c.mlt_bound
    return float(ok.mean()), bool(ok.all()), f"{int(ok.sum())}/{len(c)} architectures"


@claim("capacity_vs_dpc_bound", "DPC", "Corollary 1 (capacity by search)",
       "Trained capacity is at least H·d_h + d (DPC's count of memorized associations)",
       "for every searched architecture, the bracket's lower end >= H·d_h + d", ["capacity"])
def capacity_dpc(t):
    c = _rows(t["capacity"], "capacity")
    ok = c.capacity_low >= c.dpc_bound
    return float(ok.mean()), bool(ok.all()), f"{int(ok.sum())}/{len(c)} architectures"


# ------------------------------------------------------------------------------------------- scorecard
def _scale(tables: dict, inputs: tuple[str, ...], default: str) -> str:
    for name in inputs:
        df = tables.get(name)
        if df is not None and "scale" in df and len(df):
            return str(df["scale"].iloc[0])
    return default


def scorecard(tables: dict[str, pd.DataFrame | None], scale: str) -> pd.DataFrame:
    """One row per claim: statistic, the written test, the verdict, the scale it came from."""
    tables = {name: tables.get(name) for c in CLAIMS for name in c.inputs}   # absent table -> None
    rows = []
    for c in CLAIMS:
        base = {"claim_id": c.claim_id, "paper": c.paper, "source": c.source, "claim": c.claim, "test": c.test,
                "scale": _scale(tables, c.inputs, scale), "inputs": ", ".join(c.inputs)}
        try:
            stat, passed, detail = c.fn(tables)
            verdict = REPRODUCED if passed else NOT_REPRODUCED
        except NotRun as e:
            stat, detail, verdict = np.nan, str(e), NOT_RUN
        except Skip as e:
            stat, detail, verdict = np.nan, str(e), f"skipped: {e}"
        rows.append({**base, "statistic": float(stat), "detail": detail, "verdict": verdict})
    return pd.DataFrame(rows, columns=COLUMNS)


def markdown(card: pd.DataFrame) -> str:
    scales = ", ".join(sorted(set(card.scale)))
    stand_in = " (QUICK STAND-IN: reduced grids, not the papers' scale)" if "quick" in scales else ""
    counts = card.verdict.str.replace(r"^skipped:.*", "skipped", regex=True).value_counts()
    table = pd.DataFrame({
        "claim": card.claim, "paper": card.paper, "source": card.source,
        "statistic": ["" if np.isnan(v) else f"{v:.4g}" for v in card.statistic], "test": card.test,
        "verdict": "**" + card.verdict + "**", "scale": card.scale, "detail": card.detail,
    }).astype(str).apply(lambda col: col.str.replace("|", "/", regex=False))   # a '|' would split a cell
    lines = [f"# Claims scorecard (scale: {scales}){stand_in}", "",
             "Each verdict applies the test written next to the claim in `src/memcap/report/claims.py` to the",
             "families' Parquet results. " + ", ".join(f"{k}: {v}" for k, v in counts.items()) + ".", "",
             table.to_markdown(index=False, disable_numparse=True)]
    return "\n".join(lines) + "\n"
