"""The capacity tables: one row per architecture (T*, its interval, the seeds' brackets, bits per
parameter beside both papers' counts, the budget curve, memorized bits without a threshold), the fitted
laws (and T*'s law in H and d_v: the readout's rank), and every probe (other thresholds read later)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from memcap import results
from memcap.bounds import associations, memorization_bound
from memcap.capacity import grid, morris, settings
from memcap.capacity.curve import NO_CURVE
from memcap.capacity.store import ProbeStore
from memcap.scales import scale_note

TABLES = {"capacity": "capacity.parquet", "capacity_md": "capacity.md", "laws": "laws.parquet",
          "probes": "probes.parquet"}
# Column order of tables/capacity.parquet: the search's row (memcap.capacity.summary), then the bounds
# and bits a parameter at capacity (T*·log2 C / params), and Morris et al.'s threshold-free measure: the
# most memorized bits of any probe (mean over seeds of each seed's largest) over params.
COLUMNS = ["family", "scale", "setting", "heads", "head_dim", "context_size", "input_dim", "num_classes", "context",
           "threshold", "seeds", "status", "capacity", "capacity_ci_low", "capacity_ci_high", "capacity_min",
           "seed_capacity", "seed_low", "seed_high", "max_width", "non_monotone", "mlt_bound", "dpc_bound",
           "param_count", "bits_per_param", "bits_ci_low", "bits_ci_high", "max_memorized_bits",
           "max_bits_per_param", "bound", "bound_ratio", "budget_check_seed", "budget_check_T", "budget_check_acc", "budget_limited",
           "probes", "probes_per_round", "train_seconds", "device",
           # d_v; the budget curve (memcap.capacity.summary.budget_curve): T* at each budget, its verdict,
           # passes per example at each T*, T∞; bits a parameter at the largest budget's T* (a lower
           # bound unless converged); Morris et al.'s curve of memorized bits against T (memcap.capacity.morris)
           "value_dim", "budgets", "capacity_budget", "capacity_budget_low", "capacity_budget_high",
           "seed_capacity_budget", "budget_curve", "exposures", "capacity_limit", "capacity_limit_low",
           "capacity_limit_high", "curve_bits_per_param", "morris_bits", "morris_bits_per_param", "morris_T",
           "morris_largest_T", "morris_plateau", "morris_from"]
# Published capacities in bits per parameter, drawn and listed beside ours: the perceptron (Cover 1965,
# Gardner 1988: 2 bits a weight), language models storing knowledge (Allen-Zhu & Li 2024: 2 bits a
# parameter), GPT-style models on random data (Morris et al. 2025: 3.6, 3.83 in fp32), and after heavy
# tuning (Collins et al.: ~5).
ANCHORS = {"Cover / Gardner (perceptron)": 2.0, "Allen-Zhu & Li": 2.0, "Morris et al. (fp32)": 3.83,
           "Collins et al. (tuned)": 5.0}


def preset_of(run: str) -> str:
    """The preset a row file belongs to: its folder, runs/<preset>/ (memcap.capacity.grid.run_name)."""
    return Path(run).parent.name


def probes(runs: list[str], section: dict) -> pd.DataFrame:
    """Every probe of these rows' architectures (budget 1 and the budget checks); `section` is the
    family's presets (each row's own is its folder's); scale names the preset, setting what it measures."""
    parts = []
    for run in runs:
        H, dh = grid.parse_run_name(run)
        p = section[preset_of(run)]
        t = ProbeStore(Path(run).parent.parent, p, H, dh, Path(run).parent.name).table()
        parts.append(t[t.seed.isin(p["seeds"])].assign(scale=preset_of(run), setting=settings.label(p)))
    return pd.concat(parts, ignore_index=True).sort_values(["scale", "heads", "head_dim", "seed", "budget", "dataset_size"])


def setting_of(cap: pd.DataFrame) -> pd.Series:
    """Each row's setting (a table written before settings were named: MLT's C-way classification)."""
    if "setting" in cap and cap.setting.notna().all():
        return cap.setting
    derived = cap.num_classes.map(lambda c: settings.label({"num_classes": int(c)}))
    return cap.setting.fillna(derived) if "setting" in cap else derived


