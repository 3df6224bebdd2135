"""Every claim's verdict on synthetic tables of known shape: one that must be reproduced, one (or more)
that must not, and one inconclusive (noisy seeds/repetitions); plus not-run, skipped and the outputs."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from memcap import stats
from memcap.bounds import bound_slope_per_head
from memcap.report import bits, claims
from memcap.report.verdicts import INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN, REPRODUCED, Region, decide

REP, NOT, INC = REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE


def spread(k: int, noise: float) -> np.ndarray:
    """k replicate offsets, symmetric (the mean is exact), alternating so that no trend hides in them."""
    return noise * np.linspace(-1, 1, k)[np.argsort(np.arange(k) % 2, kind="stable")]


# --------------------------------------------------------------------------------------- MLT builders
def mlt_runs(f, sweep="scale_head_shared", xs=(1, 2, 4, 8), Ts=(400,), seeds=3, noise=0.005, vary="heads",
             column="mem_acc", task="classification", context_size=8, head_dim=16):
    rows = []
    for T in Ts:
        for x in xs:
            for seed, e in enumerate(spread(seeds, noise)):
                heads = x if vary == "heads" else 2
                rows.append({"sweep": sweep, "scale": "quick", "vary": vary, "x": x, "dataset_size": T, "seed": seed,
                             "task": task, "mem_acc": 0.5, "mem_loss": 1.0, column: f(x) + e,
                             "context_size": x if vary == "context_size" else context_size,
                             "head_dim": x if vary == "head_dim" else head_dim, "heads": heads,
                             "memorized_bits": 100.0 * x, "param_count": 1000, "num_classes": 100})
    return {"mlt_runs": pd.DataFrame(rows)}


def head(f, **kw):
    return mlt_runs(f, **kw)


def ctx(f, **kw):
    return mlt_runs(f, **{"sweep": "scale_ctx_size_shared", "xs": (2, 4, 8, 12), "vary": "context_size", **kw})


def dh(f, xs=(2, 4, 8, 16), **kw):
    return mlt_runs(f, sweep="scale_dh_shared", xs=xs, vary="head_dim", **kw)


def regress(f, **kw):
    return mlt_runs(f, sweep="regress_scale_head_shared", column="mem_loss", task="regression", **kw)


def regress_ctx(f, **kw):
    return mlt_runs(f, sweep="regress_scale_ctx_size_shared", xs=(2, 4, 8, 12), vary="context_size",
                    column="mem_loss", task="regression", **kw)


def saturation(values):
    return {"theory_saturation": pd.DataFrame({"frac_examples_any_unsaturated": values, "threshold": 0.99,
                                               "scale": "quick"})}


def asm1(override=None):
    rows = [("photos", "Embedding Layer", "embedding layer", False),
            ("photos", "Random Attention", "random attention", True),
            ("gpt2", "GPT-2 random", "L0", False), ("gpt2", "GPT-2 random", "L1", True),
            ("bert", "BERT trained", "L0", False), ("bert", "BERT trained", "L1", False)]
    out = []
    for track, model, layer, holds in rows:
        frac = 1.0 if holds else 0.0
        lo, hi = stats.wilson_interval(int(frac * 1000), 1000)
        r = {"track": track, "model": model, "layer": layer, "check": "asm1", "status": "ok", "reason": "",
             "holds": holds, "fraction": frac, "ci_low": lo, "ci_high": hi, "threshold": 0.99}
        out.append({**r, **(override or {}).get((track, layer), {})})
    return {"assumption_checks": pd.DataFrame(out)}


def asm1_stand_ins(override=None):
    """The imagenet rows plus the trained stand-ins' rows (DINOv2 on imagenet, SmolLM2 on gpt2)."""
    base = asm1_imagenet()["assumption_checks"]
    rows = [("imagenet", "trained ViT (DINOv2-S/14 stand-in)", "embedding layer", False),
            ("imagenet", "trained ViT (DINOv2-S/14 stand-in)", "first block", True),
            ("gpt2", "trained causal LM (SmolLM2-135M stand-in)", "L0", False),
            ("gpt2", "trained causal LM (SmolLM2-135M stand-in)", "L1", True)]
    out = []
    for track, model, layer, holds in rows:
        frac = 1.0 if holds else 0.0
        lo, hi = stats.wilson_interval(int(frac * 5000), 5000)
        r = {**base.iloc[0].to_dict(), "track": track, "model": model, "layer": layer, "holds": holds,
             "fraction": frac, "ci_low": lo, "ci_high": hi}
        out.append({**r, **(override or {}).get((track, layer), {})})
    return {"assumption_checks": pd.concat([base, pd.DataFrame(out)], ignore_index=True)}


def asm1_imagenet(override=None):
    """Table 1 rows of the imagenet track next to the fallback tracks, whose photo crops fail Asm 1 after
    random attention (correlated crops): the claim must read the imagenet rows only."""
    rows = [("imagenet", "Embedding Layer", "embedding layer", False),
            ("imagenet", "Random Attention", "random attention", True),
            ("imagenet", "Random ViT", "first block", True),
            ("photos", "Embedding Layer", "embedding layer", False),
            ("photos", "Random Attention", "random attention", False),
            ("gpt2", "GPT-2 random", "L0", False), ("gpt2", "GPT-2 random", "L1", True)]
    base = asm1(override)["assumption_checks"].iloc[0].to_dict()
    out = []
    for track, model, layer, holds in rows:
        frac = 1.0 if holds else 0.0
        lo, hi = stats.wilson_interval(int(frac * 5000), 5000)
        r = {**base, "track": track, "model": model, "layer": layer, "holds": holds, "fraction": frac,
             "ci_low": lo, "ci_high": hi}
        out.append({**r, **(override or {}).get((track, layer), {})})
    return {"assumption_checks": pd.DataFrame(out)}


