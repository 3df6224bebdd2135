"""DPC grids, from the family's preset (torch-free; docs/method.md, "DPC: Training protocol").

An experiment varies one quantity `x` (heads, head_dim, dim, a width multiple, or the Exp 5 MLP arm's
"heads" with W = 2d(H−1)) for each value of an optional `series` (dim, with d_h = d when head_dim is
null). One job = (experiment, series value): one curve, every x trained in turn; a preset whose dpc
jobs pack trains every missing curve in one job, one curve after another.

Seeds: the table and the fixed sample come from the group seed (2222, shared by every run of a
group); repetition r initialises and shuffles from its own seed, derived from (group seed, r).
"""

from __future__ import annotations

import numpy as np

from memcap.errors import ParamsError
from memcap.keys import settings_key

FAMILY = "dpc"
X_KEYS = ("heads", "head_dim", "dim", "width_mult", "mlp_heads")
SEQ_LEN = 2   # S: contexts (t_1, t_2)
NO_SERIES = "all"   # the series label of an experiment without a series


def settings(preset: dict, experiment: str) -> dict:
    """The experiment merged with its group's training settings: everything one job's numbers need."""
    if experiment not in preset["experiments"]:
        raise ParamsError(f"{FAMILY}.experiments: no experiment {experiment!r}; "
                          f"defined: {sorted(preset['experiments'])}")
    e = preset["experiments"][experiment]
    return {**preset["groups"][e["group"]], **e, "group_seed": preset["group_seed"],
            "per_head_proj": preset["per_head_proj"]}


def run_name(preset_name: str, preset: dict, experiment: str, label: str) -> str:
    """A curve's file below runs/: <preset>/<experiment>/<series label>-<key>.parquet, the key standing
    for the experiment's settings (memcap.keys)."""
    return f"{preset_name}/{experiment}/{label}-{settings_key(preset_name, settings(preset, experiment))}.parquet"


def parse_run_name(path: str) -> tuple[str, str, str, str]:
    """(preset, experiment, series label, settings key) of a curve's file: run_name read back."""
    preset, experiment, name = str(path).removesuffix(".parquet").split("/")[-3:]
    label, key = name.rsplit("-", 1)
    return preset, experiment, label, key


def checkpoint_prefix(path: str) -> str:
    """Where a curve's per-point checkpoints live: checkpoints/dpc/<preset>/<experiment>_<series label>-<key>."""
    preset, experiment, label, key = parse_run_name(path)
    return f"checkpoints/{FAMILY}/{preset}/{experiment}_{label}-{key}"


def jobs(preset: dict) -> list[tuple[str, str]]:
    """Every (experiment, series label) of the preset; the label is 'all' without a series."""
    out = []
    for name, e in preset["experiments"].items():
        labels = [str(v) for v in e["series"]["values"]] if e.get("series") else [NO_SERIES]
        out += [(name, label) for label in labels]
    return out


def series_value(label: str) -> int | None:
    """A job's series label as the value it sets (None for 'all')."""
    return None if label == NO_SERIES else int(label)


def repetition_seed(group_seed: int, rep: int) -> int:
    """Seed of repetition `rep`: fixed by (group seed, rep) alone, whatever else shares the job."""
    return int(np.random.SeedSequence([int(group_seed), int(rep)]).generate_state(1)[0])


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
    """Parameter count as the paper's x-axes draw it (the original's EXP_*.py; DPC Theorem 1's count)."""
    d = dim
    if axis == "exp5":          # EXP_5.py: 4d²H + d(2N+1); the MLP arm at H = 1 + W/(2d)
        return 4 * d * d * (heads + width // (2 * d)) + d * (2 * N + 1)
    if axis == "dim":           # EXP_dim.py
        return 4 * d * d * heads + 2 * d * width + 2 * d * (N + 1)
    if axis == "depth":         # EXP_depth.py: ×5 layers although the runs have 3 (a leftover)
        return 5 * 4 * d * d * heads + 5 * 2 * d * width + 2 * d * (N + 1)
    return d * (SEQ_LEN + 2 * N + 4 * head_dim * heads)   # Theorem 1: d(S + 2N + 4·d_h·H)


def point_bytes(s: dict, series_value: int | None, x: int) -> dict[str, int]:
    """The memory estimate of one curve point (memcap.training.memory): every repetition's model at once."""
    from memcap.training import memory

    return memory.aot_job_bytes(s["N"], shape(s, series_value, x), s["repetitions"], s["batch_size"] * s["batches"],
                                s["batch_size"], s["per_head_proj"])
