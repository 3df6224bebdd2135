"""Experiments of the MLT theory family (issue 5), from the `theory` section of params.yaml.

  (a) construct_grid:   CONSTRUCT over (d, n, d_h, H, context, seed): rank(Z) = H(r−1)+1 exactly,
                        residual through MLTAttention's forward pass, or a failure row saying why.
  (b) gradient_descent: the same datasets (regression labels) trained with the spine's trainer;
                        examples fit within `tolerance` by GD vs by the construction vs the bound,
                        plus rank(Z) of the trained weights on fresh queries (Prop 2).
  (c) rank_bounds:      rank(Z) under random and constructed weights against Props 2 and 5.
Data always come from memcap.tasks.mlt_data.draw_one, the spine's generator.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from memcap import config
from memcap.families import cross_field_check
from memcap.models.mlt_attention import MLTAttention
from memcap.runtime import pick_device
from memcap.tasks.mlt_data import draw_one, make_data
from memcap.theory import features as F
from memcap.theory import rank_bounds as RB
from memcap.theory.construct import AssumptionError, ConstructionError, capacity
from memcap.theory.mlt_weights import construct_mlt, model_predictions, theory_tokens
from memcap.train import TrainConfig, train

FAMILY = "theory"
PROBE_SEED_OFFSET = 10_000    # fresh probe queries for rank checks come from seed + this


def preset(params: dict) -> dict:
    return config.preset(params, FAMILY)


def construct_cases(p: dict) -> list[dict]:
    """Grid points of (a): n < d and d_h ≤ d (the theorem's setting)."""
    g = p["construct"]
    return [dict(input_dim=d, context_size=n, head_dim=dh, heads=H, context=ctx, seed=s)
            for d, n, dh, H, ctx, s in itertools.product(g["input_dims"], g["context_sizes"], g["head_dims"],
                                                         g["heads"], g["contexts"], p["seeds"])
            if n < d and dh <= d]


@cross_field_check
def _check(params: dict) -> list[str]:
    problems = []
    for scale, p in (params.get(FAMILY) or {}).items():
        if not construct_cases(p):
            problems.append(f"{FAMILY}.{scale}.construct: no grid point with context_size < input_dim "
                            f"and head_dim <= input_dim (Theorem 1 needs both)")
        gd = p["gradient_descent"]
        if gd["context_size"] >= gd["input_dim"]:
            problems.append(f"{FAMILY}.{scale}.gradient_descent.context_size: {gd['context_size']} >= input_dim "
                            f"{gd['input_dim']}; allowed: context_size < input_dim (the construction needs n < d)")
        b2 = p["bounds"]["prop2"]
        if b2["context_size"] >= b2["input_dim"]:
            problems.append(f"{FAMILY}.{scale}.bounds.prop2.context_size: {b2['context_size']} >= input_dim "
                            f"{b2['input_dim']}; allowed: context_size < input_dim (constructed weights need n < d)")
        if (gd["head_dim"] or gd["input_dim"]) > gd["input_dim"]:
            problems.append(f"{FAMILY}.{scale}.gradient_descent.head_dim: > input_dim; allowed: head_dim <= input_dim")
    return problems


def _one_construction(case: dict, c_rule: str, rtol: float) -> dict:
    d, n, dh, H = case["input_dim"], case["context_size"], case["head_dim"], case["heads"]
    T = capacity(H, n, dh)
    row = {**case, "r": min(n, dh), "bound": T, "dataset_size": T, "c_rule": c_rule}
    q, c, y = draw_one(case["seed"], T, n, d, case["context"], "regression")
    start = time.perf_counter()
    try:
        con, _, model_err = construct_mlt(q, c, y, H, dh, seed=case["seed"], c_rule=c_rule, rtol=rtol)
    except (AssumptionError, ConstructionError) as err:
        return {**row, "status": "failed", "reason": f"{type(err).__name__}: {err}", "rank": -1,
                "cond": np.nan, "residual": np.nan, "model_residual": np.nan, "c_max": np.nan,
                "c_per_head": "", "alpha_draws": 0, "time_s": time.perf_counter() - start}
    scales = con.scales[1:con.heads_used]
    ok = con.rank == T and con.residual <= 1e-8 and model_err <= 1e-8
    return {**row, "status": "ok" if ok else "failed",
            "reason": "" if ok else f"rank {con.rank}/{T}, residual {con.residual:.1e}, model {model_err:.1e}",
            "rank": con.rank, "cond": con.cond, "residual": con.residual, "model_residual": model_err,
            "c_max": float(scales.max()) if scales.size else np.nan,
            "c_per_head": " ".join(f"{c:g}" for c in scales), "alpha_draws": con.alpha_draws,
            "time_s": time.perf_counter() - start}


def construct_grid(params: dict, progress: bool = True) -> pd.DataFrame:
    """(a): one row per grid point; status 'failed' rows carry the reason."""
    p = preset(params)
    cases = construct_cases(p)
    rows = [_one_construction(case, p["construct"]["c_rule"], p["rank_rtol"])
            for case in tqdm(cases, desc="construct", disable=not progress, mininterval=10)]
    return pd.DataFrame(rows)


def _probe(seed: int, size: int, input_dim: int) -> np.ndarray:
    """Fresh raw queries U[0,1)^d (same law as the data) for rank checks beyond the training set."""
    return np.random.RandomState(seed + PROBE_SEED_OFFSET).uniform(size=(size, input_dim))


def gradient_descent(params: dict, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(b): per (H, T): rows for 'construction' and 'gradient_descent', and trained rank(Z) rows."""
    p, g = preset(params), preset(params)["gradient_descent"]
    device = pick_device(params.get("device", "auto"))
    d, n, seeds = g["input_dim"], g["context_size"], [int(s) for s in p["seeds"]]
    dh = g["head_dim"] or d
    rows, ranks = [], []
    for H in g["heads"]:
        bound = capacity(H, n, dh)
        for factor in g["dataset_size_factors"]:
            T = max(1, round(factor * bound))
            data = make_data(seeds, dataset_size=T, context_size=n, input_dim=d, context=g["context"],
                             task="regression").to(device)
            model = MLTAttention(seeds, input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=1).to(device)
            cfg = TrainConfig(lr=g["lr"], batch_size=g["batch_size"], epochs=g["epochs"], min_steps=g["min_steps"],
                              eval_every=g["eval_every"], early_stop=False, checkpoint_every_s=-1)
            start = time.perf_counter()
            results, best = train(model, data, seeds, cfg, classification=False, progress=progress,
                                  desc=f"theory GD H={H} T={T}")
            wall = time.perf_counter() - start
            model.load_state_dict({**model.state_dict(), **best})
            with torch.no_grad():
                idx = torch.arange(T, device=device).expand(len(seeds), -1)
                q, c, y = data.batch(idx)
                err = (model(q, c)[..., 0] - y).abs().double().cpu().numpy()          # (M, T)
            common = {"heads": H, "input_dim": d, "context_size": n, "head_dim": dh, "context": g["context"],
                      "dataset_size": T, "dataset_size_factor": factor, "bound": bound,
                      "tolerance": g["tolerance"]}
            for m, seed in enumerate(seeds):
                r = results[m]
                rows.append({**common, "seed": seed, "method": "gradient_descent",
                             "memorized": int((err[m] <= g["tolerance"]).sum()), "mse": float((err[m] ** 2).mean()),
                             "max_abs_error": float(err[m].max()), "steps": r.steps_run, "best_step": r.best_step,
                             "time_s": wall / len(seeds), "status": "ok", "reason": ""})
                rows.append(_construction_row(common, seed, dh, p["rank_rtol"]))
            if g["context"] == "shared":
                ranks += _trained_ranks(model, common, seeds, p["rank_rtol"])
    return pd.DataFrame(rows), pd.DataFrame(ranks)


def _construction_row(common: dict, seed: int, head_dim: int, rtol: float) -> dict:
    """CONSTRUCT on the first min(T, bound) examples of the GD dataset; counted on all T."""
    H, n, d, T = common["heads"], common["context_size"], common["input_dim"], common["dataset_size"]
    q, c, y = draw_one(seed, T, n, d, common["context"], "regression")
    k = min(T, common["bound"])
    start = time.perf_counter()
    try:
        con, model, _ = construct_mlt(q[:k], c if c.ndim == 2 else c[:k], y[:k], H, head_dim, seed=seed, rtol=rtol)
    except (AssumptionError, ConstructionError) as err:
        return {**common, "seed": seed, "method": "construction", "memorized": 0, "mse": np.nan,
                "max_abs_error": np.nan, "steps": 0, "best_step": 0, "time_s": time.perf_counter() - start,
                "status": "failed", "reason": f"{type(err).__name__}: {err}"}
    err = np.abs(model_predictions(model, q, c) - y)
    return {**common, "seed": seed, "method": "construction", "memorized": int((err <= common["tolerance"]).sum()),
            "mse": float((err ** 2).mean()), "max_abs_error": float(err[:k].max()), "steps": 0, "best_step": 0,
            "time_s": time.perf_counter() - start, "status": "ok", "reason": ""}


def _trained_ranks(model: MLTAttention, common: dict, seeds: list[int], rtol: float) -> list[dict]:
    """Prop 2 on trained weights: rank(Z) over 3·bound fresh queries with the training context
    (the bound holds for any queries, so probing beyond the training set is a stronger check)."""
    H, n, d = common["heads"], common["context_size"], common["input_dim"]
    size = 3 * RB.prop2_bound(H, n)
    probes = torch.from_numpy(np.stack([_probe(s, size, d) for s in seeds]))
    contexts = torch.from_numpy(np.stack([draw_one(s, 1, n, d, "shared", "regression")[1] for s in seeds]))
    z = RB.model_features(model, probes, contexts)                       # (M, size, H, d)
    return [{**_rank_row("prop2", "trained", np.nan, "shared", d, n, H, size, s, F.numerical_rank(z[m], rtol),
                         RB.prop2_bound(H, n)), "trained_on": common["dataset_size"]} for m, s in enumerate(seeds)]


def _rank_row(prop, weights, scale, context, d, n, H, T, seed, rank, bound) -> dict:
    return {"proposition": prop, "weights": weights, "weight_scale": scale, "context": context, "input_dim": d,
            "context_size": n, "heads": H, "dataset_size": T, "seed": seed, "rank": rank, "bound": bound,
            "naive": min(T, H * d), "holds": rank <= bound, "attains": rank == bound}


def rank_bounds(params: dict) -> pd.DataFrame:
    """(c): random weights (several scales) and constructed weights against Props 2 and 5."""
    p = preset(params)
    rtol, rows = p["rank_rtol"], []
    b2, b5 = p["bounds"]["prop2"], p["bounds"]["prop5"]
    for seed in p["seeds"]:
        rng = np.random.default_rng(seed)
        d, n, T = b2["input_dim"], b2["context_size"], b2["dataset_size"]
        q, c, y = draw_one(seed, T, n, d, "shared", "regression")
        ctx, e = theory_tokens(q, c)
        for H in b2["heads"]:
            for s in b2["weight_scales"]:
                rows.append(_rank_row("prop2", "random", s, "shared", d, n, H, T, seed,
                                      RB.random_weight_rank(ctx, e, H, s, rng, rtol), RB.prop2_bound(H, n)))
            # Constructed weights memorize the first `bound` examples, then see all T queries.
            k = capacity(H, n, n)
            con, _, _ = construct_mlt(q[:k], c, y[:k], H, n, seed=seed, rtol=rtol)
            rank = F.numerical_rank(F.features(ctx, e, con.w_kq), rtol)
            rows.append(_rank_row("prop2", "constructed", np.nan, "shared", d, n, H, T, seed, rank,
                                  RB.prop2_bound(H, n)))
        d, n, T = b5["input_dim"], b5["context_size"], b5["dataset_size"]
        ctx = RB.constant_sum_tokens((T, n, d), b5["token_sum"], rng)
        e = RB.constant_sum_tokens((T, d), b5["token_sum"], rng)
        for H in b5["heads"]:
            for s in b5["weight_scales"]:
                rows.append(_rank_row("prop5", "random", s, "random", d, n, H, T, seed,
                                      RB.random_weight_rank(ctx, e, H, s, rng, rtol), RB.prop5_bound(H, d)))
    return pd.DataFrame(rows)


def settings_for(params: dict) -> dict:
    """Provenance: the family's active preset."""
    return {"scale": params["scale"], FAMILY: preset(params)}