# --------------------------------------------------------------------------------------- DPC builders
def dpc(experiment, f, series=(-1,), xs=(1, 4, 8, 12, 16), reps=3, noise=0.002, N=30, head_dim=None, **extra):
    rows = []
    for s in series:
        d = s if s > 0 else 6
        for x in xs:
            for r, e in enumerate(spread(reps, noise)):
                rows.append({"experiment": experiment, "series": s, "x": x, "N": N, "dim": d,
                             "head_dim": head_dim or d, "repetition": r, "acc_table": f(x, d) + e, "scale": "quick"})
    return pd.DataFrame(rows)


def dpc_tables(*frames):
    return {"dpc_runs": pd.concat(frames, ignore_index=True)}


def exp1(ratio=2.0, shape=lambda h: h, noise=0.002, power=1.0, N=30, series=(4, 6, 8)):
    """acc = 1/N + ratio × bound slope × shape(H), the slope scaled by (d/4)^(power−1) across d."""
    def f(h, d):
        return 1 / N + ratio * bound_slope_per_head(d, N) * (d / 4) ** (power - 1) * shape(h)
    return dpc("exp1", f, series=series, noise=noise, N=N)


def exp5(lead=0.05, noise=0.002):
    aot = exp1().assign(experiment="exp5_aot")
    offset = spread(3, noise)[(aot.repetition.to_numpy() + 1) % 3]        # zero mean at every grid point
    mlp = aot.assign(experiment="exp5_mlp", acc_table=aot.acc_table + lead + offset)
    return dpc_tables(aot, mlp)


def exp6(ratio=1.5, noise=0.002, reps=6):
    N, d = 10, 2
    return dpc_tables(dpc("exp6", lambda h, _: 1 / N + ratio * bound_slope_per_head(d, N) * h, xs=(1, 5, 9, 13),
                          N=N, head_dim=d, reps=reps, noise=noise))


def exp2(f, noise=0.002):
    return dpc_tables(dpc("exp2", lambda x, _: f(x), xs=(1, 2, 4, 6, 8, 10), noise=noise))


def exp3(f, noise=0.002):
    return dpc_tables(dpc("exp3", lambda x, _: f(x), xs=(2, 4, 6, 8, 10, 12), head_dim=6, noise=noise))


def construct(residuals, bounds):
    """CONSTRUCT rows judged as memcap.theory.construct.exact judges them (full rank, residual <= bound)."""
    from memcap.theory.construct import exact as is_exact

    n = len(residuals)
    return {"theory_construct": pd.DataFrame({
        "status": ["ok" if is_exact(7, 7, r, b) else "failed" for r, b in zip(residuals, bounds)],
        "reason": "", "rank": 7, "residual": 0.0, "model_residual": residuals, "error_bound": bounds,
        "cond": np.logspace(1, 6, n), "heads": 2, "context_size": 4, "head_dim": 4, "seed": range(n)})}


def exact(name, column, values, **cols):
    return {name: pd.DataFrame({column: values, **cols})}


SCALAR, DPC_SET, CLASSES = "mlt/scalar", "dpc/associations N=50", "mlt/classification C=100"


def setting_columns(setting: str) -> dict:
    """The setting columns memcap.capacity.settings.columns gives these labels' presets."""
    base = setting.split(" d_v=")[0]
    model = "dpc" if setting.startswith("dpc/") else "mlt"
    readout = "associations" if model == "dpc" else "scalar" if base == SCALAR else "classification"
    return {"setting": setting, "model": model, "readout": readout, "variant": None, "setting_base": base}


def capacity(low, high, bound=5, limited=None, setting=SCALAR):
    """Per architecture T₅₀'s 95% interval [low, high]; `limited`: more steps memorize more (a lower bound)."""
    n = len(low)
    return {"capacity": pd.DataFrame({**setting_columns(setting), "input_dim": 8, "capacity": [(lo + h) / 2 for lo, h in zip(low, high)],
                                      "capacity_ci_low": low, "capacity_ci_high": high, "no_fit": "",
                                      "search_end": "reached the width", "seed_low": [[lo, lo + 1] for lo in low],
                                      "seed_high": [[h - 1, h] for h in high],
                                      "mlt_bound": [bound] * n, "dpc_bound": [bound] * n, "heads": range(1, n + 1),
                                      "head_dim": 4, "lower_bound": limited or [False] * n})}


def capacity_law(name, point, low, high, setting=SCALAR):
    return {**capacity([6], [7], setting=setting), "capacity_laws": pd.DataFrame({
        "law": [name], "statistic": [point], "ci_low": [low], "ci_high": [high], "points": [7], "censored": [0],
        "rows": ["H=1, ..."], "excluded": [""], "meaning": [name], **setting_columns(setting)})}


