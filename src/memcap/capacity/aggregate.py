"""The capacity tables: one row per architecture (T*, its interval, the seeds' brackets, bits per
parameter beside both papers' counts), the fitted laws, and every probe (other thresholds read later)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from memcap import results
from memcap.bounds import associations, memorization_bound
from memcap.capacity import grid
from memcap.capacity.store import ProbeStore
from memcap.params import scale_note

TABLES = {"capacity": "capacity.parquet", "capacity_md": "capacity.md", "laws": "laws.parquet",
          "probes": "probes.parquet"}
# Column order of tables/capacity.parquet: the search's row (memcap.capacity.summary), then the bounds
# and bits a parameter at capacity (T*·log2 C / params), and Morris et al.'s threshold-free measure: the
# most memorized bits of any probe (mean over seeds of each seed's largest) over params.
COLUMNS = ["family", "scale", "heads", "head_dim", "context_size", "input_dim", "num_classes", "context",
           "threshold", "seeds", "status", "capacity", "capacity_ci_low", "capacity_ci_high", "capacity_min",
           "seed_capacity", "seed_low", "seed_high", "max_width", "non_monotone", "mlt_bound", "dpc_bound",
           "param_count", "bits_per_param", "bits_ci_low", "bits_ci_high", "max_memorized_bits",
           "max_bits_per_param", "budget_check_seed", "budget_check_T", "budget_check_acc", "budget_limited",
           "probes", "probes_per_round", "train_seconds", "device"]
# Published capacities in bits per parameter, drawn and listed beside ours: the perceptron (Cover 1965,
# Gardner 1988: 2 bits a weight), language models storing knowledge (Allen-Zhu & Li 2024: 2 bits a
# parameter), GPT-style models on random data (Morris et al. 2025: 3.6, 3.83 in fp32), and after heavy
# tuning (Collins et al.: ~5).
ANCHORS = {"Cover / Gardner (perceptron)": 2.0, "Allen-Zhu & Li": 2.0, "Morris et al. (fp32)": 3.83,
           "Collins et al. (tuned)": 5.0}


def probes(runs: list[str], p: dict) -> pd.DataFrame:
    """Every probe of these rows' architectures (budget 1 and the budget checks)."""
    parts = []
    for run in runs:
        H, dh = grid.parse_run_name(run)
        t = ProbeStore(Path(run).parent.parent, p, H, dh, Path(run).parent.name).table()
        parts.append(t[t.seed.isin(p["seeds"])])
    return pd.concat(parts, ignore_index=True).sort_values(["heads", "head_dim", "seed", "budget", "dataset_size"])


def table(rows: pd.DataFrame, probe_rows: pd.DataFrame) -> pd.DataFrame:
    """The rows sorted by (H, d_h), with both bounds, bits a parameter at T* and Morris's measure."""
    cap = rows.sort_values(["heads", "head_dim"]).reset_index(drop=True)
    cap["mlt_bound"] = [memorization_bound(h, n, dh) for h, n, dh in zip(cap.heads, cap.context_size, cap.head_dim)]
    cap["dpc_bound"] = associations(cap.heads, cap.head_dim, cap.input_dim).astype(int)
    per_example = np.log2(cap.num_classes) / cap.param_count
    for col, src in (("bits_per_param", "capacity"), ("bits_ci_low", "capacity_ci_low"), ("bits_ci_high", "capacity_ci_high")):
        cap[col] = cap[src] * per_example
    main = probe_rows[probe_rows.budget == 1]
    most = main.groupby(["heads", "head_dim", "seed"]).memorized_bits.max().groupby(["heads", "head_dim"]).mean()
    cap["max_memorized_bits"] = [most.get((h, dh), math.nan) for h, dh in zip(cap.heads, cap.head_dim)]
    cap["max_bits_per_param"] = cap.max_memorized_bits / cap.param_count
    return cap.reindex(columns=COLUMNS)


def budget_limited(cap: pd.DataFrame) -> pd.Series:
    """Rows whose first failing T passes at 2x the steps: their T* is a lower bound."""
    return cap.budget_limited.fillna(False).astype(bool)


def judged(cap: pd.DataFrame) -> pd.DataFrame:
    """Rows a claim may be judged on: every seed closed, and not budget-limited."""
    return cap[(cap.status == "closed") & ~budget_limited(cap)]


def _seed_points(cap: pd.DataFrame, x: str) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for r in cap.itertuples():
        for c in r.seed_capacity:
            if c is not None and not math.isnan(c):
                xs.append(getattr(r, x))
                ys.append(c)
    return np.asarray(xs, float), np.asarray(ys, float)


def power_law(cap: pd.DataFrame, x: str) -> dict:
    """T* ∝ x^α: least squares of log capacity on log x over every seed's capacity; α's t interval
    (n − 2 degrees of freedom), the prefactor for the figure."""
    from scipy import stats   # here, not at import: Snakemake imports this module to name the tables

    xs, ys = _seed_points(cap, x)
    if len(set(xs)) < 3:
        return {"statistic": math.nan, "ci_low": math.nan, "ci_high": math.nan, "prefactor": math.nan, "points": len(xs)}
    fit = stats.linregress(np.log(xs), np.log(ys))
    half = stats.t.ppf(0.975, len(xs) - 2) * fit.stderr
    return {"statistic": fit.slope, "ci_low": fit.slope - half, "ci_high": fit.slope + half,
            "prefactor": math.exp(fit.intercept), "points": len(xs)}


