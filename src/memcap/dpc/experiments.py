"""DPC experiments: from params.yaml to jobs, and one job to a table of runs (spec dana.md §2.6, §3).

An experiment varies one quantity `x` (heads, head_dim, dim, a width multiple, or the Exp 5 MLP arm's
"heads" with W = 2d(H−1)) for each value of an optional `series` (dim, with d_h = d when head_dim is
null). One job = (experiment, series value): it trains every x of that curve in turn, all
repetitions of a grid point batched as one model dimension, and writes one Parquet.

Seeds: the table and the fixed sample come from the group seed (2222, shared by every run of a
group); repetition r initialises and shuffles from its own seed, derived from (group seed, r).
"""

from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np
import pandas as pd

from memcap import config
from memcap.dpc import bounds
from memcap.dpc.train import TrainConfig, train
from memcap.families import cross_field_check
from memcap.models.aot import AoT, param_count
from memcap.runtime import pick_device
from memcap.tasks.lookup import make_task

FAMILY = "dpc"
X_KEYS = ("heads", "head_dim", "dim", "width_mult", "mlp_heads")
SEQ_LEN = 2   # S: contexts (t_1, t_2)


def preset(params: dict) -> dict:
    return config.preset(params, FAMILY)


def repetition_seed(group_seed: int, rep: int) -> int:
    """Seed of repetition `rep`: fixed by (group seed, rep) alone, whatever else shares the job."""
    return int(np.random.SeedSequence([int(group_seed), int(rep)]).generate_state(1)[0])


def settings(params: dict, experiment: str) -> dict:
    """The experiment merged with its group's training settings."""
    p = preset(params)
    if experiment not in p["experiments"]:
        raise config.ParamsError(f"{FAMILY}.{params['scale']}.experiments: no experiment {experiment!r}; "
                                 f"defined: {sorted(p['experiments'])}")
    e = p["experiments"][experiment]
    return {**p["groups"][e["group"]], **e, "group_seed": p["group_seed"], "per_head_proj": p["per_head_proj"]}


def jobs(params: dict) -> list[tuple[str, str]]:
    """Every (experiment, series label) of the active preset; the label is 'all' without a series."""
    out = []
    for name, e in preset(params)["experiments"].items():
        labels = [str(v) for v in e["series"]["values"]] if e.get("series") else ["all"]
        out += [(name, label) for label in labels]
    return out


def shape(s: dict, series_value: int | None, x: int) -> dict:
    """Model shape (dim, head_dim, heads, width, layers) of one grid point."""
    m = {"dim": s.get("dim"), "head_dim": s.get("head_dim"), "heads": s.get("heads", 1), "width": 0,
         "layers": s["layers"]}
    if series_value is not None:
        m[s["series"]["key"]] = series_value
    key = s["x"]["key"]
    if key in ("heads", "head_dim", "dim"):
        m[key] = x
    if m["head_dim"] is None:
        m["head_dim"] = m["dim"]                 # d_h = d (Exps 1, 5, 6)
    if key == "width_mult":                     # W = x·d, one head (Exp 5 dim/depth)
        m["width"] = x * m["dim"]
    if key == "mlp_heads":                      # Exp 5 MLP arm: one head and W = 2d(H−1)
        m["heads"], m["width"] = 1, 2 * m["dim"] * (x - 1)
    return m