CHANCE = 1 / 30
CASES = [
    # Fig 2a / Fig 4: linear vs concave on H = {1, 2, 4, 8}
    ("mlt_fig2a_linear_H", "linear", head(lambda h: 0.1 * h), REP),
    ("mlt_fig2a_linear_H", "√H", head(lambda h: 0.3 * h ** 0.5), NOT),
    ("mlt_fig2a_linear_H", "log(1+H)", head(lambda h: 0.3 * math.log1p(h)), NOT),
    ("mlt_fig2a_linear_H", "falling", head(lambda h: 0.9 - 0.1 * h), NOT),
    ("mlt_fig2a_linear_H", "linear, noisy seeds", head(lambda h: 0.1 * h, noise=0.12), INC),
    ("mlt_fig4_linear_H_random", "linear", head(lambda h: 0.1 * h, sweep="scale_head"), REP),
    ("mlt_fig4_linear_H_random", "√H", head(lambda h: 0.3 * h ** 0.5, sweep="scale_head"), NOT),
    ("mlt_fig4_linear_H_random", "noisy", head(lambda h: 0.1 * h, sweep="scale_head", noise=0.12), INC),
    # Fig 4 right: the same test on n, read the other way (weaker than linear is the claim)
    ("mlt_fig4_n_weaker_than_linear", "√n", ctx(lambda n: 0.2 * n ** 0.5, sweep="scale_ctx_size"), REP),
    ("mlt_fig4_n_weaker_than_linear", "rise then flat",
     ctx(lambda n: 0.4 * min(n, 4) / 4, xs=(1, 4, 8, 12), sweep="scale_ctx_size"), REP),
    ("mlt_fig4_n_weaker_than_linear", "linear", ctx(lambda n: 0.05 * n, sweep="scale_ctx_size"), NOT),
    ("mlt_fig4_n_weaker_than_linear", "√n, noisy seeds",
     ctx(lambda n: 0.2 * n ** 0.5, sweep="scale_ctx_size", noise=0.15), INC),
    # Fig 2b: grows with n
    ("mlt_fig2b_grows_with_n", "rising", ctx(lambda n: 0.05 * n), REP),
    ("mlt_fig2b_grows_with_n", "falling", ctx(lambda n: 0.8 - 0.05 * n), NOT),
    ("mlt_fig2b_grows_with_n", "weak rise, noisy seeds", ctx(lambda n: 0.3 + 0.01 * n, noise=0.1), INC),
    # Fig 2c: flat past d_h = n = 8, either sign
    ("mlt_fig2c_no_gain_past_n", "flat past n", dh(lambda d: min(d, 8) / 20), REP),
    ("mlt_fig2c_no_gain_past_n", "rising past n", dh(lambda d: d / 40), NOT),
    ("mlt_fig2c_no_gain_past_n", "falling past n", dh(lambda d: 0.4 - 0.02 * max(d - 8, 0)), NOT),
    ("mlt_fig2c_no_gain_past_n", "small rise, noisy seeds", dh(lambda d: 0.3 + 0.005 * max(d - 8, 0), noise=0.1),
     INC),
    # the paper's grid: n = 32 is not one of its d_h, the flat part starts at 35
    ("mlt_fig2c_no_gain_past_n", "paper grid, flat from 35", dh(lambda d: min(d, 32) / 40, xs=(10, 20, 30, 35, 50, 64),
                                                                   context_size=32), REP),
    ("mlt_fig2c_no_gain_past_n", "paper grid, rising past 35", dh(lambda d: d / 80, xs=(10, 20, 30, 35, 50, 64),
                                                                    context_size=32), NOT),
    # Fig 5: MSE falls with H
    ("mlt_fig5_regression_H", "falling", regress(lambda h: 1 / h), REP),
    ("mlt_fig5_regression_H", "rising", regress(lambda h: 0.1 * h), NOT),
    ("mlt_fig5_regression_H", "weak fall, noisy seeds", regress(lambda h: 1 - 0.01 * h, noise=0.2), INC),
    ("mlt_fig5_regression_n", "falling", regress_ctx(lambda n: 1 / n), REP),
    ("mlt_fig5_regression_n", "rising", regress_ctx(lambda n: 0.1 * n), NOT),
    ("mlt_fig5_regression_n", "weak fall, noisy seeds", regress_ctx(lambda n: 1 - 0.01 * n, noise=0.2), INC),
    # Theorem 1 met by trained runs (bound H·7 + 1 of T = 400)
    ("mlt_thm1_trained_above_bound", "48 runs above", head(lambda h: 0.1 * h, Ts=(400, 500, 600, 700)), REP),
    ("mlt_thm1_trained_above_bound", "below", head(lambda h: 0.001, Ts=(400, 500, 600, 700)), NOT),
    ("mlt_thm1_trained_above_bound", "6 runs above", head(lambda h: 0.1 * h, xs=(1, 2), seeds=3), INC),
    # Fig 3
    ("mlt_fig3_not_all_heads_saturate", "most unsaturated", saturation([0.85, 0.9, 0.88, 0.86, 0.91, 0.87]), REP),
    ("mlt_fig3_not_all_heads_saturate", "all saturated", saturation([0.1, 0.15, 0.12, 0.2, 0.1, 0.05]), NOT),
    ("mlt_fig3_not_all_heads_saturate", "spread", saturation([0.1, 0.9, 0.2, 0.95, 0.3, 0.6]), INC),
    # exact properties: reproduced or not, never inconclusive
    ("theory_construction_exact", "all inside their float64 bounds", construct([1e-14, 1e-8], [1e-13, 4e-7]), REP),
    ("theory_construction_exact", "one outside its bound", construct([1e-14, 1e-6], [1e-13, 4e-7]), NOT),
    ("theory_rank_bounds", "all hold", exact("theory_rank_bounds", "holds", [True] * 3, proposition="prop2"), REP),
    ("theory_rank_bounds", "one exceeds", exact("theory_rank_bounds", "holds", [True, False], proposition="prop2"),
     NOT),
    ("dpc_theory_kl_bounds", "below", exact("dpc_theory", "kl", [0.1, 0.2], bound=[0.5, 0.5], part="thm2"), REP),
    ("dpc_theory_kl_bounds", "above", exact("dpc_theory", "kl", [0.1, 0.6], bound=[0.5, 0.5], part="thm2"), NOT),
    # Tables 1 and 3
    ("mlt_table1_asm1_layers", "paper's pattern", asm1(), REP),
    ("mlt_table1_asm1_layers", "fails after attention",
     asm1({("photos", "random attention"): {"holds": False, "fraction": 0.0, "ci_low": 0.0, "ci_high": 0.004}}), NOT),
    ("mlt_table1_asm1_layers", "straddles the 0.99 threshold",
     asm1({("gpt2", "L1"): {"holds": True, "fraction": 0.991, "ci_low": 0.983, "ci_high": 0.995}}), INC),
    # Table 1 on real ImageNet images: the imagenet rows replace the photos/digits fallback
    ("mlt_table1_asm1_layers", "imagenet rows follow the paper (photo crops do not)", asm1_imagenet(), REP),
    ("mlt_table1_asm1_layers", "imagenet: fails after random attention",
     asm1_imagenet({("imagenet", "random attention"): {"holds": False, "fraction": 0.98, "ci_low": 0.976,
                                                        "ci_high": 0.984}}), NOT),
    # the trained stand-ins are judged too: DINOv2 (Table 1) and SmolLM2 (Table 3)
    ("mlt_table1_asm1_layers", "stand-ins follow the pattern", asm1_stand_ins(), REP),
    ("mlt_table1_asm1_layers", "stand-in ViT fails after its first block",
     asm1_stand_ins({("imagenet", "first block"): {"holds": False, "fraction": 0.5, "ci_low": 0.486,
                                                   "ci_high": 0.514}}), NOT),
    # DPC Exp 1: linear in H, slope above the bound's
    ("dpc_exp1_linear_H_above_bound", "2× the bound, linear", dpc_tables(exp1(2.0)), REP),
    ("dpc_exp1_linear_H_above_bound", "half the bound", dpc_tables(exp1(0.5)), NOT),
    ("dpc_exp1_linear_H_above_bound", "√H, above the bound", dpc_tables(exp1(8.0, shape=lambda h: 4 * h ** 0.5)),
     NOT),
    ("dpc_exp1_linear_H_above_bound", "at the bound, noisy", dpc_tables(exp1(1.0, noise=0.03)), INC),
    # DPC Exp 2: quadratic in d_h on the quick grid {1, 2, 4, 6, 8, 10}
    ("dpc_exp2_quadratic_dh", "quadratic", exp2(lambda x: CHANCE + 0.006 * x ** 2), REP),
    ("dpc_exp2_quadratic_dh", "linear through chance", exp2(lambda x: CHANCE + 0.05 * x), NOT),
    ("dpc_exp2_quadratic_dh", "linear with an intercept", exp2(lambda x: 0.1 + 0.05 * x), NOT),
    ("dpc_exp2_quadratic_dh", "x^1.5, noisy", exp2(lambda x: CHANCE + 0.02 * x ** 1.5, noise=0.03), INC),
    # DPC Exp 3: linear to d_h = 6, then flat
    ("dpc_exp3_linear_then_flat_d", "linear then flat", exp3(lambda d: 0.05 * min(d, 6)), REP),
    ("dpc_exp3_linear_then_flat_d", "linear throughout", exp3(lambda d: 0.05 * d), NOT),
    ("dpc_exp3_linear_then_flat_d", "falling past d_h", exp3(lambda d: 0.05 * min(d, 6) - 0.04 * max(d - 6, 0)), NOT),
    ("dpc_exp3_linear_then_flat_d", "slope ratio 0.25, noisy",
     exp3(lambda d: 0.05 * min(d, 6) + 0.0125 * max(d - 6, 0), noise=0.02), INC),
    # DPC Exp 4: Exp 1 slopes ∝ d^p, p in [2, 3]
    ("dpc_exp4_slope_power", "p = 2.5", dpc_tables(exp1(2.0, power=2.5, series=(4, 6, 8, 10))), REP),
    ("dpc_exp4_slope_power", "p = 1", dpc_tables(exp1(2.0, power=1.0, series=(4, 6, 8, 10))), NOT),
    ("dpc_exp4_slope_power", "p = 3, noisy", dpc_tables(exp1(2.0, power=3.0, series=(4, 6, 8, 10), noise=0.02)), INC),
    # DPC Exp 5
    ("dpc_exp5_mlp_mid_aot_linear", "MLP ahead", exp5(0.05), REP),
    ("dpc_exp5_mlp_mid_aot_linear", "MLP behind", exp5(-0.05), NOT),
    ("dpc_exp5_mlp_mid_aot_linear", "level, noisy", exp5(0.0, noise=0.05), INC),
    # DPC Exp 6: 1.3–1.7× the bound
    ("dpc_exp6_slope_ratio", "1.5×", exp6(1.5), REP),
    ("dpc_exp6_slope_ratio", "0.8×", exp6(0.8), NOT),
    ("dpc_exp6_slope_ratio", "1.3×, noisy", exp6(1.3, noise=0.03), INC),
    # capacity by search: T₅₀'s interval against the bound; a lower-bound row passes only above it
    ("capacity_above_mlt_bound", "above", capacity([6, 8], [7, 9]), REP),
    ("capacity_above_mlt_bound", "below", capacity([6, 2], [7, 3]), NOT),
    ("capacity_above_mlt_bound", "a bracket holds the bound", capacity([6, 4], [7, 8]), INC),
    ("capacity_above_mlt_bound", "below, but budget-limited: may pass with more steps", capacity([6, 2], [7, 3], limited=[False, True]),
     INC),
    ("capacity_above_mlt_bound", "above, budget-limited: a lower bound above it", capacity([6, 8], [7, 9], limited=[False, True]),
     REP),
    ("capacity_above_mlt_bound", "every probe fails, under the bound",
     {"capacity": capacity([6, 6], [7, 7])["capacity"].assign(capacity=[6.5, np.nan], capacity_ci_low=[6, np.nan],
                                                            capacity_ci_high=[7, np.nan], no_fit=["", "every probe failed"],
                                                            seed_low=[[6], [None]], seed_high=[[7], [3]])}, NOT),
    ("capacity_above_mlt_bound", "every probe passes, above the bound",
     {"capacity": capacity([6, 6], [7, 7])["capacity"].assign(capacity=[6.5, np.nan], capacity_ci_low=[6, np.nan],
                                                            capacity_ci_high=[7, np.nan], no_fit=["", "every probe passed"],
                                                            seed_low=[[6], [900]], seed_high=[[7], [None]])}, REP),
    ("capacity_vs_dpc_bound", "above", capacity([6, 8], [7, 9], setting=DPC_SET), REP),
    ("capacity_vs_dpc_bound", "below", capacity([6, 2], [7, 3], setting=DPC_SET), NOT),
    ("capacity_vs_dpc_bound", "a bracket holds the count", capacity([6, 4], [7, 8], setting=DPC_SET), INC),
    # capacity's laws: α of T₅₀ ∝ H^α (at least linear: α's interval >= 1), and T₅₀(2n) / T₅₀(n)
    ("capacity_linear_in_heads", "superlinear", capacity_law("alpha_heads", 2.8, 2.2, 3.5), REP),
    ("capacity_linear_in_heads", "linear at its lower end", capacity_law("alpha_heads", 1.1, 1.0, 1.2), REP),
    ("capacity_linear_in_heads", "√H", capacity_law("alpha_heads", 0.5, 0.45, 0.55), NOT),
    ("capacity_linear_in_heads", "noisy", capacity_law("alpha_heads", 1.05, 0.95, 1.15), INC),
    ("capacity_no_gain_past_n", "flat", capacity_law("past_n_ratio", 1.01, 0.97, 1.05), REP),
    ("capacity_no_gain_past_n", "doubles", capacity_law("past_n_ratio", 1.9, 1.8, 2.0), NOT),
    ("capacity_no_gain_past_n", "noisy", capacity_law("past_n_ratio", 1.1, 0.9, 1.3), INC),
]


