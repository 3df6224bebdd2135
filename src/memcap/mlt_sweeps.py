"""MLT synthetic sweeps: from params.yaml to grid points, and one grid point to a table of runs.

A sweep (one row of spec mahdavi.md §2.3) varies one of heads / context_size / head_dim over
`values` for each dataset size T in `dataset_sizes`. One grid point = (sweep, value, T); all seeds of
a grid point train together in one job (they share every shape), one Parquet per grid point.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import pandas as pd
import torch

from memcap import config
from memcap.families import cross_field_check
from memcap.models.mlt_attention import MLTAttention
from memcap.runtime import pick_device
from memcap.tasks.mlt_data import make_data
from memcap.train import TrainConfig, train

FAMILY = "mlt_synthetic"
VARIED = ("heads", "context_size", "head_dim")

# Which sweep feeds which figure, and its x-axis (spec mahdavi.md §3).
FIGURES = {
    "fig2a": {"sweeps": ["scale_head_shared"], "title": "Fig 2a: classification, shared context, vs heads H"},
    "fig2b": {"sweeps": ["scale_ctx_size_shared"], "title": "Fig 2b: classification, shared context, vs context size n"},
    "fig2c": {"sweeps": ["scale_dh_shared"], "title": "Fig 2c: classification, shared context, vs head size d_h"},
    "fig4": {"sweeps": ["scale_head", "scale_ctx_size"], "title": "Fig 4: classification, random contexts"},
    "fig5": {"sweeps": ["regress_scale_head_shared", "regress_scale_ctx_size_shared"],
             "title": "Fig 5: regression (train MSE), shared context"},
}


def sweep_settings(params: dict, sweep: str) -> dict:
    """The resolved settings of one sweep: the preset's defaults overridden by the sweep's keys."""
    p = config.preset(params, FAMILY)
    if sweep not in p["sweeps"]:
        raise config.ParamsError(f"{FAMILY}.{params['scale']}.sweeps: no sweep named {sweep!r}; "
                                 f"defined: {sorted(p['sweeps'])}")
    s = {**p["defaults"], **p["sweeps"][sweep]}
    s["seeds"] = p["seeds"]
    return s


def point_settings(params: dict, sweep: str) -> dict:
    """What a grid point's numbers depend on (its rule's params): the sweep settings without the grid
    lists, so adding or changing one value or T reruns only that point, not the whole sweep."""
    return {k: v for k, v in sweep_settings(params, sweep).items() if k not in ("values", "dataset_sizes")}


def grid_points(params: dict) -> list[tuple[str, int, int]]:
    """Every (sweep, value, T) of the active preset."""
    p = config.preset(params, FAMILY)
    return [(name, v, T) for name, sw in p["sweeps"].items() for v in sw["values"] for T in sw["dataset_sizes"]]


@cross_field_check
def _check(params: dict) -> list[str]:
    problems = []
    for scale, p in (params.get(FAMILY) or {}).items():
        for name, sw in p.get("sweeps", {}).items():
            s = {**p.get("defaults", {}), **sw}
            d = s.get("input_dim")
            key = f"{FAMILY}.{scale}.sweeps.{name}"
            head_dims = sw["values"] if sw.get("vary") == "head_dim" else [s.get("head_dim")]
            for dh in head_dims:
                if dh is not None and d is not None and dh > d:
                    problems.append(f"{key}: head_dim {dh} > input_dim {d}; allowed: head_dim <= input_dim")
            if s.get("task") == "classification" and s.get("analysis") and s.get("early_stop", True):
                problems.append(f"{key}.early_stop: true with analysis: true; saturation runs need "
                                f"early_stop: false (the original disables it)")
    return problems


def run_grid_point(params: dict, sweep: str, value: int, dataset_size: int,
                   checkpoint_path: str | None = None, progress: bool = True):
    """Train every seed of one grid point; return (runs DataFrame, best weights, model)."""
    s = sweep_settings(params, sweep)
    shape = {k: s[k] for k in VARIED}
    shape[s["vary"]] = value
    classification = s["task"] == "classification"
    out_dim = s["num_classes"] if classification else 1
    device = pick_device(params.get("device", "auto"))
    seeds = [int(x) for x in s["seeds"]]

    data = make_data(seeds, dataset_size=dataset_size, context_size=shape["context_size"],
                     input_dim=s["input_dim"], context=s["context"], task=s["task"],
                     num_classes=s["num_classes"]).to(device)
    model = MLTAttention(seeds, input_dim=s["input_dim"], heads=shape["heads"],
                         context_size=shape["context_size"], head_dim=shape["head_dim"],
                         out_dim=out_dim).to(device)
    # How often to checkpoint changes no result, so it is read from the preset, not the sweep settings
    # (which are rule params: changing them reruns the grid).
    cfg = TrainConfig(lr=s["lr"], batch_size=s["batch_size"], epochs=s["epochs"], min_steps=s["min_steps"],
                      eval_every=s["eval_every"], early_stop=s["early_stop"],
                      checkpoint_every_s=config.preset(params, FAMILY)["checkpoint_every_s"])
    start = time.perf_counter()
    results, best = train(model, data, seeds, cfg, classification, checkpoint_path, progress,
                          desc=f"{sweep} {s['vary']}={value} T={dataset_size}")
    wall = time.perf_counter() - start

    rows = []
    for seed, r in zip(seeds, results):
        rows.append({
            "family": FAMILY, "sweep": sweep, "scale": params["scale"], "vary": s["vary"], "x": value,
            "task": s["task"], "context": s["context"], "dataset_size": dataset_size,
            "heads": shape["heads"], "context_size": shape["context_size"],
            "head_dim": shape["head_dim"] or s["input_dim"], "input_dim": s["input_dim"],
            "num_classes": out_dim, "seed": seed, **asdict(r),
            "param_count": model.shared_params, "lr": s["lr"], "batch_size": s["batch_size"],
            "min_steps": s["min_steps"], "device": str(device), "models_in_job": len(seeds),
            "wall_time_s": wall,
        })
    return pd.DataFrame(rows), best, model


@torch.no_grad()
def attention_maxima(model: MLTAttention, best: dict, params: dict, sweep: str, value: int,
                     dataset_size: int) -> pd.DataFrame:
    """Max attention weight per (seed, example, head) of the best checkpoint (Fig 3's raw data)."""
    s = sweep_settings(params, sweep)
    model.load_state_dict({**model.state_dict(), **best})
    seeds = [int(x) for x in s["seeds"]]
    n = model.context_size
    data = make_data(seeds, dataset_size=dataset_size, context_size=n, input_dim=s["input_dim"],
                     context=s["context"], task=s["task"], num_classes=s["num_classes"]).to(model.pe.device)
    idx = torch.arange(dataset_size, device=model.pe.device).expand(len(seeds), -1)
    q, c, _ = data.batch(idx)
    alpha = model.attention(q, c).amax(-1).cpu()            # (M, T, H)
    M, T, H = alpha.shape
    return pd.DataFrame({
        "sweep": sweep, "heads": model.heads, "dataset_size": dataset_size,
        "seed": torch.tensor(seeds).repeat_interleave(T * H).numpy(),
        "example": torch.arange(T).repeat_interleave(H).repeat(M).numpy(),
        "head": torch.arange(H).repeat(M * T).numpy(),
        "max_attention": alpha.reshape(-1).numpy(),
    })
