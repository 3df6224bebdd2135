"""One architecture's row from its probes (torch-free): T₅₀ with its interval, T₉₀ and the transition's
width from every seed's bracket (memcap.capacity.transition), how its search ended, each seed's bracket
as data, the budget check, and the budget curve (T₅₀ at each budget, the rise per doubling with its
equivalence verdict: memcap.capacity.convergence, T∞: memcap.capacity.curve)."""

from __future__ import annotations

import math

import pandas as pd

from memcap.capacity import convergence, curve, grid, search, settings, transition

NAN = math.nan


def pack_seconds(probes: pd.DataFrame) -> float:
    """Training seconds of the probes' packs: each pack's longest member (its seconds until the last
    one was done), summed over packs."""
    return float(probes.groupby("pack").wall_time_s.max().sum()) if len(probes) else 0.0


def curves(p: dict, probes: pd.DataFrame) -> dict[int, search.Curve]:
    """seed -> budget -> {T: passed} (passed: accuracy >= the preset's threshold)."""
    out: dict[int, search.Curve] = {}
    for r in probes.itertuples():
        out.setdefault(int(r.seed), {}).setdefault(int(r.budget), {})[int(r.dataset_size)] = bool(r.mem_acc >= p["threshold"])
    return out


def fit_columns(st: search.State, prefix: str = "capacity") -> dict:
    """T₅₀ [interval], T₉₀, width of a search state's fit (NaN, with the reason, where there is none)."""
    f = st.fit
    if f is None:
        return {prefix: NAN, f"{prefix}_ci_low": NAN, f"{prefix}_ci_high": NAN, "t90": NAN, "width": NAN,
                "width_high": NAN, "sharp": None, "no_fit": st.why_no_fit}
    return {prefix: f.t50, f"{prefix}_ci_low": f.t50_low, f"{prefix}_ci_high": f.t50_high, "t90": f.t90,
            "width": f.width, "width_high": f.width_high, "sharp": f.sharp, "no_fit": ""}


def row(p: dict, heads: int, head_dim: int, probes: pd.DataFrame, scale: str, probes_per_round: int | None = None) -> dict:
    """The architecture's row (memcap.capacity.aggregate.COLUMNS, but for the bounds, bits and fits)."""
    c = curves(p, probes)
    st = search.state(c, p, 1, fine=len(grid.curve_budgets(p, heads, head_dim)) > 1)
    brackets = st.brackets
    check = search.budget_probe(brackets)
    budget_row = (probes[(probes.budget == p["budget_factor"]) & (probes.seed == check[0])
                         & (probes.dataset_size == check[1])] if check else probes.iloc[:0])
    limited = bool(budget_row.mem_acc.iloc[0] >= p["threshold"]) if len(budget_row) else None
    middles = [brackets[s].middle() for s in st.seeds]
    known = [m for m in middles if not math.isnan(m)]
    return {
        "family": grid.FAMILY, "scale": scale, "setting": settings.label(p, scale), "heads": heads, "head_dim": head_dim,
        "context_size": grid.context_size(p), "input_dim": p.get("input_dim"), "num_classes": grid.classes(p),
        "context": p.get("context", "pairs"), "threshold": p["threshold"],
        "seeds": len(st.seeds), "seeds_max": len(p["seeds"]), "search_end": st.verdict, "width_goal": search.width(p),
        **fit_columns(st),
        "seed_ids": list(st.seeds), "seed_low": [brackets[s].low for s in st.seeds],
        "seed_high": [brackets[s].high for s in st.seeds],
        "seed_status": [search.status(brackets[s], p) for s in st.seeds],
        "seed_capacity": [None if math.isnan(m) else round(m, 1) for m in middles],
        "seed_range_low": min(known) if known else NAN, "seed_range_high": max(known) if known else NAN,
        "non_monotone": sum(b.non_monotone for b in brackets.values()),
        "budget_check_seed": check[0] if check else None, "budget_check_T": check[1] if check else None,
        "budget_check_acc": float(budget_row.mem_acc.iloc[0]) if len(budget_row) else NAN,
        "budget_limited": limited,
        "probes": len(probes), "probes_per_round": probes_per_round or 0,
        "param_count": grid.params_of(p, heads, head_dim),
        "train_seconds": pack_seconds(probes),
        "device": ", ".join(sorted(set(probes.device.astype(str)))) if len(probes) else "",
        "value_dim": int(p.get("value_dim", 1)),
        **budget_curve(p, heads, head_dim, c),
    }


def budget_curve(p: dict, heads: int, head_dim: int, c: dict[int, search.Curve]) -> dict:
    """T₅₀ at each budget of the architecture's curve (each seed's bracket there, its passes at smaller
    budgets counted), the rise per doubling with its verdict (the last one is the row's), the exposures
    at each T₅₀ and T∞. A preset without a curve, or an architecture it leaves to another machine, says
    why not."""
    budgets = grid.curve_budgets(p, heads, head_dim)
    states = [search.state(c, p, b, fine=len(budgets) > 1) for b in budgets]
    fits = [fit_columns(st, "t50") for st in states]
    rises = []
    for (b0, s0), (b1, s1) in zip(zip(budgets, states), list(zip(budgets, states))[1:]):
        seeds = [s for s in s0.seeds if s in s1.seeds]
        rises.append(convergence.rise({s: search.at_budget(c.get(s, {}), b0) for s in seeds},
                                      {s: search.at_budget(c.get(s, {}), b1) for s in seeds}))
    reason = grid.not_run(p, heads, head_dim)
    if len(grid.budgets(p)) == 1:
        verdict = convergence.NO_CURVE
    elif reason:
        verdict = f"not run ({reason})"
    elif any(st.verdict == search.SEARCHING for st in states):
        verdict = "searching"
    else:
        verdict = rises[-1].verdict
    means = [f["t50"] for f in fits]
    fit = curve.limit(budgets, means, [f["t50_ci_low"] for f in fits], [f["t50_ci_high"] for f in fits])
    return {"budgets": budgets, "capacity_budget": means, "capacity_budget_low": [f["t50_ci_low"] for f in fits],
            "capacity_budget_high": [f["t50_ci_high"] for f in fits],
            "budget_seeds": [len(st.seeds) for st in states], "budget_search_end": [st.verdict for st in states],
            "rise": [r.ratio for r in rises], "rise_low": [r.low for r in rises], "rise_high": [r.high for r in rises],
            "rise_pairs": [r.pairs for r in rises], "rise_verdict": [r.verdict for r in rises],
            "budget_curve": verdict,
            "exposures": [grid.exposures(p, m, b) if not math.isnan(m) else NAN for m, b in zip(means, budgets)],
            **fit}


def lower_bound(r) -> bool:
    """Whether a row's capacity at its largest budget is a lower bound of what more steps memorize:
    its curve still rising, or (no curve searched) its budget check passing at more steps."""
    if len(r["budgets"]) > 1 and r["budget_curve"] in (convergence.RISING, convergence.CONVERGED, convergence.UNDECIDED):
        return r["budget_curve"] == convergence.RISING
    return bool(r["budget_limited"])


def transition_of(p: dict, probes: pd.DataFrame, budget: int = 1) -> transition.Transition:
    """The fitted transition of an architecture's probes at a budget (NoTransition: why none)."""
    c = curves(p, probes)
    return transition.transition({s: search.at_budget(c[s], budget) for s in search.in_play(c, p, budget) if s in c})