def row(tables, cid):
    return claims.scorecard(tables, "quick").set_index("claim_id").loc[cid]


@pytest.mark.parametrize("cid, shape, tables, expected", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_claim_verdict_on_known_shape(cid, shape, tables, expected):
    r = row(tables, cid)
    assert r.verdict == expected, (shape, r.statistic, r.ci_low, r.ci_high, r.detail)
    assert r.ci_low <= r.ci_high


def test_every_claim_has_a_reproduced_and_a_failing_case():
    for c in claims.CLAIMS:
        got = {e for cid, _, _, e in CASES if cid == c.claim_id}
        assert {REP, NOT} <= got, c.claim_id
        exact = "exact, no interval" in c.test
        assert (INC in got) != exact, c.claim_id          # exact properties cannot be inconclusive


def test_kinds_and_paper_numbers():
    card = claims.scorecard({}, "quick").set_index("claim_id")
    props = {"theory_construction_exact", "theory_rank_bounds", "dpc_theory_kl_bounds", "mlt_thm1_trained_above_bound",
             "capacity_above_mlt_bound", "capacity_vs_dpc_bound"}
    assert set(card.index[card.kind == claims.PROPERTY]) == props
    assert "1.3–1.7" in card.loc["dpc_exp6_slope_ratio", "paper_value"]
    assert "H(min(n, d_h) − 1) + 1" in card.loc["mlt_thm1_trained_above_bound", "paper_value"]
    assert "0.99" in card.loc["mlt_fig3_not_all_heads_saturate", "paper_value"]
    assert (card.paper_source != "").all() and (card.verdict == NOT_RUN).all()



def test_scales_per_family_name_each_rows_own_scale():
    """The published scales (params.yaml): DPC and theory at paper, the rest quick. A row whose tables have no scale
    column takes its own family's scale, never the mixed label; the title says rows at quick are stand-ins."""
    scales = {"mlt_synthetic": "quick", "theory": "paper", "dpc": "paper", "assumptions": "quick", "capacity": "quick"}
    assert {name for c in claims.CLAIMS for name in c.inputs} <= set(claims.INPUT_FAMILY)
    card = claims.scorecard({}, scales).set_index("claim_id")
    assert card.loc["theory_construction_exact", "scale"] == "paper"
    assert card.loc["dpc_theory_kl_bounds", "scale"] == "paper"
    assert card.loc["capacity_above_mlt_bound", "scale"] == "quick"
    assert set(card.scale) == {"paper", "quick"}
    title = claims.markdown(card.reset_index()).splitlines()[0]
    assert "each row names its own" in title and "rows at quick: QUICK STAND-IN" in title, title
    assert "STAND-IN" not in claims.markdown(claims.scorecard({}, "paper")).splitlines()[0]

def test_a_table_of_sweeps_from_two_presets_gives_each_claim_its_own_rows_scale_and_label():
    """MLT's published preset: Fig 2a at the paper's settings (2 of 6 seeds) beside a quick Fig 2c. Each row
    names the scale and settings of the sweep it read, not of the table's first row."""
    a = head(lambda h: 0.1 * h)["mlt_runs"].assign(scale="paper", scale_label="paper settings, 2 of the paper's 6 seeds")
    c = dh(lambda d: 0.1 * min(d, 8))["mlt_runs"].assign(scale_label="QUICK STAND-IN: reduced grid (too long)")
    card = claims.scorecard({"mlt_runs": pd.concat([c, a], ignore_index=True)}, "quick").set_index("claim_id")
    assert card.loc["mlt_fig2a_linear_H", "scale"] == "paper"
    assert card.loc["mlt_fig2a_linear_H", "detail"].startswith("[paper settings, 2 of the paper's 6 seeds] ")
    assert card.loc["mlt_fig2c_no_gain_past_n", "scale"] == "quick"
    assert card.loc["mlt_fig2c_no_gain_past_n", "detail"].startswith("[QUICK STAND-IN: reduced grid (too long)] ")
    # Fig 3 reads theory's saturation table, labeled with the settings of the MLT sweeps behind it
    sat = saturation([0.9, 0.95, 0.97, 0.99])["theory_saturation"].assign(
        scale="paper", scale_label="paper settings, 2 of the paper's 6 seeds")
    row3 = claims.scorecard({"theory_saturation": sat}, "quick").set_index("claim_id").loc["mlt_fig3_not_all_heads_saturate"]
    assert row3.scale == "paper" and row3.detail.startswith("[paper settings, 2 of the paper's 6 seeds] "), row3.detail


def test_dropped_points_are_named():
    r = row(head(lambda h: min(0.2 * h, 1.0)), "mlt_fig2a_linear_H")      # H = 8 saturates
    assert "dropped: T=400: H=8 (saturated" in r.detail and r.verdict == REP
    r = row(head(lambda h: min(0.3 * h, 1.0)), "mlt_fig2a_linear_H")      # H = 4 and 8 saturate: 2 points left
    assert r.verdict.startswith("skipped: ") and "H=4" in r.verdict and "H=8" in r.verdict


def test_summary_only_dpc_still_scores_without_interval():
    runs = exp1(2.0)
    summary = runs.groupby(["experiment", "series", "x", "N", "dim", "head_dim", "scale"], as_index=False).agg(
        acc_table_mean=("acc_table", "mean"))
    r = row({"dpc_summary": summary}, "dpc_exp1_linear_H_above_bound")
    assert r.verdict == REP and r.ci_low == pytest.approx(r.ci_high) and "no per-repetition table" in r.detail


def test_missing_inputs_are_not_run_and_constant_is_skipped():
    card = claims.scorecard(head(lambda h: 0.1 * h), "quick").set_index("claim_id")
    assert card.loc["mlt_fig2b_grows_with_n", "verdict"] == NOT_RUN
    assert card.loc["dpc_exp1_linear_H_above_bound", "verdict"] == NOT_RUN
    assert len(card) == len(claims.CLAIMS) and set(card.scale) == {"quick"}
    r = row(regress(lambda h: 0.5, noise=0.0), "mlt_fig5_regression_H")
    assert r.verdict.startswith("skipped: ")


def test_bootstrap_is_deterministic_and_interval_brackets():
    cells = [np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0])]
    def f(rs):
        return sum(r.mean(axis=1) for r in rs)
    a, b = stats.bootstrap_cells(cells, f, seed=1), stats.bootstrap_cells(cells, f, seed=1)
    assert a == b and a[1] <= a[0] <= a[2] and a[0] == pytest.approx(5.0)
    assert stats.bootstrap_cells([np.array([2.0])], f) == (2.0, 2.0, 2.0)