def is_dpc(cap: pd.DataFrame) -> pd.Series:
    return setting_of(cap).str.startswith(settings.DPC + "/")


def _curve_defaults(cap: pd.DataFrame) -> pd.DataFrame:
    """Rows written without a budget curve's columns: d_v = 1 and no curve."""
    cap = cap.copy()
    for col, default in (("value_dim", 1), ("budget_curve", NO_CURVE)):
        cap[col] = cap[col].fillna(default) if col in cap else default
    for col in ("budgets", "capacity_budget", "capacity_budget_low", "capacity_budget_high", "exposures"):
        if col not in cap:
            cap[col] = [[] for _ in range(len(cap))]
        cap[col] = [list(v) if isinstance(v, (list, np.ndarray)) else [] for v in cap[col]]
    return cap


def morris_columns(cap: pd.DataFrame, probe_rows: pd.DataFrame, section: dict | None,
                   mlt_runs: pd.DataFrame | None) -> pd.DataFrame:
    """Morris et al.'s measure per row: its probes at budget 1, and the MLT family's runs of its shape."""
    out = []
    for r in cap.itertuples():
        mine = probe_rows[(probe_rows.budget == 1) & (probe_rows.heads == r.heads) & (probe_rows.head_dim == r.head_dim)]
        if "scale" in probe_rows and "scale" in cap:
            mine = mine[mine.scale == r.scale]
        p = section.get(r.scale) if section and "scale" in cap else None
        runs = morris.runs_like(mlt_runs, p, r.heads, r.head_dim) if p is not None else morris.runs_like(None, {}, 0, 0)
        points = pd.concat([mine.reindex(columns=["dataset_size", "seed", "memorized_bits"]), runs], ignore_index=True)
        src = ("probes" + (f" + {len(runs)} MLT runs of its shape" if len(runs) else
                           "" if mlt_runs is not None else " (no MLT runs table given)"))
        out.append({**morris.measure(points), "morris_from": src})
    return pd.DataFrame(out, index=cap.index)


