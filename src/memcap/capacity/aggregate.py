"""The capacity tables (numbers only): one row per architecture (T₅₀ with its interval, T₉₀, the
transition's width, the seeds' brackets, bits per parameter beside both papers' counts, the budget
curve, memorized bits without a threshold), the fitted laws (memcap.capacity.laws) over every row, and
every probe (other thresholds read later). Their words: memcap.capacity.words."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from memcap.bounds import PUBLISHED_BITS_PER_PARAM, associations, memorization_bound
from memcap.capacity import laws as fits
from memcap.capacity import grid, morris, settings
from memcap.capacity.convergence import NO_CURVE
from memcap.capacity.store import store
from memcap.scales import is_stand_in
from memcap.capacity.summary import lower_bound

TABLES = {"capacity": "capacity.parquet", "capacity_md": "capacity.md", "capacity_csv": "capacity.csv",
          "laws": "laws.parquet", "probes": "probes.parquet"}
# Column order of tables/capacity.parquet: the search's row (memcap.capacity.summary), then the bounds,
# bits a parameter at T₅₀ (T₅₀·log2 C / params, with its interval), Morris et al.'s threshold-free
# measure, and what the laws take of the row.
COLUMNS = ["family", "scale", "setting", *settings.SETTING_COLUMNS, "heads", "head_dim", "context_size", "input_dim", "num_classes", "context",
           "value_dim", "threshold", "seeds", "seeds_max", "search_end", "width_goal",
           "capacity", "capacity_ci_low", "capacity_ci_high", "t90", "width", "width_high", "sharp", "no_fit",
           "seed_ids", "seed_low", "seed_high", "seed_status", "seed_capacity", "seed_range_low", "seed_range_high",
           "non_monotone", "mlt_bound", "dpc_bound", "bound", "bound_ratio",
           "param_count", "bits_per_param", "bits_ci_low", "bits_ci_high", "max_memorized_bits", "max_bits_per_param",
           "budget_check_seed", "budget_check_T", "budget_check_acc", "budget_limited",
           "budgets", "capacity_budget", "capacity_budget_low", "capacity_budget_high", "budget_seeds",
           "budget_search_end", "rise", "rise_low", "rise_high", "rise_pairs", "rise_verdict", "budget_curve",
           "exposures", "capacity_limit", "capacity_limit_low", "capacity_limit_high", "capacity_limit_note",
           "curve_bits_per_param", "lower_bound", "law_T", "law_low", "law_high", "law_excluded",
           "morris_bits", "morris_bits_per_param", "morris_T", "morris_largest_T", "morris_plateau", "morris_from",
           "probes", "probes_per_round", "train_seconds", "device"]
ANCHORS = PUBLISHED_BITS_PER_PARAM   # published capacities in bits per parameter (memcap.bounds)


def preset_of(run: str) -> str:
    """The preset a row file belongs to: its folder, runs/<preset>/ (memcap.capacity.grid.run_name)."""
    return Path(run).parent.name


def probes(runs: list[str], section: dict) -> pd.DataFrame:
    """Every probe of these rows' architectures and seeds (every budget); `section` is the family's
    presets (each row's own is its folder's); scale names the preset, setting what it measures."""
    parts = []
    for run in runs:
        H, dh = grid.parse_run_name(run)
        p = section[preset_of(run)]
        t = store(Path(run).parent.parent, p, H, dh, Path(run).parent.name).table()
        parts.append(t[t.seed.isin(p["seeds"])].assign(scale=preset_of(run), setting=settings.label(p, preset_of(run))))
    return pd.concat(parts, ignore_index=True).sort_values(["scale", "heads", "head_dim", "seed", "budget", "dataset_size"])


def with_setting(cap: pd.DataFrame, section: dict) -> pd.DataFrame:
    """The rows with their preset's setting columns (memcap.capacity.settings.columns, by `scale`)."""
    cols = pd.DataFrame([settings.columns(section[s], s) for s in cap.scale], index=cap.index,
                        columns=list(settings.SETTING_COLUMNS))
    cols.insert(0, "setting", [settings.label(section[s], s) for s in cap.scale])   # the preset's words, not the row file's
    return pd.concat([cap.drop(columns=[c for c in ("setting", *settings.SETTING_COLUMNS) if c in cap]), cols], axis=1)


