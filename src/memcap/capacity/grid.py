"""The capacity family's grid, from its preset (torch-free): which architectures are searched, and the
MLT settings one search step trains with."""

from __future__ import annotations

from memcap.keys import settings_key

FAMILY = "capacity"
# The MLT trainer's settings that one search step takes from the `training` block of the preset.
TRAINING_KEYS = ("lr", "batch_size", "epochs", "min_steps", "eval_every", "early_stop")


def architectures(p: dict) -> list[tuple[int, int]]:
    """(H, d_h) points: the H grid at the fixed d_h, and the d_h grid at the fixed H (deduplicated)."""
    points = [(H, p["head_dim"]) for H in p["heads_grid"]] + [(p["heads"], dh) for dh in p["head_dim_grid"]]
    return list(dict.fromkeys(points))


def run_name(preset_name: str, p: dict, heads: int, head_dim: int) -> str:
    """One architecture's file below runs/: <preset>/H<H>_dh<d_h>-<key>.parquet (memcap.keys)."""
    return f"{preset_name}/H{heads}_dh{head_dim}-{settings_key(preset_name, search_settings(p, heads, head_dim))}.parquet"


def mlt_settings(p: dict, heads: int, head_dim: int) -> dict:
    """The resolved MLT settings of one search step: a classification 'sweep' over heads with this one
    architecture. Every key the MLT trainer reads comes from the capacity preset (none from the MLT
    preset), so the MLT family's params never change a capacity number."""
    return {"task": "classification", "context": p["context"], "vary": "heads", "input_dim": p["input_dim"],
            "context_size": p["context_size"], "heads": heads, "head_dim": head_dim,
            "num_classes": p["num_classes"], "analysis": False, "seeds": list(p["seeds"]),
            **{k: p["training"][k] for k in TRAINING_KEYS}}


def search_settings(p: dict, heads: int, head_dim: int) -> dict:
    """Everything one architecture's row depends on (its rule's params): the step's MLT settings and the
    search's own knobs, without the grids, so adding an architecture reruns only that one."""
    return {**mlt_settings(p, heads, head_dim),
            **{k: p[k] for k in ("threshold", "start", "t_min", "t_max", "rel_tol", "max_evals")}}
