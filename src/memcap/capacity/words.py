"""The capacity tables in words (torch-free): the table as a reader sees it, its title, one sentence a
setting, the budget curve, bits without a threshold, the readout and the lr check, and the markdown."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memcap.capacity import convergence, morris, settings
from memcap.capacity import laws as fits
from memcap.capacity.aggregate import ANCHORS, is_plain, law_point
from memcap.scales import scale_note

T50 = ("T₅₀: the dataset size at which half the trained models (seeds) memorize, fitted to every seed's "
       "probes (memorized: train accuracy ≥ the threshold)")


def _num(v, digits: int = 0) -> str:
    if v is None or pd.isna(v):
        return "–"
    return ("∞" if v > 0 else "−∞") if math.isinf(v) else f"{v:,.{digits}f}"


def ci(v, lo, hi, digits: int = 0) -> str:
    return "–" if v is None or pd.isna(v) else f"{_num(v, digits)} [{_num(lo, digits)}, {_num(hi, digits)}]"


def _width(r) -> str:
    if pd.isna(r.width):
        return "–"
    return f"≤ {r.width_high:.2f}" if r.sharp else f"{r.width:.2f}"


def _seeds(r) -> str:
    return f"{r.seeds} ({r.search_end})"


def _check(r) -> str:
    if pd.isna(r.budget_check_T):
        return "–"
    verdict = "passes: T₅₀ a lower bound" if r.budget_limited else "fails"
    return f"T={int(r.budget_check_T):,} (seed {int(r.budget_check_seed)}): {r.budget_check_acc:.4f}, {verdict}"


def _bound(r) -> str:
    which = r.applies.split(" (")[0]
    if not r.bounded or pd.isna(r.capacity):
        return which
    return f"{which}: T₅₀ = {r.bound_ratio:.2f} x {int(r.bound):,}"


def curve_cells(r) -> str:
    """T₅₀ [interval] at each budget of a row's curve, or why it has none."""
    if len(r.budgets) <= 1:
        return r.budget_curve
    return "; ".join(f"{b}x: {ci(m, lo, hi)}" for b, m, lo, hi in zip(r.budgets, r.capacity_budget,
                                                                       r.capacity_budget_low, r.capacity_budget_high))


def rise_cells(r) -> str:
    """The rise per doubling with its 90% interval and verdict, per pair of budgets."""
    if len(r.budgets) <= 1:
        return "–"
    return "; ".join(f"{b0}x→{b1}x: {ci(q, lo, hi, 2)} {v}" for b0, b1, q, lo, hi, v in
                     zip(r.budgets, r.budgets[1:], r.rise, r.rise_low, r.rise_high, r.rise_verdict))


def _law(r) -> str:
    if r.law_excluded:
        return f"left out: {r.law_excluded}"
    return "a lower bound" if r.lower_bound else "a measurement"


def shown(cap: pd.DataFrame) -> pd.DataFrame:
    """The capacity table as a reader sees it (markdown here, HTML in the report)."""
    it = list(cap.itertuples())
    return pd.DataFrame({
        "setting": cap.setting, "d": cap.input_dim, "H": cap.heads, "d_h": cap.head_dim, "params": cap.param_count,
        "T₅₀ [95% CI]": [ci(r.capacity, r.capacity_ci_low, r.capacity_ci_high) for r in it],
        "T₉₀": [_num(r.t90) for r in it], "width T₁₀/T₉₀": [_width(r) for r in it],
        "seeds (search)": [_seeds(r) for r in it],
        "seeds' thresholds [min, max]": [f"[{_num(r.seed_range_low)}, {_num(r.seed_range_high)}]" for r in it],
        "bits/param [95% CI]": [ci(r.bits_per_param, r.bits_ci_low, r.bits_ci_high, 3) for r in it],
        "bound that applies": [_bound(r) for r in it],
        "2x steps at the first failing T": [_check(r) for r in it],
        "d_v": cap.value_dim,
        "T₅₀ at each budget (x the paper's steps)": [curve_cells(r) for r in it],
        "rise per doubling [90% CI]": [rise_cells(r) for r in it],
        "in the laws": [_law(r) for r in it],
        "memorized bits, no threshold (max; per param)": [
            "–" if pd.isna(r.morris_bits) else f"{r.morris_bits:,.0f} at T={int(r.morris_T):,}; {r.morris_bits_per_param:.3f}"
            for r in it]})


