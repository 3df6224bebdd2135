"""Experiment (b): gradient descent vs the construction vs the bound, on the same datasets.

Per (H, T) of grid.gd_cases: every seed trains batched with the MLT family's trainer (regression,
MSE), and CONSTRUCT memorizes the first min(T, bound) examples of the same dataset; both count the
examples fit within `tolerance` over all T. With a shared context, rank(Z) of the trained weights is
also measured on fresh queries (Prop 2: it can never exceed H(n−1)+1).

At the paper preset a case trains 50,000 steps, so with a checkpoint prefix every finished case's rows
are saved at once: a killed or requeued job retrains only the cases it had not finished.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import torch

from memcap import checkpoint as ckpt
from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import draw_one, make_data
from memcap.theory import features as F
from memcap.theory import rank_bounds as RB
from memcap.theory.construct import AssumptionError, ConstructionError
from memcap.theory.exp_bounds import rank_row
from memcap.theory.grid import gd_cases, gd_settings
from memcap.training import memory
from memcap.theory.mlt_weights import construct_mlt, model_predictions
from memcap.training.config import TrainConfig
from memcap.training.loop import train

PROBE_SEED_OFFSET = 10_000    # fresh probe queries for rank checks come from seed + this


def finished_path(prefix: str, case: int) -> str:
    return f"{prefix}_case{case}.done.pt"


def clear_checkpoints(prefix: str | None, preset: dict) -> None:
    """Remove the finished cases' files: call once both output Parquets are written, never before."""
    if prefix:
        for i, _ in enumerate(gd_cases(preset)):
            ckpt.remove(finished_path(prefix, i))


def run(preset: dict, device: torch.device, progress: bool = True,
        checkpoint_prefix: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gd table (a 'gradient_descent' and a 'construction' row per seed and case) and the
    trained_ranks table (Prop 2 on the trained weights, shared context only)."""
    g, seeds = preset["gradient_descent"], [int(s) for s in preset["seeds"]]
    rows, ranks = [], []
    for i, common in enumerate(gd_cases(preset)):
        # a saved case is reused only for this very case, settings, seeds and device
        key = {"case": common, "gradient_descent": g, "seeds": seeds, "rtol": preset["rank_rtol"],
               "device": str(device)}
        done = finished_path(checkpoint_prefix, i) if checkpoint_prefix else None
        saved = ckpt.load(done, key)
        if saved is None:
            saved = run_case(common, g, seeds, preset["rank_rtol"], device, progress)
            if done:
                ckpt.save(done, saved, key)
        rows += saved["rows"]
        ranks += saved["ranks"]
    return pd.DataFrame(rows), pd.DataFrame(ranks)


def run_case(common: dict, g: dict, seeds: list[int], rtol: float, device: torch.device,
             progress: bool) -> dict:
    """One (H, T) case: every seed's GD run (batched) and construction, and Prop 2 on the trained weights."""
    rows, ranks = [], []
    H, d, n, dh, T = (common[k] for k in ("heads", "input_dim", "context_size", "head_dim", "dataset_size"))
    memory.check(f"theory GD H={H} T={T} ({len(seeds)} seeds)",
                 memory.mlt_job_bytes(gd_settings(g), [(seed, T, H, dh) for seed in seeds]))
    data = make_data(seeds, dataset_size=T, context_size=n, input_dim=d, context=g["context"],
                     task="regression").to(device)
    model = MLTAttention(seeds, input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=1).to(device)
    cfg = TrainConfig.of(g, early_stop=False, checkpoint_every_s=-1)
    start = time.perf_counter()
    results, _ = train(model, data, seeds, cfg, classification=False, progress=progress,
                          desc=f"theory GD H={H} T={T}")
    wall = time.perf_counter() - start
    with torch.no_grad():   # the model holds each seed's best checkpoint
        idx = torch.arange(T, device=device).expand(len(seeds), -1)
        q, c, y = data.batch(idx)
        err = (model(q, c)[..., 0] - y).abs().double().cpu().numpy()          # (M, T)
    for m, seed in enumerate(seeds):
        r = results[m]
        rows.append({**common, "seed": seed, "method": "gradient_descent",
                     "memorized": int((err[m] <= g["tolerance"]).sum()), "mse": float((err[m] ** 2).mean()),
                     "max_abs_error": float(err[m].max()), "steps": r.steps_run, "best_step": r.best_step,
                     "time_s": wall / len(seeds), "status": "ok", "reason": ""})
        rows.append(construction_row(common, seed, rtol))
    if g["context"] == "shared":
        ranks += trained_ranks(model, common, seeds, rtol)
    return {"rows": rows, "ranks": ranks}


def construction_row(common: dict, seed: int, rtol: float) -> dict:
    """CONSTRUCT on the first min(T, bound) examples of the GD dataset; counted on all T."""
    H, n, d, T = common["heads"], common["context_size"], common["input_dim"], common["dataset_size"]
    q, c, y = draw_one(seed, T, n, d, common["context"], "regression")
    k = min(T, common["bound"])
    start = time.perf_counter()
    try:
        con, model, _ = construct_mlt(q[:k], c if c.ndim == 2 else c[:k], y[:k], H, common["head_dim"],
                                      seed=seed, rtol=rtol)
    except (AssumptionError, ConstructionError) as err:
        return {**common, "seed": seed, "method": "construction", "memorized": 0, "mse": np.nan,
                "max_abs_error": np.nan, "steps": 0, "best_step": 0, "time_s": time.perf_counter() - start,
                "status": "failed", "reason": f"{type(err).__name__}: {err}"}
    err = np.abs(model_predictions(model, q, c) - y)
    return {**common, "seed": seed, "method": "construction", "memorized": int((err <= common["tolerance"]).sum()),
            "mse": float((err ** 2).mean()), "max_abs_error": float(err[:k].max()), "steps": 0, "best_step": 0,
            "time_s": time.perf_counter() - start, "status": "ok", "reason": ""}


def probe_queries(seed: int, size: int, input_dim: int) -> np.ndarray:
    """Fresh raw queries U[0,1)^d (same law as the data) for rank checks beyond the training set."""
    return np.random.RandomState(seed + PROBE_SEED_OFFSET).uniform(size=(size, input_dim))


def trained_ranks(model: MLTAttention, common: dict, seeds: list[int], rtol: float) -> list[dict]:
    """Prop 2 on trained weights: rank(Z) over 3·bound fresh queries with the training context
    (the bound holds for any queries, so probing beyond the training set is a stronger check)."""
    H, n, d = common["heads"], common["context_size"], common["input_dim"]
    size = 3 * RB.prop2_bound(H, n)
    probes = torch.from_numpy(np.stack([probe_queries(s, size, d) for s in seeds]))
    contexts = torch.from_numpy(np.stack([draw_one(s, 1, n, d, "shared", "regression")[1] for s in seeds]))
    z = RB.model_features(model, probes, contexts)                       # (M, size, H, d)
    return [{**rank_row("prop2", "trained", np.nan, "shared", d, n, H, size, s, F.numerical_rank(z[m], rtol),
                        RB.prop2_bound(H, n)), "trained_on": common["dataset_size"]} for m, s in enumerate(seeds)]