def table(rows: pd.DataFrame, probe_rows: pd.DataFrame, section: dict | None = None,
          mlt_runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows by setting, then (H, d_h), with both bounds, the bound that applies (`bound`: DPC's count
    for DPC rows, MLT's for the others) and T*/bound, bits a parameter at T* and Morris's measure
    (section: the family's presets, mlt_runs: the MLT family's runs table, for its points)."""
    cap = rows.assign(setting=setting_of(rows)).sort_values(["setting", "input_dim", "heads", "head_dim"])
    cap = cap.reset_index(drop=True)
    cap["mlt_bound"] = [memorization_bound(h, n, dh) for h, n, dh in zip(cap.heads, cap.context_size, cap.head_dim)]
    cap["dpc_bound"] = associations(cap.heads, cap.head_dim, cap.input_dim).astype(int)
    cap["bound"] = cap.dpc_bound.where(is_dpc(cap), cap.mlt_bound)
    cap["bound_ratio"] = cap.capacity / cap.bound
    per_example = np.log2(cap.num_classes) / cap.param_count
    for col, src in (("bits_per_param", "capacity"), ("bits_ci_low", "capacity_ci_low"), ("bits_ci_high", "capacity_ci_high")):
        cap[col] = cap[src] * per_example
    main = probe_rows[probe_rows.budget == 1]
    keys = ["scale", "heads", "head_dim"] if "scale" in main else ["heads", "head_dim"]
    most = main.groupby([*keys, "seed"]).memorized_bits.max().groupby(keys).mean()
    cap["max_memorized_bits"] = [most.get(tuple(r), math.nan) for r in cap[keys].itertuples(index=False)]
    cap["max_bits_per_param"] = cap.max_memorized_bits / cap.param_count
    cap = _curve_defaults(cap)
    last = [c[-1] if len(c) else math.nan for c in cap.capacity_budget]
    cap["curve_bits_per_param"] = np.asarray(last, float) * per_example
    cap = pd.concat([cap.drop(columns=[c for c in cap if c.startswith("morris_")]),
                     morris_columns(cap, probe_rows, section, mlt_runs)], axis=1)
    cap["morris_bits_per_param"] = cap.morris_bits / cap.param_count
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
    dpc = settings.family(p) == settings.DPC
    n = p["input_dim"] if dpc else p["context_size"]      # DPC: d_h up to d; MLT: up to the context size n
    on_h = rows[rows.head_dim == p["head_dim"]]
    on_dh = rows[rows.heads == p["heads"]]
    below = on_dh[on_dh.head_dim <= n]
    at = f"{settings.label(p)}{', d = ' + str(p['input_dim']) if dpc else ''}: "
    out = [{"law": "alpha_heads" + suffix, "meaning": f"{at}T* ∝ H^α at d_h = {p['head_dim']}{note}",
            **power_law(on_h, "heads"), "rows": ", ".join(f"H={h}" for h in on_h.heads)},
           {"law": "beta_head_dim_below_n" + suffix,
            "meaning": f"{at}T* ∝ d_h^β for d_h <= {'d' if dpc else 'n'} = {n} at H = {p['heads']}{note}",
            **power_law(below, "head_dim"), "rows": ", ".join(f"d_h={d}" for d in below.head_dim)}]
    if dpc:
        return out
    at_n, at_2n = on_dh[on_dh.head_dim == n], on_dh[on_dh.head_dim == 2 * n]
    r = (ratio(at_2n.seed_capacity.iloc[0], at_n.seed_capacity.iloc[0]) if len(at_n) and len(at_2n)
         else {"statistic": math.nan, "ci_low": math.nan, "ci_high": math.nan})
    out.append({"law": "past_n_ratio" + suffix, "meaning": f"{at}T*(d_h = {2 * n}) / T*(d_h = {n}) at H = {p['heads']}{note}",
                **r, "prefactor": math.nan, "points": len(at_n) + len(at_2n),
                "rows": f"d_h={n} and d_h={2 * n}" if len(at_n) and len(at_2n) else "missing"})
    return out


def laws(cap: pd.DataFrame, section: dict) -> pd.DataFrame:
    """laws_of for each preset of the table (its `scale`), with its scale and setting."""
    parts = [laws_of(cap[cap.scale == name], section[name]).assign(scale=name, setting=settings.label(section[name]))
             for name in dict.fromkeys(cap.scale)]
    if "value_dim" in cap and len(readout := readout_laws(cap)):
        parts.append(readout)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["law", "scale", "setting"])


def laws_of(cap: pd.DataFrame, p: dict) -> pd.DataFrame:
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
    def bound(r):
        which = settings.applies(r.setting)
        if which.startswith("neither") or pd.isna(r.capacity):
            return which
        return f"{which}: T* = {r.bound_ratio:.2f} x {int(r.bound):,}"
    return pd.DataFrame({
        "setting": cap.setting, "d": cap.input_dim, "H": cap.heads, "d_h": cap.head_dim,
        "T* [95% CI]": [ci(r.capacity, r.capacity_ci_low, r.capacity_ci_high) for r in cap.itertuples()],
        "T*_min": cap.capacity_min, "seeds' brackets [T_pass, T_fail)": [brackets(r) for r in cap.itertuples()],
        "params": cap.param_count,
        "bits/param [95% CI]": [ci(r.bits_per_param, r.bits_ci_low, r.bits_ci_high, 3) for r in cap.itertuples()],
        "max bits/param": cap.max_bits_per_param.round(3),
        "MLT bound": cap.mlt_bound, "DPC count": cap.dpc_bound, "bound that applies": [bound(r) for r in cap.itertuples()],
        "2x steps at the first failing T": [check(r) for r in cap.itertuples()], "status": cap.status,
        "d_v": cap.value_dim,
        "T* at each budget (x the paper's steps)": [curve_cells(r) for r in cap.itertuples()],
        "budget curve": cap.budget_curve,
        "passes an example at T*": [", ".join(f"{e:,.0f}" for e in r.exposures if not pd.isna(e)) or "–"
                                    for r in cap.itertuples()],
        "T∞ [95% CI]": [ci(r.capacity_limit, r.capacity_limit_low, r.capacity_limit_high) for r in cap.itertuples()],
        "bits/param at the largest budget": [curve_bits(r) for r in cap.itertuples()],
        "memorized bits, no threshold (max; per param)": [
            "–" if pd.isna(r.morris_bits) else f"{r.morris_bits:,.0f} at T={int(r.morris_T):,}; {r.morris_bits_per_param:.3f}"
            for r in cap.itertuples()],
        "bits plateau": cap.morris_plateau.fillna("–")})


def curve_cells(r) -> str:
    """T*(B) [interval] at each budget of a row's curve, or why it has none."""
    if len(r.budgets) <= 1:
        return r.budget_curve
    return "; ".join(f"{b}x: " + ("–" if pd.isna(m) else f"{m:,.0f} [{lo:,.0f}, {hi:,.0f}]")
                     for b, m, lo, hi in zip(r.budgets, r.capacity_budget, r.capacity_budget_low, r.capacity_budget_high))


def curve_bits(r) -> str:
    """Bits a parameter at the largest budget's T*: a value where the curve converged, else a lower bound."""
    if pd.isna(r.curve_bits_per_param) or len(r.budgets) <= 1:
        return "–"
    return f"{r.curve_bits_per_param:.3f}" if r.budget_curve == "converged" else f">= {r.curve_bits_per_param:.3f} (still rising)"


def laws_shown(law: pd.DataFrame) -> pd.DataFrame:
    law = law[~law.law.str.endswith("_all")] if "setting" in law else law
    return pd.DataFrame({"law": law.meaning, "estimate [95% CI]": [
        "–" if pd.isna(r.statistic) else f"{r.statistic:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]" for r in law.itertuples()],
        "from": law.rows})


def title(cap: pd.DataFrame, scale: str) -> str:
    scale = f"{scale}, {scale_note(scale)}" if scale_note(scale) else scale
    if not len(cap):
        return f"Capacity by search (scale: {scale})"
    if setting_of(cap).nunique() > 1:
        return (f"Capacity by search (scale: {scale}; settings: {', '.join(dict.fromkeys(setting_of(cap)))}; "
                f"memorized = train accuracy >= the threshold on the T examples or associations)")
    r = cap.iloc[0]
    return (f"Capacity by search (scale: {scale}; d = {r.input_dim}, n = {r.context_size}, C = {r.num_classes}, "
            f"{r.context} context, {r.seeds} seeds, memorized = train accuracy >= {r.threshold})")


def anchors_text() -> str:
    return "Published capacities in bits per parameter: " + "; ".join(f"{k} {v:g}" for k, v in ANCHORS.items()) + "."


def _span(values, fmt: str) -> str:
    values = [v for v in values if not pd.isna(v)]
    return "–" if not values else (format(min(values), fmt) if min(values) == max(values)
                                   else f"{format(min(values), fmt)} to {format(max(values), fmt)}")


def sentences(cap: pd.DataFrame, law: pd.DataFrame | None = None) -> list[str]:
    """One sentence a setting on what one attention layer memorizes there, its numbers from the table
    (closed rows) and the laws."""
    out = []
    for setting, g in cap.assign(setting=setting_of(cap)).groupby("setting", sort=False):
        ok = g[g.status == "closed"]
        if ok.empty:
            out.append(f"{setting}: no closed rows yet.")
            continue
        lim = int(budget_limited(ok).sum())
        text = (f"{setting} ({len(ok)} architectures x {int(ok.seeds.max())} seeds): T* from {_span(ok.capacity, ',.0f')}, "
                f"{_span(ok.bits_per_param, '.3f')} bits per parameter")
        which = settings.applies(setting)
        if not which.startswith("neither"):
            text += f", {_span(ok.bound_ratio, '.1f')} times {which.split(' (')[0]}'s count"
        else:
            text += ", beyond both theorems"
        if law is not None and "setting" in law:
            a = law[(law.setting == setting) & (law.law == "alpha_heads")]
            a = a[a.statistic.notna()]
            if len(a):
                r = a.iloc[0]
                text += f"; T* ∝ H^α with α = {r.statistic:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
        text += f"{f' ({lim} budget-limited: lower bounds)' if lim else ''}."
        out.append(text)
    return out


def findings(cap: pd.DataFrame, law: pd.DataFrame | None = None) -> list[str]:
    """The budget curve, bits without a threshold, the readout's rank and the lr check, in sentences."""
    return budget_sentences(cap) + morris_sentences(cap) + readout_sentence(law) + lr_sentences(cap)


def markdown(cap: pd.DataFrame, law: pd.DataFrame, scale: str) -> str:
    """The capacity table and the laws as markdown (pandas' to_markdown)."""
    lines = "".join(f"- {t}\n" for t in sentences(cap, law) + findings(cap, law))
    return (f"# {title(cap, scale)}\n\n{lines}\n{shown(cap).to_markdown(index=False)}\n\n{anchors_text()}\n\n"
            f"## Laws\n\n{laws_shown(law).to_markdown(index=False)}\n")


# ---- the budget curve, bits without a threshold, the readout's rank, the lr check -------------------

def _seed_caps_at(r, budget: int) -> list[float]:
    """A row's seeds' capacities at a budget of its curve (budget 1: the search's own)."""
    if budget == 1:
        caps = r.seed_capacity
    elif budget in list(r.budgets):
        caps = list(r.seed_capacity_budget)[list(r.budgets).index(budget)]
    else:
        return []
    return [float(c) for c in caps if c is not None and not math.isnan(float(c))]


def readout_rows(cap: pd.DataFrame) -> pd.DataFrame:
    """The MLT classification rows that tell H's law from H·d_v's: every closed row (no variant) at the
    H and d_h of the rows with d_v > 1, each d_v."""
    c = cap.assign(setting=setting_of(cap))
    c = c[c.setting.str.startswith("mlt/classification") & c.setting.map(settings.variant).isna()
          & (c.status == "closed")]
    wide = c[c.value_dim > 1]
    return c[c.heads.isin(wide.heads) & c.head_dim.isin(wide.head_dim)] if len(wide) else c.iloc[:0]


def readout_law(cap: pd.DataFrame, budget: int = 1) -> dict | None:
    """T* ∝ H^α · d_v^γ: least squares of log T* on log H and log d_v over every seed's capacity at this
    budget, t intervals (points − 3 degrees of freedom), and γ − α's. γ = α: T* follows H·d_v (the
    readout's rank); γ = 0: it follows H. None without two values of each."""
    from scipy import stats

    rows = readout_rows(cap)
    xs = [(r.heads, r.value_dim, c) for r in rows.itertuples() for c in _seed_caps_at(r, budget)]
    if len({h for h, _, _ in xs}) < 2 or len({v for _, v, _ in xs}) < 2 or len(xs) < 5:
        return None
    a = np.asarray(xs, float)
    X = np.column_stack([np.ones(len(a)), np.log(a[:, 0]), np.log(a[:, 1])])
    y = np.log(a[:, 2])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    dof = len(y) - 3
    cov = np.linalg.inv(X.T @ X) * float(((y - X @ beta) ** 2).sum()) / dof
    t = stats.t.ppf(0.975, dof)

    def ci(est, var):
        half = t * math.sqrt(max(var, 0.0))
        return float(est), float(est - half), float(est + half)
    alpha, gamma = ci(beta[1], cov[1, 1]), ci(beta[2], cov[2, 2])
    diff = ci(beta[2] - beta[1], cov[1, 1] + cov[2, 2] - 2 * cov[1, 2])
    return {"alpha": alpha, "gamma": gamma, "diff": diff, "verdict": readout_verdict(gamma, diff), "points": len(y),
            "heads": sorted({int(h) for h, _, _ in xs}), "value_dims": sorted({int(v) for _, v, _ in xs}),
            "head_dim": sorted(set(rows.head_dim))}


H_DV, H_ONLY, BETWEEN, UNDECIDED = "follows H·d_v", "follows H (d_v adds nothing)", "between H and H·d_v", "undecided"


def readout_verdict(gamma: tuple[float, float, float], diff: tuple[float, float, float]) -> str:
    """From γ's interval and γ − α's: which of H·d_v and H the data support."""
    has_zero = lambda v: v[1] <= 0 <= v[2]                                      # noqa: E731
    if has_zero(diff) and gamma[1] > 0:
        return H_DV
    if has_zero(gamma) and not has_zero(diff):
        return H_ONLY
    if gamma[1] > 0 and diff[2] < 0:
        return BETWEEN
    return UNDECIDED


def readout_laws(cap: pd.DataFrame) -> pd.DataFrame:
    """readout_law at budgets 1 and 2 as rows of the laws table (scale `readout`)."""
    out = []
    for budget in (1, 2):
        law = readout_law(cap, budget)
        if law is None:
            continue
        at = (f"mlt/classification, d_h = {law['head_dim']}, H in {law['heads']}, d_v in {law['value_dims']}, "
              f"{budget}x the steps: T* ∝ H^α d_v^γ ({law['verdict']})")
        for name, key, what in (("readout_alpha", "alpha", "α"), ("readout_gamma", "gamma", "γ"),
                                ("readout_gamma_minus_alpha", "diff", "γ − α")):
            est, lo, hi = law[key]
            out.append({"law": f"{name}_x{budget}", "meaning": f"{at}: {what}", "statistic": est, "ci_low": lo,
                        "ci_high": hi, "prefactor": math.nan, "points": law["points"], "rows": law["verdict"],
                        "scale": "readout", "setting": "mlt/classification"})
    return pd.DataFrame(out)


def is_plain(setting: str) -> bool:
    """A setting's own rows, not a d_v or lr variant's (memcap.capacity.settings.base)."""
    return settings.base(setting) == setting


def _arch(r) -> str:
    """An architecture as sentences name it; DPC's rows of one setting differ in d too."""
    d = f"d={int(r.input_dim)} " if str(r.setting).startswith(settings.DPC + "/") else ""
    return f"{d}H={r.heads} d_h={r.head_dim}" + (f" d_v={int(r.value_dim)}" if r.value_dim != 1 else "")


def _path(r) -> str:
    return " → ".join("–" if pd.isna(c) else f"{c:,.0f}" for c in r.capacity_budget)


def budget_sentences(cap: pd.DataFrame) -> list[str]:
    """How far from converged the paper's budget leaves each architecture (rows with a curve), or why
    no curve was searched."""
    c = cap.assign(setting=setting_of(cap))
    curved = c[c.budgets.map(len) > 1]
    if curved.empty:
        return ["Budget curve: SKIPPED (no preset of this table searches budgets; "
                "scale {capacity: paper_budget} does)."]
    out = []
    for setting, g in curved.groupby("setting", sort=False):
        budgets = ", ".join(str(b) for b in g.budgets.iloc[0])
        parts = [f"{_arch(r)} {r.budget_curve} ({_path(r)}; {r.exposures[0]:,.0f} passes an example at T*(1))"
                 if len(r.exposures) and not pd.isna(r.exposures[0]) else f"{_arch(r)} {r.budget_curve} ({_path(r)})"
                 for r in g.itertuples()]
        limits = [f"{_arch(r)} T∞ = {r.capacity_limit:,.0f} [{r.capacity_limit_low:,.0f}, {r.capacity_limit_high:,.0f}]"
                  for r in g.itertuples() if not pd.isna(r.capacity_limit)]
        out.append(f"{setting}: T* at {budgets} x the paper's steps: " + "; ".join(parts)
                   + (f"; fitted {'; '.join(limits)}" if limits else "") + ".")
    rest = c[(c.budgets.map(len) <= 1) & c.budget_curve.str.startswith("not run (") & (c.budget_curve != NO_CURVE)]
    for why, g in rest.groupby("budget_curve", sort=False):
        out.append(f"Budget curve {why}: {', '.join(_arch(r) for r in g.itertuples())}.")
    return out


def morris_sentences(cap: pd.DataFrame) -> list[str]:
    """Memorized bits without a threshold, per setting: the most, where, and which rows plateaued."""
    out = []
    for setting, g in cap.assign(setting=setting_of(cap)).groupby("setting", sort=False):
        g = g[g.morris_bits.notna()]
        if g.empty:
            continue
        top = g.loc[g.morris_bits_per_param.idxmax()]
        flat = [_arch(r) for r in g.itertuples() if r.morris_plateau == morris.PLATEAU]
        rising = [_arch(r) for r in g.itertuples() if r.morris_plateau == morris.RISING]
        out.append(f"{setting}, memorized bits without a threshold (Morris et al.: Σ max(0, log2 C − loss in bits), "
                   f"the most over T): {_span(g.morris_bits, ',.0f')} bits, {_span(g.morris_bits_per_param, '.3f')} "
                   f"bits per parameter (most: {_arch(top)}, {top.morris_bits:,.0f} bits at T = {int(top.morris_T):,}); "
                   f"plateaued: {', '.join(flat) or 'none'}; still rising at the largest T: {', '.join(rising) or 'none'}.")
    return out


def readout_sentence(law: pd.DataFrame | None) -> list[str]:
    if law is None or "scale" not in law or not (law.scale == "readout").any():
        return ["Values per head (d_v): SKIPPED (no closed rows with d_v > 1 beside d_v = 1 at two H; "
                "scale {capacity: paper_budget} searches them)."]
    out = []
    for budget in (1, 2):
        g = law[law.law.str.endswith(f"_x{budget}")].set_index("law")
        if g.empty:
            continue
        a, gm = g.loc[f"readout_alpha_x{budget}"], g.loc[f"readout_gamma_x{budget}"]
        out.append(f"Values per head at {budget}x the steps: T* ∝ H^α d_v^γ with α = {a.statistic:.2f} "
                   f"[{a.ci_low:.2f}, {a.ci_high:.2f}], γ = {gm.statistic:.2f} [{gm.ci_low:.2f}, {gm.ci_high:.2f}]: "
                   f"T* {gm.rows} ({int(a.points)} seeds' capacities).")
    return out


def lr_sentences(cap: pd.DataFrame) -> list[str]:
    """The lr check: T* at lr x k (variant rows) beside T* at 1x and 2x the steps of the same architecture."""
    c = cap.assign(setting=setting_of(cap))
    checks = c[c.setting.map(settings.variant).notna()]
    out = []
    for (H, dh), g in checks.groupby(["heads", "head_dim"]):
        base = c[(c.heads == H) & (c.head_dim == dh) & c.setting.map(settings.variant).isna() & (c.value_dim == 1)
                 & c.setting.map(settings.base).isin(g.setting.map(settings.base))]
        at2 = [r.capacity_budget[list(r.budgets).index(2)] for r in base.itertuples() if 2 in list(r.budgets)]
        if base.empty or not at2 or pd.isna(at2[0]):
            out.append(f"lr check at H={H} d_h={dh}: SKIPPED (no T* at 2x the steps of this architecture in the table).")
            continue
        r0 = base.iloc[0]
        variants = {settings.variant(r.setting): r.capacity for r in g.itertuples()}
        out.append(f"lr check at H={H} d_h={dh}: T* = {r0.capacity:,.0f} at the paper's lr and steps, {at2[0]:,.0f} at 2x "
                   f"the steps, " + ", ".join(f"{v:,.0f} at {k}" for k, v in variants.items())
                   + f": {lr_verdict(r0, at2[0], list(variants.values()))}.")
    return out


def lr_verdict(base, at2: float, variants: list[float]) -> str:
    """Which limits at the paper's steps: the step count (more steps raise T*, another lr does not),
    the lr (another lr reaches what 2x the steps reach), or both."""
    def same(a, r):   # inside r's interval or within 5%
        return (not pd.isna(r.capacity_ci_low) and r.capacity_ci_low <= a <= r.capacity_ci_high) or abs(a - r.capacity) <= 0.05 * r.capacity
    if any(pd.isna(v) for v in variants) or pd.isna(base.capacity):
        return "undecided (a search not closed)"
    if same(at2, base):
        return "neither limits (2x the steps does not raise T*)"
    if all(same(v, base) or v < base.capacity for v in variants):
        return "the step count limits (another lr does not raise T*; more steps do)"
    if any(v >= at2 or abs(v - at2) <= 0.05 * at2 for v in variants):
        return "the lr limits (another lr reaches at the paper's steps what 2x the steps reach)"
    return "both (another lr raises T*, less than 2x the steps)"