def compact(cap: pd.DataFrame) -> pd.DataFrame:
    """The capacity table at ten columns, as the report's page shows it (the rest: the full table)."""
    it = list(cap.itertuples())
    return pd.DataFrame({
        "setting": cap.setting, "H": cap.heads, "d_h": cap.head_dim, "d": cap.input_dim, "params": cap.param_count,
        "T₅₀ [95% CI]": [ci(r.capacity, r.capacity_ci_low, r.capacity_ci_high) for r in it],
        "seeds' thresholds [min, max] (seeds)": [f"[{_num(r.seed_range_low)}, {_num(r.seed_range_high)}] ({r.seeds})" for r in it],
        "lower bound?": ["yes" if r.lower_bound else "" for r in it],
        "bound that applies": [_bound(r) for r in it],
        "bits/param [95% CI]": [ci(r.bits_per_param, r.bits_ci_low, r.bits_ci_high, 3) for r in it]})


def laws_shown(law: pd.DataFrame) -> pd.DataFrame:
    """The laws as a table: a law without an estimate says why (too few rows, only lower bounds)."""
    why = law.no_fit.fillna("") if "no_fit" in law else pd.Series("", index=law.index)
    return pd.DataFrame({"law": law.meaning, "estimate [95% CI]": [
                             ci(r.statistic, r.ci_low, r.ci_high, 3) if not pd.isna(r.statistic) or not w else f"none: {w}"
                             for r, w in zip(law.itertuples(), why)],
                         "rows (≥: a lower bound)": law.rows, "left out": law.excluded.fillna("")})


def title(cap: pd.DataFrame, scale: str) -> str:
    scale = f"{scale}, {scale_note(scale)}" if scale_note(scale) else scale
    if not len(cap):
        return f"Capacity by search (scale: {scale})"
    thresholds = ", ".join(f"{t:g}" for t in sorted(set(cap.threshold)))
    return (f"Capacity by search (scale: {scale}; settings: {', '.join(dict.fromkeys(cap.setting))}; "
            f"memorized = train accuracy ≥ {thresholds} on the T examples or associations)")


def anchors_text() -> str:
    return "Published capacities in bits per parameter: " + "; ".join(ANCHORS) + "."


def _span(values, fmt: str) -> str:
    values = [v for v in values if not pd.isna(v)]
    return "–" if not values else (format(min(values), fmt) if min(values) == max(values)
                                   else f"{format(min(values), fmt)} to {format(max(values), fmt)}")


def _arch(r) -> str:
    """An architecture as sentences name it; DPC's rows of one setting differ in d too."""
    d = f"d={int(r.input_dim)} " if r.readout == settings.ASSOCIATIONS else ""
    return f"{d}H={r.heads} d_h={r.head_dim}" + (f" d_v={int(r.value_dim)}" if r.value_dim != 1 else "")


def sentences(cap: pd.DataFrame, law: pd.DataFrame | None = None) -> list[str]:
    """One sentence a setting on what one attention layer memorizes there, its numbers from the table
    and the laws."""
    out = []
    for setting, g in cap.groupby("setting", sort=False):
        ok = g[g.capacity.notna()]
        if ok.empty:
            out.append(f"{setting}: no T₅₀ yet ({'; '.join(dict.fromkeys(g.no_fit))}).")
            continue
        reached = int(g.search_end.eq("reached the width").sum())
        text = (f"{setting} ({len(g)} architectures, {_span(g.seeds, 'd')} seeds; {reached} reached T₅₀ within a "
                f"factor {g.width_goal.iloc[0]:g}): T₅₀ from {_span(ok.capacity, ',.0f')}, "
                f"{_span(ok.bits_per_param, '.3f')} bits per parameter")
        if g.bounded.iloc[0]:
            text += f", {_span(ok.bound_ratio, '.1f')} times {g.applies.iloc[0].split(' (')[0]}'s count"
        else:
            text += " (neither paper's theorem applies here)"
        if law is not None:
            a = law[(law.setting == setting) & (law.law == "alpha_heads") & law.statistic.notna()]
            if len(a):
                r = a.iloc[0]
                text += f"; T₅₀ ∝ H^α with α = {r.statistic:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
        lim = int(g.lower_bound.sum())
        out.append(text + (f" ({lim} rows lower bounds: more steps memorize more)" if lim else "") + ".")
    return out