def test_vectorised_fits_match_scipy():
    rng = np.random.default_rng(0)
    x, Y = np.array([1.0, 2, 4, 8]), rng.normal(size=(5, 4))
    assert np.allclose(stats.slope_rows(x, Y), [stats.linear_fit(x, y)["slope"] for y in Y])
    assert np.allclose(stats.spearman_rows(x, Y), [stats.spearman(x, y)[0] for y in Y])
    assert np.allclose(stats.polyfit_rows(x, Y, 2), [np.polyfit(x, y, 2)[::-1] for y in Y])
    assert stats.power_exponent(x, 0.1 + 3 * x ** 2, 0.1)["exponent"] == pytest.approx(2.0)


def test_decide_regions():
    assert decide(0.8, 0.9, Region(0.75)) == REP
    assert decide(0.5, 0.7, Region(0.75)) == NOT
    assert decide(0.7, 0.9, Region(0.75)) == INC
    assert decide(1.2, 1.4, Region(1.3, 1.7)) == INC and decide(1.35, 1.6, Region(1.3, 1.7)) == REP


def test_metrics_and_plot_data():
    card = claims.scorecard({**head(lambda h: 0.1 * h), **exp6(0.8)}, "quick")
    m = json.loads(claims.metrics_json(card))
    assert sum(m["all"].values()) == len(card) and m["all"]["inconclusive"] == 1      # Theorem 1 on 12 runs
    assert m["MLT_paper_claims"]["reproduced"] >= 1 and m["DPC_paper_claims"]["not_reproduced"] == 1
    assert set(m) == {"all", "paper_claims", "verified_properties", "MLT_paper_claims", "DPC_paper_claims"}
    plot = claims.plot_data(card)
    assert list(plot.columns) == ["claim_id", "statistic", "ci_low", "ci_high", "verdict"] and len(plot) == len(card)
    md = claims.markdown(card)
    assert "## Paper claims" in md and "## Verified properties" in md and "inconclusive" in md


