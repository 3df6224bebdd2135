"""MLT synthetic grids, from the family's preset (torch-free; spec mahdavi.md §2.3).

A sweep varies one of heads / context_size / head_dim over `values` for each dataset size T in
`dataset_sizes`. One grid point = (sweep, value, T); all seeds of a grid point train together in one
job (they share every shape), one Parquet per grid point.
"""

from __future__ import annotations

import math

from memcap.errors import ParamsError
from memcap.keys import settings_key

FAMILY = "mlt_synthetic"
VARIED = ("heads", "context_size", "head_dim")
# Fig 2a: points at or above this mean accuracy count as saturated and are left out of the linear fit
# (the paper's exact cut was not recoverable; spec mahdavi.md §3.1). Torch- and plot-free here, so the
# scorecard reads the same cut without importing the figure code.
SATURATION_ACC = 0.99
# Rows of a dataset drawn at a time (memcap.tasks.mlt_data): the only scratch memory beside the data.
CHUNK_ROWS = 4096
EVAL_BATCH = 8192   # examples per evaluation forward pass (memcap.mlt_synthetic.train.TrainConfig)


def sweep_settings(preset: dict, sweep: str) -> dict:
    """The resolved settings of one sweep: the preset's defaults overridden by the sweep's keys, plus
    the seeds. Everything one grid point's numbers depend on, with its value and T."""
    if sweep not in preset["sweeps"]:
        raise ParamsError(f"{FAMILY}.sweeps: no sweep named {sweep!r}; defined: {sorted(preset['sweeps'])}")
    return {**preset["defaults"], **preset["sweeps"][sweep], "seeds": preset["seeds"]}


def point_settings(preset: dict, sweep: str) -> dict:
    """What a grid point's numbers depend on (its rule's params): the sweep settings without the grid
    lists, so adding or changing one value or T reruns only that point, not the whole sweep."""
    return {k: v for k, v in sweep_settings(preset, sweep).items() if k not in ("values", "dataset_sizes")}


def run_name(preset_name: str, preset: dict, sweep: str, value: int, T: int) -> str:
    """A grid point's file below runs/ (and attention/): <preset>/<sweep>/<value>/T<T>-<key>.parquet,
    the key standing for the point's settings (memcap.keys)."""
    return f"{preset_name}/{sweep}/{value}/T{T}-{settings_key(preset_name, point_settings(preset, sweep))}.parquet"


def data_bytes(settings: dict, value: int, T: int) -> int:
    """Host memory of one job's data: every seed's float32 queries, contexts and labels, built in place
    (memcap.tasks.mlt_data), plus one chunk of float64 draws and, for random contexts, the contexts an
    evaluation batch gathers with the keys and values computed from them."""
    shp, d, M = shape(settings, value), settings["input_dim"], len(settings["seeds"])
    n, classification = shp["context_size"], settings["task"] == "classification"
    contexts = n * d if settings["context"] == "shared" else T * n * d
    data = M * (4 * (T * d + contexts) + (8 if classification else 4) * T)
    scratch = 8 * CHUNK_ROWS * max(n * d, settings["num_classes"])
    gathered = 0 if settings["context"] == "shared" else 3 * 4 * M * min(EVAL_BATCH, T) * n * d
    return data + scratch + gathered


def job_mem_mb(settings: dict, value: int, T: int, class_mem_mb: int) -> int:
    """A training job's memory request: its class's (params.yaml resources), or its data with half
    again for torch's buffers and 1 GB for the interpreter, torch and the model, when that is more."""
    return max(class_mem_mb, math.ceil(1.5 * data_bytes(settings, value, T) / 2 ** 20) + 1024)


def grid_points(preset: dict) -> list[tuple[str, int, int]]:
    """Every (sweep, value, T) of the preset."""
    return [(name, v, T) for name, sw in preset["sweeps"].items() for v in sw["values"] for T in sw["dataset_sizes"]]


def analysis_sweeps(preset: dict) -> list[str]:
    """The saturation sweeps (Fig 3): their jobs also write the max attention weights."""
    return [name for name in preset["sweeps"] if sweep_settings(preset, name)["analysis"]]


def shape(settings: dict, value: int) -> dict:
    """Heads, context size and head size of one grid point: the sweep's value replaces the varied one."""
    out = {k: settings[k] for k in VARIED}
    out[settings["vary"]] = value
    return out