def findings(cap: pd.DataFrame, law: pd.DataFrame | None = None) -> list[str]:
    """The budget curve, bits without a threshold, the readout's rank and the lr check, in sentences."""
    return (side_by_side_sentences(cap) + budget_sentences(cap) + morris_sentences(cap) + readout_sentence(law)
            + lr_sentences(cap))


TASK = ["readout", "d_out", "input_dim", "context_size"]   # rows of one task: the same data, whatever the model
NEAR = 1.5   # parameter counts within this factor count as "about equal"


def side_by_side_sentences(cap: pd.DataFrame) -> list[str]:
    """Models measured on one task beside the first of them at about equal parameters: each other
    model's architectures, T₅₀ over the first model's T₅₀ at its nearest parameter count (within NEAR),
    with a 95% interval on the log scale."""
    plain = cap[is_plain(cap) & cap.law_T.notna()]
    out = []
    for _, g in plain.groupby(TASK, dropna=False, sort=False):
        models = list(dict.fromkeys(g.setting))
        if len(models) < 2:
            continue
        ref = g[g.setting == models[0]]
        parts = []
        for model in models[1:]:
            pairs = []
            for r in g[g.setting == model].itertuples():
                b = ref.iloc[int(np.argmin(np.abs(np.log(ref.param_count.to_numpy(float) / r.param_count))))]
                if max(b.param_count, r.param_count) / min(b.param_count, r.param_count) > NEAR:
                    continue
                q, lo, hi = fits.ratio(law_point(r), law_point(b))
                bound = " (a lower bound enters)" if r.lower_bound or b.lower_bound else ""
                pairs.append(f"{_arch(r)} ({r.param_count:,} params) vs {_arch(b)} ({b.param_count:,}): {ci(q, lo, hi, 2)}{bound}")
            bits = _span(g[g.setting == model].bits_per_param, ".2f")
            parts.append(f"{model}, {bits} bits per parameter; T₅₀ / T₅₀ of the first at about equal parameters "
                         f"(within {NEAR}x): " + ("; ".join(pairs) or "no architecture that close"))
        out.append(f"Models on one task, beside {models[0]} ({_span(ref.bits_per_param, '.2f')} bits per parameter): "
                   + " | ".join(parts) + ".")
    return out


def markdown(cap: pd.DataFrame, law: pd.DataFrame, scale: str) -> str:
    """The capacity table and the laws as markdown (pandas' to_markdown)."""
    lines = "".join(f"- {t}\n" for t in [T50 + "."] + sentences(cap, law) + findings(cap, law))
    return (f"# {title(cap, scale)}\n\n{lines}\n{shown(cap).to_markdown(index=False)}\n\n{anchors_text()}\n\n"
            f"## Laws\n\n{laws_shown(law).to_markdown(index=False)}\n")


def _path(r) -> str:
    return " → ".join(_num(c) for c in r.capacity_budget)


def budget_sentences(cap: pd.DataFrame) -> list[str]:
    """How far from converged the paper's budget leaves each architecture (rows with a curve), or why
    no curve was searched."""
    curved = cap[cap.budgets.map(len) > 1]
    if curved.empty:
        return ["Budget curve: SKIPPED (no preset of this table searches budgets; "
                "scale {capacity: paper_budget} does)."]
    out = []
    for (setting, _), g in curved.groupby([curved.setting, curved.budgets.map(tuple)], sort=False):   # rows of one setting may reach other budgets
        budgets = ", ".join(str(b) for b in g.budgets.iloc[0])
        parts = [f"{_arch(r)} {r.budget_curve} ({_path(r)}; last doubling r = {ci(r.rise[-1], r.rise_low[-1], r.rise_high[-1], 2)})"
                 for r in g.itertuples()]
        limits = [f"{_arch(r)} T∞ = {ci(r.capacity_limit, r.capacity_limit_low, r.capacity_limit_high)}"
                  if not pd.isna(r.capacity_limit) else f"{_arch(r)}: {r.capacity_limit_note}"
                  for r in g.itertuples() if not pd.isna(r.capacity_limit) or r.capacity_limit_note]
        out.append(f"{setting}: T₅₀ at {budgets} x the paper's steps (converged: the rise per doubling's 90% "
                   f"interval inside [1/{convergence.MARGIN}, {convergence.MARGIN}]): " + "; ".join(parts)
                   + (f"; {'; '.join(limits)}" if limits else "") + ".")
    rest = cap[(cap.budgets.map(len) <= 1) & cap.budget_curve.str.startswith("not run (") & (cap.budget_curve != convergence.NO_CURVE)]
    for why, g in rest.groupby("budget_curve", sort=False):
        out.append(f"Budget curve {why}: {', '.join(_arch(r) for r in g.itertuples())}.")
    return out