def test_bits_per_param_and_skip_without_column():
    runs = head(lambda h: 0.5)["mlt_runs"]
    table = bits.bits_table(runs, None)
    assert np.allclose(table.bits_per_param, runs.memorized_bits / runs.param_count)
    assert bits.skipped(runs.drop(columns="memorized_bits"), None) == [
        "mlt_synthetic: SKIPPED (its runs table has no memorized_bits column)", "dpc: SKIPPED (runs table not given)"]


def test_bits_reference_is_one_list_with_morris_at_3_6():
    from memcap.bounds import PUBLISHED_BITS_PER_PARAM
    from memcap.capacity.aggregate import ANCHORS

    assert bits.REFERENCES is PUBLISHED_BITS_PER_PARAM is ANCHORS
    morris = [v for k, v in bits.REFERENCES.items() if "Morris" in k]
    assert len(morris) == 1 and math.isclose(morris[0], 3.6)


def test_table1_claim_says_which_vit_rows_it_read():
    real = row(asm1_imagenet(), "mlt_table1_asm1_layers")
    assert real.detail.startswith("ViT rows from the imagenet track") and "photos/" not in real.detail.split(". ", 1)[1]
    skipped = asm1()["assumption_checks"]
    skipped = pd.concat([skipped, pd.DataFrame([{"track": "imagenet", "model": "Embedding Layer",
                                                 "layer": "embedding layer", "check": "asm1", "status": "SKIPPED",
                                                 "reason": "no images at data/imagenet-sample"}])])
    fallback = row({"assumption_checks": skipped}, "mlt_table1_asm1_layers")
    assert fallback.verdict == REP and fallback.detail.startswith("ViT rows from the fallback photos/digits")
    assert "no images at data/imagenet-sample" in fallback.detail