def paper_task_first(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of presets that are not a quick stand-in where there are any, else all of them (a table of
    both: a law or a panel speaks for the paper's task)."""
    paper = ~rows.scale.map(is_stand_in) if "scale" in rows else pd.Series(True, index=rows.index)
    return rows[paper] if paper.any() else rows


def is_plain(cap: pd.DataFrame) -> pd.Series:
    """A setting's own rows: no lr or tuned variant, the paper's one value a head."""
    return cap.variant.isna() & cap.setting.eq(cap.setting_base)


def morris_columns(cap: pd.DataFrame, probe_rows: pd.DataFrame, section: dict | None,
                   mlt_runs: pd.DataFrame | None) -> pd.DataFrame:
    """Morris et al.'s measure per row: its probes at budget 1, and the MLT family's runs of its shape."""
    out = []
    for r in cap.itertuples():
        mine = probe_rows[(probe_rows.budget == 1) & (probe_rows.heads == r.heads) & (probe_rows.head_dim == r.head_dim)]
        if "scale" in probe_rows:
            mine = mine[mine.scale == r.scale]
        p = section.get(r.scale) if section else None
        runs = morris.runs_like(mlt_runs, p, r.heads, r.head_dim) if p is not None else morris.runs_like(None, {}, 0, 0)
        points = pd.concat([mine.reindex(columns=["dataset_size", "seed", "memorized_bits"]), runs], ignore_index=True)
        src = ("probes" + (f" + {len(runs)} MLT runs of its shape" if len(runs) else
                           "" if mlt_runs is not None else " (no MLT runs table given)"))
        out.append({**morris.measure(points), "morris_from": src})
    return pd.DataFrame(out, index=cap.index)


def readout_too_narrow(r) -> str:
    """Why a row is left out of the laws: MLT's readout sees H·d_v numbers, fewer than the log2 C bits
    of one label (a rank-1 readout of 100 classes); '' where it is not."""
    if r.readout == settings.ASSOCIATIONS:   # DPC's readout sees d numbers, not H·d_v
        return ""
    dims, bits = r.heads * r.value_dim, math.log2(r.num_classes)
    return f"H·d_v = {dims} < log2 C = {bits:.1f}: the readout is narrower than a label" if dims < bits else ""


def law_columns(r) -> dict:
    """What the laws take of a row: T₅₀ at its largest budget with a fit, its interval, and why it is
    left out ('' where it is in); a row whose every probe passed enters as a lower bound at its largest pass."""
    excluded = readout_too_narrow(r)
    for T, lo, hi in reversed(list(zip(r.capacity_budget, r.capacity_budget_low, r.capacity_budget_high))):
        if not pd.isna(T):
            return {"law_T": T, "law_low": lo, "law_high": hi, "law_excluded": excluded}
    passes = [v for v in r.seed_low if v is not None and not pd.isna(v)]
    if str(r.no_fit).startswith("every probe passed") and passes:
        return {"law_T": float(max(passes)), "law_low": float(max(passes)), "law_high": math.inf, "law_excluded": excluded}
    return {"law_T": math.nan, "law_low": math.nan, "law_high": math.nan,
            "law_excluded": excluded or f"no T₅₀ ({r.no_fit or r.search_end})"}


def table(rows: pd.DataFrame, probe_rows: pd.DataFrame, section: dict, mlt_runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows by setting, then (H, d_h), with both bounds, the bound that applies (`bound`: DPC's count
    for DPC rows, MLT's for the others) and T₅₀/bound, bits a parameter at T₅₀, Morris's measure and the
    laws' view of each row (section: the family's presets, mlt_runs: the MLT family's runs table)."""
    cap = with_setting(rows.sort_values(["setting", "input_dim", "heads", "head_dim"]).reset_index(drop=True), section)
    cap["mlt_bound"] = [memorization_bound(h, n, dh) for h, n, dh in zip(cap.heads, cap.context_size, cap.head_dim)]
    cap["dpc_bound"] = associations(cap.heads, cap.head_dim, cap.input_dim).astype(int)
    cap["bound"] = cap.dpc_bound.where(cap.readout.eq(settings.ASSOCIATIONS), cap.mlt_bound)
    cap["bound_ratio"] = cap.capacity / cap.bound
    per_example = np.log2(cap.num_classes) / cap.param_count
    for col, src in (("bits_per_param", "capacity"), ("bits_ci_low", "capacity_ci_low"), ("bits_ci_high", "capacity_ci_high")):
        cap[col] = cap[src] * per_example
    main = probe_rows[probe_rows.budget == 1]
    keys = ["scale", "heads", "head_dim"] if "scale" in main else ["heads", "head_dim"]
    most = main.groupby([*keys, "seed"]).memorized_bits.max().groupby(keys).mean()
    cap["max_memorized_bits"] = [most.get(tuple(r), math.nan) for r in cap[keys].itertuples(index=False)]
    cap["max_bits_per_param"] = cap.max_memorized_bits / cap.param_count
    last = [c[-1] if len(c) else math.nan for c in cap.capacity_budget]
    cap["curve_bits_per_param"] = np.asarray(last, float) * per_example
    cap["lower_bound"] = [lower_bound(r) for _, r in cap.iterrows()]
    cap = pd.concat([cap, pd.DataFrame([law_columns(r) for r in cap.itertuples()], index=cap.index)], axis=1)
    cap = pd.concat([cap.drop(columns=[c for c in cap if c.startswith("morris_")]),
                     morris_columns(cap, probe_rows, section, mlt_runs)], axis=1)
    cap["morris_bits_per_param"] = cap.morris_bits / cap.param_count
    return cap.reindex(columns=COLUMNS)


# ---- the laws ---------------------------------------------------------------------------------------

def law_point(r, *x: float) -> fits.Point:
    return fits.point(r.law_T, r.law_low, r.law_high, bool(r.lower_bound) or math.isinf(r.law_high), *x)


def _shown_row(r, x: str, label: str) -> str:
    return f"{label}={getattr(r, x)}" + (" (≥)" if r.lower_bound or math.isinf(r.law_high) else "")


def power_law(rows: pd.DataFrame, x: str, label: str) -> dict:
    """T₅₀ ∝ x^α over the rows (censored where lower bounds); which rows, and which left out and why."""
    use = rows[rows.law_excluded.eq("") & rows.law_T.notna()]
    left = rows[~rows.index.isin(use.index)]
    points = [law_point(r, getattr(r, x)) for r in use.itertuples()]
    law = fits.fit(points)
    out = {"statistic": math.nan, "ci_low": math.nan, "ci_high": math.nan, "prefactor": math.nan, "tau": math.nan,
           "points": len(use), "censored": int(use.lower_bound.sum()) if len(use) else 0, "no_fit": fits.why_not(points)}
    if law is not None:
        out.update(statistic=law.estimate, ci_low=law.low, ci_high=law.high, prefactor=math.exp(law.intercept),
                   tau=law.tau, censored=law.censored)
    return {**out, "rows": ", ".join(_shown_row(r, x, label) for r in use.itertuples()) or "none",
            "excluded": "; ".join(f"{label}={getattr(r, x)}: {r.law_excluded}" for r in left.itertuples())}


def setting_groups(section: dict, names) -> dict[str, list[str]]:
    """The presets among `names` whose rows are one setting, by the first of them in params.yaml's order:
    presets that differ only in their grids and budgets (e.g. the 8x budget of H = 1, 2 beside the 4x of
    the others) measure the same thing, so their rows share one law and one line in a figure."""
    groups: dict[tuple, list[str]] = {}
    for name in [n for n in section if n in set(names)]:
        p = section[name]
        same = {k: v for k, v in grid.search_settings(p, 0, 0).items()
                if k not in ("heads", "head_dim", "budgets", "budget_not_run")}
        groups.setdefault((settings.label(p, name), json.dumps(same, sort_keys=True)), []).append(name)
    return {names[0]: names for names in groups.values()}


def _anchors(ps: list[dict], grid_key: str, fixed: str) -> list:
    """The fixed values a group's laws are taken at: each member's that varies the other dimension
    (a grid of at least two), else the first member's."""
    return list(dict.fromkeys(p[fixed] for p in ps if len(set(p.get(grid_key, ()))) > 1)) or [ps[0][fixed]]


def _laws_on(rows: pd.DataFrame, ps: list[dict], preset: str | None = None) -> list[dict]:
    """The laws of one setting's rows (ps: the presets they come from, the first naming the setting)."""
    p = ps[0]
    pairs = settings.columns(p)["readout"] == settings.ASSOCIATIONS
    n = p["input_dim"] if pairs else p["context_size"]      # associations: d_h up to d; in a context: up to its size n
    at = f"{settings.label(p, preset)}{', d = ' + str(p['input_dim']) if pairs else ''}: "
    out = [{"law": "alpha_heads", "meaning": f"{at}T₅₀ ∝ H^α at d_h = {dh}", "at": dh,
            **power_law(rows[rows.head_dim == dh], "heads", "H")} for dh in _anchors(ps, "heads_grid", "head_dim")]
    for H in _anchors(ps, "head_dim_grid", "heads"):
        on_dh = rows[rows.heads == H]
        out.append({"law": "beta_head_dim_below_n", "at": H,
                    "meaning": f"{at}T₅₀ ∝ d_h^β for d_h <= {'d' if pairs else 'n'} = {n} at H = {H}",
                    **power_law(on_dh[on_dh.head_dim <= n], "head_dim", "d_h")})
        if not pairs:
            out.append(past_n_ratio(on_dh, n, H, at))
    return out


def past_n_ratio(on_dh: pd.DataFrame, n: int, H: int, at: str) -> dict:
    """T₅₀(d_h = 2n) / T₅₀(d_h = n) at one H: what a head larger than the context adds."""
    at_n, at_2n = on_dh[on_dh.head_dim == n], on_dh[on_dh.head_dim == 2 * n]
    ok = len(at_n) and len(at_2n) and at_n.law_T.notna().all() and at_2n.law_T.notna().all()
    q = fits.ratio(law_point(at_2n.iloc[0]), law_point(at_n.iloc[0])) if ok else (math.nan,) * 3
    bound = ok and (bool(at_2n.lower_bound.iloc[0]) or bool(at_n.lower_bound.iloc[0]))
    return {"law": "past_n_ratio", "meaning": f"{at}T₅₀(d_h = {2 * n}) / T₅₀(d_h = {n}) at H = {H}", "at": H,
            "statistic": q[0], "ci_low": q[1], "ci_high": q[2], "prefactor": math.nan, "tau": math.nan,
            "points": 2 if ok else 0, "censored": int(bound),
            "rows": f"d_h={n} and d_h={2 * n}" if ok else "missing",
            "excluded": "a lower bound enters: the ratio is not judged" if bound else "",
            "no_fit": "" if ok else f"no T₅₀ at both d_h = {n} and {2 * n}"}


def laws(cap: pd.DataFrame, section: dict) -> pd.DataFrame:
    """Each setting's laws over the rows of every preset that measures it (setting_groups; `scale`: the
    first preset, `presets`: all of them; `at`: the d_h of an α, the H of a β or ratio), with its setting,
    and the readout's law."""
    parts = [pd.DataFrame(_laws_on(cap[cap.scale.isin(names)], [section[n] for n in names], name)).assign(
        scale=name, presets=" + ".join(names), setting=settings.label(section[name], name),
        **settings.columns(section[name], name))
        for name, names in setting_groups(section, cap.scale).items()]
    if len(readout := readout_laws(cap)):
        parts.append(readout)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["law", "scale", "setting"])


def readout_rows(cap: pd.DataFrame) -> pd.DataFrame:
    """The MLT classification rows that tell H's law from H·d_v's: every row (no variant) at the H and
    d_h of the rows with d_v > 1, each d_v."""
    c = cap[cap.model.eq(settings.MLT) & cap.readout.eq("classification") & cap.variant.isna()]
    wide = c[c.value_dim > 1]
    same = c.heads.isin(wide.heads) & c.head_dim.isin(wide.head_dim)
    for task in ("input_dim", "context_size"):   # the same data: a quick task's rows stay out
        same &= c[task].isin(wide[task]) if task in c else True
    return c[same] if len(wide) else c.iloc[:0]


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


def readout_law(cap: pd.DataFrame, budgets: tuple[int, ...] = (1, 2)) -> dict | None:
    """T₅₀ ∝ H^α · d_v^γ over the readout rows at these budgets in one censored fit (a budget other than
    the first enters as a factor of its own, so each row counts at each budget it has), α, γ and γ − α
    (the design [log H + log d_v, log d_v] makes γ − α a coefficient of its own). None without two H and
    two d_v, or fewer than two degrees of freedom."""
    rows = readout_rows(cap)
    pts, hs, vs = [], set(), set()
    for r in rows.itertuples():
        for i, budget in enumerate(r.budgets):
            if budget not in budgets or pd.isna(r.capacity_budget[i]):
                continue
            T, lo, hi = r.capacity_budget[i], r.capacity_budget_low[i], r.capacity_budget_high[i]
            limited = r.budget_limited if len(r.budgets) == 1 else (i < len(r.rise_verdict) and r.rise_verdict[i] == "still rising")
            extra = [math.e if budget == b else 1.0 for b in budgets[1:]]      # log: a 0/1 factor a budget
            pts.append(fits.point(T, lo, hi, bool(limited), r.heads, r.value_dim, *extra))
            hs.add(r.heads), vs.add(r.value_dim)
    used = [j for j in range(2, len(budgets) + 1) if len({p.x[j] for p in pts}) > 1] if pts else []
    pts = [fits.Point(p.x[:2] + tuple(p.x[j] for j in used), p.y, p.se, p.lower) for p in pts]
    if len(hs) < 2 or len(vs) < 2:
        return None
    alpha, gamma = fits.fit(pts, 1), fits.fit(pts, 2)
    mixed = [fits.Point((p.x[0] + p.x[1], *p.x[1:]), p.y, p.se, p.lower) for p in pts]
    diff = fits.fit(mixed, 2)
    if alpha is None or gamma is None or diff is None:
        return None
    as_tuple = lambda law: (law.estimate, law.low, law.high)                   # noqa: E731
    return {"alpha": as_tuple(alpha), "gamma": as_tuple(gamma), "diff": as_tuple(diff),
            "verdict": readout_verdict(as_tuple(gamma), as_tuple(diff)), "points": len(pts),
            "heads": sorted(hs), "value_dims": sorted(vs), "head_dim": sorted(set(rows.head_dim)),
            "budgets": sorted({b for r in rows.itertuples() for b in r.budgets if b in budgets})}


def readout_laws(cap: pd.DataFrame) -> pd.DataFrame:
    """readout_law as rows of the laws table (scale `readout`)."""
    law = readout_law(cap)
    if law is None:
        return pd.DataFrame()
    at = (f"mlt/classification, d_h = {law['head_dim']}, H in {law['heads']}, d_v in {law['value_dims']}, "
          f"{', '.join(f'{b}x' for b in law['budgets'])} the steps: T₅₀ ∝ H^α d_v^γ ({law['verdict']})")
    out = []
    for name, key, what in (("readout_alpha", "alpha", "α"), ("readout_gamma", "gamma", "γ"),
                            ("readout_gamma_minus_alpha", "diff", "γ − α")):
        est, lo, hi = law[key]
        out.append({"law": name, "meaning": f"{at}: {what}", "statistic": est, "ci_low": lo, "ci_high": hi,
                    "prefactor": math.nan, "tau": math.nan, "points": law["points"], "censored": 0,
                    "rows": law["verdict"], "excluded": "", "no_fit": "", "scale": "readout", "setting": "mlt/classification",
                    "model": settings.MLT, "readout": "classification", "variant": None})
    return pd.DataFrame(out)


def no_curve(cap: pd.DataFrame) -> pd.Series:
    return cap.budget_curve.eq(NO_CURVE)