def morris_sentences(cap: pd.DataFrame) -> list[str]:
    """Memorized bits without a threshold, per setting: the most, where, and which rows plateaued."""
    out = []
    for setting, g in cap.groupby("setting", sort=False):
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
    if law is None or not (law.scale == "readout").any():
        return ["Values per head (d_v): SKIPPED (fewer than two H and two d_v with a T₅₀, or too few rows for "
                "three coefficients; scale {capacity: paper_all} searches d_v = 4 at H = 2 and 10)."]
    g = law[law.scale == "readout"].set_index("law")
    a, gm = g.loc["readout_alpha"], g.loc["readout_gamma"]
    return [f"Values per head: T₅₀ ∝ H^α d_v^γ with α = {a.statistic:.2f} [{a.ci_low:.2f}, {a.ci_high:.2f}], "
            f"γ = {gm.statistic:.2f} [{gm.ci_low:.2f}, {gm.ci_high:.2f}]: T₅₀ {gm.rows} ({int(a.points)} rows x budgets)."]


def lr_sentences(cap: pd.DataFrame) -> list[str]:
    """The lr check: T₅₀ at lr x k (variant rows) beside T₅₀ at 1x and 2x the steps of the same architecture."""
    checks = cap[cap.variant.notna()]
    out = []
    for (H, dh), g in checks.groupby(["heads", "head_dim"]):
        base = cap[(cap.heads == H) & (cap.head_dim == dh) & cap.variant.isna() & (cap.value_dim == 1)
                   & cap.setting_base.isin(g.setting_base)]
        at2 = [(r.capacity_budget[list(r.budgets).index(2)], r.capacity_budget_low[list(r.budgets).index(2)],
                r.capacity_budget_high[list(r.budgets).index(2)]) for r in base.itertuples() if 2 in list(r.budgets)]
        if base.empty or not at2 or pd.isna(at2[0][0]):
            out.append(f"lr check at H={H} d_h={dh}: SKIPPED (no T₅₀ at 2x the steps of this architecture in the table).")
            continue
        r0 = base.iloc[0]
        variants = {r.variant: (r.capacity, r.capacity_ci_low, r.capacity_ci_high) for r in g.itertuples()}
        out.append(f"lr check at H={H} d_h={dh}: T₅₀ = {ci(r0.capacity, r0.capacity_ci_low, r0.capacity_ci_high)} at the "
                   f"paper's lr and steps, {ci(*at2[0])} at 2x the steps, "
                   + ", ".join(f"{ci(*v)} at {k}" for k, v in variants.items())
                   + f": {lr_verdict((r0.capacity, r0.capacity_ci_low, r0.capacity_ci_high), at2[0], list(variants.values()))}.")
    return out


def lr_verdict(base: tuple, at2: tuple, variants: list[tuple]) -> str:
    """Which limits at the paper's steps, from (T₅₀, low, high) triples: the step count (more steps raise
    T₅₀ beyond its interval, another lr does not), the lr (another lr reaches what 2x the steps reach),
    or both; "neither" where 2x the steps stays inside T₅₀'s interval."""
    above = lambda a, b: a[1] > b[2]                                             # noqa: E731
    if any(pd.isna(v[0]) for v in [base, at2, *variants]):
        return "undecided (a T₅₀ missing)"
    if not above(at2, base):
        return "neither limits (2x the steps does not raise T₅₀ beyond its interval)"
    if not any(above(v, base) for v in variants):
        return "the step count limits (another lr does not raise T₅₀; more steps do)"
    if any(not above(at2, v) for v in variants if above(v, base)):
        return "the lr limits (another lr reaches at the paper's steps what 2x the steps reach)"
    return "both (another lr raises T₅₀, less than 2x the steps)"