def test_a_claim_reads_only_declared_input_tables():
    """The input names live in claims.INPUTS (the report's rule file maps them to the families' tables):
    a claim naming another table is refused when it registers."""
    from memcap.report.claims import registry

    assert {name for c in claims.CLAIMS for name in c.inputs} <= set(claims.INPUTS)
    with pytest.raises(ValueError, match="unknown input table"):
        registry.claim("x", claims.PAPER_CLAIM, "MLT", "Fig 0", "", "", None, ["mlt_rusn"])
    rows = [line for line in claims.markdown(claims.scorecard({}, "quick")).splitlines() if line.startswith("|")]
    assert len(rows) > 19 and max(map(len, rows)) < 200        # the table fits a terminal


def test_a_claim_of_several_tests_shows_each_where_its_verdict_is_read():
    """DPC Exp 1 above the bound but concave: test (1) passes, test (2) fails the claim. The row shows both
    statistics with their intervals and verdicts (markdown and HTML read `interval`); one-test claims keep
    the plain interval."""
    card = claims.scorecard(dpc_tables(exp1(8.0, shape=lambda h: 4 * h ** 0.5)), "quick")
    r = card.set_index("claim_id").loc["dpc_exp1_linear_H_above_bound"]
    assert r.verdict == NOT
    assert r.tests.startswith("(1) slope / bound slope (min over d) ") and "(accept >= 1): reproduced" in r.tests
    assert "; (2) linear, not concave: min end-slope ratio" in r.tests and r.tests.endswith(": not reproduced")
    assert claims.interval(r) == r.tests and r.tests in claims.markdown(card)
    single = card.set_index("claim_id").loc["dpc_exp6_slope_ratio"]
    assert single.tests == "" and not claims.interval(single).startswith("(1)")


def test_a_lower_bound_capacity_counts_above_the_bound_and_is_never_a_miss():
    """A row where more steps memorize more has a lower bound for T₅₀: above the bound it is a sure
    pass; below it, more steps may pass, so the claim is inconclusive, never not reproduced."""
    r = row(capacity([6, 8], [7, 9], limited=[False, True], setting=DPC_SET), "capacity_vs_dpc_bound")
    assert r.verdict == REP and "2/2 architectures with T₅₀'s 95% interval at or above the bound" in r.detail, r.detail
    assert "H=2 d_h=4: ≥1.7" in r.detail, r.detail
    r = row(capacity([2], [3], limited=[True]), "capacity_above_mlt_bound")
    assert r.verdict == INC and "H=1 d_h=4: T₅₀ 2 [2, 3] vs 5 (a lower bound)" in r.detail, r.detail
    assert row(capacity([2], [3]), "capacity_above_mlt_bound").verdict == NOT


def test_each_capacity_bound_is_judged_on_its_own_setting_and_skipped_without_it():
    """MLT's bound reads the scalar rows only, DPC's count the association rows only: rows of another
    setting (the C = 100 classification rows, far below or above) change nothing; without rows of its
    setting a claim is skipped and says what to run."""
    both = {"capacity": pd.concat([capacity([6, 8], [7, 9])["capacity"],
                                   capacity([1, 1], [2, 2], setting=CLASSES)["capacity"],
                                   capacity([1, 1], [2, 2], setting=DPC_SET)["capacity"]], ignore_index=True)}
    assert row(both, "capacity_above_mlt_bound").verdict == REP
    assert row(both, "capacity_vs_dpc_bound").verdict == NOT
    only = capacity([1, 1], [2, 2], setting=CLASSES)
    for cid, setting in (("capacity_above_mlt_bound", SCALAR), ("capacity_vs_dpc_bound", "dpc/")):
        r = row(only, cid)
        assert r.verdict.startswith(f"skipped: no {setting} rows yet") and "capacity" in r.verdict, r.verdict