def axis_params(axis: str, N: int, dim: int, heads: int, width: int, head_dim: int) -> int:
    """Parameter count as the paper's x-axes draw it (spec §1.3)."""
    d = dim
    if axis == "exp5":          # EXP_5.py: 4d²H + d(2N+1); the MLP arm at H = 1 + W/(2d)
        return 4 * d * d * (heads + width // (2 * d)) + d * (2 * N + 1)
    if axis == "dim":           # EXP_dim.py
        return 4 * d * d * heads + 2 * d * width + 2 * d * (N + 1)
    if axis == "depth":         # EXP_depth.py: ×5 layers although the runs have 3 (a leftover)
        return 5 * 4 * d * d * heads + 5 * 2 * d * width + 2 * d * (N + 1)
    return d * (SEQ_LEN + 2 * N + 4 * head_dim * heads)   # Theorem 1: d(S + 2N + 4·d_h·H)


@cross_field_check
def _check(params: dict) -> list[str]:
    problems = []
    for scale, p in (params.get(FAMILY) or {}).items():
        for name, e in p.get("experiments", {}).items():
            key = f"{FAMILY}.{scale}.experiments.{name}"
            if e.get("group") not in p.get("groups", {}):
                problems.append(f"{key}.group: {e.get('group')!r} is not a group; allowed: {sorted(p.get('groups', {}))}")
                continue
            series = e.get("series") or {"key": None, "values": [None]}
            for sv in series["values"]:
                for x in e["x"]["values"]:
                    m = shape({**p["groups"][e["group"]], **e}, sv, x)
                    if m["dim"] is None:
                        problems.append(f"{key}: no dim given (set dim, or a series/x over dim)")
                        break
                    if m["width"] < 0 or m["heads"] < 1:
                        problems.append(f"{key}: x={x} gives heads {m['heads']}, width {m['width']}; "
                                        f"allowed: heads >= 1, width >= 0")
        for g, grp in p.get("groups", {}).items():
            if grp.get("batches", 0) * grp.get("epochs", 0) <= grp.get("window", 100):
                problems.append(f"{FAMILY}.{scale}.groups.{g}: batches*epochs must exceed the accuracy "
                                f"window ({grp.get('window', 100)} batches)")
    return problems


def train_config(s: dict) -> TrainConfig:
    return TrainConfig(batch_size=s["batch_size"], batches=s["batches"], epochs=s["epochs"], lr=s["lr"],
                       lr_low=s["lr_low"], window=s["window"])


def run_job(params: dict, experiment: str, label: str, checkpoint_prefix: str | None = None,
            progress: bool = True) -> pd.DataFrame:
    """Train every grid point of one curve (all repetitions batched); one row per (x, repetition)."""
    s = settings(params, experiment)
    device = pick_device(params.get("device", "auto"))
    series_value = None if label == "all" else int(label)
    reps = list(range(s["repetitions"]))
    seeds = [repetition_seed(s["group_seed"], r) for r in reps]
    N, cfg = s["N"], train_config(s)
    task = make_task(N, cfg.batch_size * cfg.batches, s["group_seed"]).to(device)
    coverage = len(np.unique((task.samples[:, 0] * N + task.samples[:, 1]).cpu().numpy())) / N ** 2

    rows = []
    for x in s["x"]["values"]:
        m = shape(s, series_value, x)
        model = AoT(seeds, vocab=N, per_head_proj=s["per_head_proj"], **m).to(device)
        ck = f"{checkpoint_prefix}_x{x}.pt" if checkpoint_prefix else None
        start = time.perf_counter()
        results = train(model, task, seeds, cfg, ck, progress, desc=f"{experiment} {label} x={x}")
        wall = time.perf_counter() - start
        if ck:
            from memcap import checkpoint
            checkpoint.remove(ck)
        lb = bounds.our_bound(m["heads"], m["head_dim"], m["dim"], N)
        prev = bounds.previous_bound(m["heads"], m["head_dim"], N)
        for rep, seed, r in zip(reps, seeds, results):
            rows.append({
                "family": FAMILY, "scale": params["scale"], "experiment": experiment, "group": s["group"],
                "series_key": s["series"]["key"] if s.get("series") else "none",
                "series": series_value if series_value is not None else -1,
                "x_key": s["x"]["key"], "x": x, "N": N, **m, "per_head_proj": s["per_head_proj"],
                "repetition": rep, "seed": seed, "group_seed": s["group_seed"], **asdict(r),
                "param_count": param_count(N, per_head_proj=s["per_head_proj"], **m),
                "param_axis": axis_params(s["axis"], N, m["dim"], m["heads"], m["width"], m["head_dim"]),
                "axis": s["axis"], "fit": s["fit"], "chance": 1 / N, "bound": lb, "prev_bound": prev,
                "contexts": N * N, "sample_coverage": coverage, "batch_size": cfg.batch_size,
                "batches": cfg.batches, "epochs": cfg.epochs, "lr": cfg.lr, "lr_low": cfg.lr_low,
                "device": str(device), "models_in_job": len(seeds), "wall_time_s": wall,
            })
    return pd.DataFrame(rows)