def ratio(a: list[float], b: list[float], seed: int = 0) -> dict:
    """mean(a) / mean(b) with a percentile bootstrap interval, seeds resampled within each."""
    from scipy import stats

    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or len(b) < 2:
        return {"statistic": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    res = stats.bootstrap((a, b), lambda u, v, axis=-1: u.mean(axis) / v.mean(axis), n_resamples=9999,
                          method="percentile", vectorized=True, random_state=np.random.default_rng(seed))
    return {"statistic": a.mean() / b.mean(), "ci_low": res.confidence_interval.low,
            "ci_high": res.confidence_interval.high}


def _laws_on(rows: pd.DataFrame, p: dict, suffix: str, note: str) -> list[dict]:
    n = p["context_size"]
    on_h = rows[rows.head_dim == p["head_dim"]]
    on_dh = rows[rows.heads == p["heads"]]
    below = on_dh[on_dh.head_dim <= n]
    out = [{"law": "alpha_heads" + suffix, "meaning": f"T* ∝ H^α at d_h = {p['head_dim']}{note}",
            **power_law(on_h, "heads"), "rows": ", ".join(f"H={h}" for h in on_h.heads)},
           {"law": "beta_head_dim_below_n" + suffix, "meaning": f"T* ∝ d_h^β for d_h <= n = {n} at H = {p['heads']}{note}",
            **power_law(below, "head_dim"), "rows": ", ".join(f"d_h={d}" for d in below.head_dim)}]
    at_n, at_2n = on_dh[on_dh.head_dim == n], on_dh[on_dh.head_dim == 2 * n]
    r = (ratio(at_2n.seed_capacity.iloc[0], at_n.seed_capacity.iloc[0]) if len(at_n) and len(at_2n)
         else {"statistic": math.nan, "ci_low": math.nan, "ci_high": math.nan})
    out.append({"law": "past_n_ratio" + suffix, "meaning": f"T*(d_h = {2 * n}) / T*(d_h = {n}) at H = {p['heads']}{note}",
                **r, "prefactor": math.nan, "points": len(at_n) + len(at_2n),
                "rows": f"d_h={n} and d_h={2 * n}" if len(at_n) and len(at_2n) else "missing"})
    return out


def laws(cap: pd.DataFrame, p: dict) -> pd.DataFrame:
    """The papers' claims on capacity: α of T* ∝ H^α on the H grid (MLT: linear), β of T* ∝ d_h^β
    below n, and T*(d_h = 2n) / T*(d_h = n) at the d_h grid's H (MLT: no gain past n). The claims
    read the laws of the rows they may be judged on (judged; `rows` says which); the same laws over
    every closed row, budget-limited ones as the lower bounds they are, follow as `<law>_all`, for
    reading only."""
    closed = cap[cap.status == "closed"]
    return pd.DataFrame(_laws_on(judged(cap), p, "", "")
                        + _laws_on(closed, p, "_all", " (every closed row; budget-limited ones are lower bounds)"))


def shown(cap: pd.DataFrame) -> pd.DataFrame:
    """The capacity table as a reader sees it (markdown here, HTML in the report)."""
    def ci(v, lo, hi, digits=0):
        return "–" if pd.isna(v) else f"{v:,.{digits}f} [{lo:,.{digits}f}, {hi:,.{digits}f}]"

    def end(v) -> str:
        return "–" if v is None or pd.isna(v) else f"{int(v):,}"

    def brackets(r):
        return " ".join(f"[{end(lo)}, {end(hi)})" for lo, hi in zip(r.seed_low, r.seed_high))

    def check(r):
        if pd.isna(r.budget_check_T):
            return "–"
        verdict = "passes: budget-limited, T* is a lower bound" if r.budget_limited else "fails"
        return f"T={int(r.budget_check_T):,} (seed {int(r.budget_check_seed)}): {r.budget_check_acc:.4f}, {verdict}"
    return pd.DataFrame({
        "H": cap.heads, "d_h": cap.head_dim,
        "T* [95% CI]": [ci(r.capacity, r.capacity_ci_low, r.capacity_ci_high) for r in cap.itertuples()],
        "T*_min": cap.capacity_min, "seeds' brackets [T_pass, T_fail)": [brackets(r) for r in cap.itertuples()],
        "params": cap.param_count,
        "bits/param [95% CI]": [ci(r.bits_per_param, r.bits_ci_low, r.bits_ci_high, 3) for r in cap.itertuples()],
        "max bits/param": cap.max_bits_per_param.round(3),
        "MLT bound": cap.mlt_bound, "DPC count": cap.dpc_bound,
        "2x steps at the first failing T": [check(r) for r in cap.itertuples()], "status": cap.status})


def laws_shown(law: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({"law": law.meaning, "estimate [95% CI]": [
        "–" if pd.isna(r.statistic) else f"{r.statistic:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]" for r in law.itertuples()],
        "from": law.rows})


def title(cap: pd.DataFrame, scale: str) -> str:
    scale = f"{scale}, {scale_note(scale)}" if scale_note(scale) else scale
    if not len(cap):
        return f"Capacity by search (scale: {scale})"
    r = cap.iloc[0]
    return (f"Capacity by search (scale: {scale}; d = {r.input_dim}, n = {r.context_size}, C = {r.num_classes}, "
            f"{r.context} context, {r.seeds} seeds, memorized = train accuracy >= {r.threshold})")


def anchors_text() -> str:
    return "Published capacities in bits per parameter: " + "; ".join(f"{k} {v:g}" for k, v in ANCHORS.items()) + "."


def markdown(cap: pd.DataFrame, law: pd.DataFrame, scale: str) -> str:
    """The capacity table and the laws as markdown (pandas' to_markdown)."""
    return (f"# {title(cap, scale)}\n\n{shown(cap).to_markdown(index=False)}\n\n{anchors_text()}\n\n"
            f"## Laws\n\n{laws_shown(law).to_markdown(index=False)}\n")