def test_the_classification_laws_are_findings_not_passes():
    """The C = 100 rows' α is stated as a measurement where neither theorem applies, never judged as linear."""
    t = capacity_law("alpha_heads", 2.2, 1.5, 2.9, setting=CLASSES)
    r = row(t, "capacity_linear_in_heads")
    assert r.verdict.startswith("skipped: no mlt/scalar rows yet"), r.verdict
    assert "superlinear in H: α = 2.20 [1.50, 2.90] (H=1, ...)" in r.verdict
    scalar = capacity_law("alpha_heads", 1.2, 1.05, 1.35)
    both = {"capacity": pd.concat([scalar["capacity"], t["capacity"]]),
            "capacity_laws": pd.concat([scalar["capacity_laws"], t["capacity_laws"]])}
    r = row(both, "capacity_linear_in_heads")
    assert r.verdict == REP and "mlt/classification C=100 (neither theorem applies" in r.detail, r.detail
    # a d_v or lr variant's law (a budget table's rows) is not the setting's finding, listed first or not
    dv4 = capacity_law("alpha_heads", 3.5, 3.0, 4.0, setting=CLASSES + " d_v=4")["capacity_laws"]
    r = row({**both, "capacity_laws": pd.concat([dv4, both["capacity_laws"]])}, "capacity_linear_in_heads")
    assert "α = 2.20 [1.50, 2.90]" in r.detail and "d_v=4" not in r.detail, r.detail


def test_fig2c_needs_two_head_sizes_past_n():
    r = row(dh(lambda d: min(d, 8) / 20, xs=(2, 4, 6, 8)), "mlt_fig2c_no_gain_past_n")
    assert r.verdict.startswith("skipped: ") and "fewer than 2 values d_h >= n = 8" in r.verdict, r.verdict
    r = row(dh(lambda d: min(d, 32) / 40, xs=(10, 20, 30, 35, 50, 64), context_size=32), "mlt_fig2c_no_gain_past_n")
    assert r.verdict == REP and "change over d_h = 35-64" in r.detail, r.detail


def test_table1_claim_names_each_stand_in_and_a_skipped_one():
    judged = row(asm1_stand_ins(), "mlt_table1_asm1_layers")
    assert "imagenet/trained ViT (DINOv2-S/14 stand-in)/first block: holds" in judged.detail
    assert "gpt2/trained causal LM (SmolLM2-135M stand-in)/L0: fails" in judged.detail
    checks = asm1_imagenet()["assumption_checks"]
    reason = "DINOv2-S/14 backbone not fetched: no data/dinov2-vits14/memcap-stand-in.json; run `tools/fetch-stand-ins.sh dinov2`"
    skipped = pd.concat([checks, pd.DataFrame([{"track": "imagenet", "model": "trained ViT (DINOv2-S/14 stand-in)",
                                                "layer": layer, "check": "asm1", "status": "SKIPPED",
                                                "reason": reason} for layer in ("embedding layer", "first block")])])
    out = row({"assumption_checks": skipped}, "mlt_table1_asm1_layers")
    assert out.verdict == REP and f"SKIPPED: trained ViT (DINOv2-S/14 stand-in) ({reason})" in out.detail


def test_a_claim_over_rows_of_several_presets_names_the_composite_not_one_member():
    """capacity's paper_settings: DPC rows at d = 4 and d = 8 come from two presets; the claim's scale is
    the family's preset that holds both (one member's name would say the rows are only that)."""
    scales = {**{family: "quick" for family in claims.INPUT_FAMILY.values()}, "capacity": "paper_settings"}
    t = capacity([6, 8], [7, 9], setting=DPC_SET)
    mixed = {"capacity": t["capacity"].assign(scale=["paper_dpc_d4", "paper_dpc"])}
    assert claims.scorecard(mixed, scales).set_index("claim_id").loc["capacity_vs_dpc_bound", "scale"] == "paper_settings"
    one = {"capacity": t["capacity"].assign(scale="paper_dpc")}
    assert claims.scorecard(one, scales).set_index("claim_id").loc["capacity_vs_dpc_bound", "scale"] == "paper_dpc"


def test_the_first_screen_capacity_speaks_for_the_paper_settings_and_names_the_stand_ins():
    """Quick stand-ins beside paper-scale rows are counted, not quoted as the capacity; a table of stand-ins
    alone is quoted (its labels say what it is)."""
    from memcap.report import headline

    def rows(scale, setting, bits):
        return {"scale": scale, "setting": setting, "setting_base": setting, "variant": None, "bits_per_param": bits,
                "threshold": 0.99}
    paper = rows("paper_scalar", "mlt/scalar", 0.2)
    stand_in = rows("quick_torch_block", "torch block C=100 (QUICK STAND-IN)", 0.6)
    both = headline.capacity_sentence(pd.DataFrame([paper, stand_in]), None)
    assert "MLT's layer with one logit 0.2 bits" in both and "0.6" not in both
    assert "(1 quick stand-in setting in the capacity table below)" in both
    alone = headline.capacity_sentence(pd.DataFrame([stand_in]), None)
    assert "torch block C=100 (QUICK STAND-IN) 0.6" in alone and "stand-in setting" not in alone
