"""A training run's checkpoints: what identifies the run, resuming from one, saving one, and SIGTERM.

A checkpoint is resumed only by the run that made it: the same config, seeds, sizes, task, model shape,
device and way of stepping (run_config), and the same code (memcap.checkpoint.fingerprint). A run
stopped after some of a pack's jobs finished is resumed by a run that skips them, so `skip` is not in
the run's config; a checkpoint that still trains a skipped model is not resumed.
"""

from __future__ import annotations

from dataclasses import asdict

from memcap import checkpoint as ckpt
from memcap.models.mlt_attention import MLTAttention
from memcap.training.config import TrainConfig
from memcap.training.members import Best

FORMAT = 4   # what a checkpoint holds; another format is another run


def run_config(model: MLTAttention, cfg: TrainConfig, seeds: list[int], sizes: list[int], classification: bool,
               device, cuda_graphs: bool) -> dict:
    return {"format": FORMAT, "cfg": asdict(cfg), "seeds": seeds, "sizes": sizes,
            "classification": classification,
            "device": str(device),   # resumed only on the device it was made on
            **({"cuda_graphs": True} if cuda_graphs else {}),   # and only stepped the same way
            "model": [model.input_dim, model.out_dim, model.shapes]}


def load(path: str | None, config: dict, skip: set[int]) -> dict | None:
    """The saved state of this very run, else None (training starts afresh)."""
    saved = ckpt.load(path, config)
    if saved is not None and skip & set(saved["active"]):   # killed after a job's file, before its checkpoint
        print(f"checkpoint {path} trains models finished since; training starts afresh", flush=True)
        return None
    return saved


def restore(saved: dict, model: MLTAttention, opt, batches, device) -> tuple[Best, int]:
    """Model, optimizer and batch order as saved; returns each model's best evaluation and the step."""
    model.load_state_dict(saved["model"])
    opt.load_state_dict(saved["opt"])
    batches.load(saved["batches"])
    best = Best(**{k: v.to(device) for k, v in saved["best"].items() if k != "state"},
                state={n: t.to(device) for n, t in saved["best"]["state"].items()})
    return best, saved["step"]


def save(path: str, config: dict, model: MLTAttention, opt, batches, best: Best, step: int, members,
         clock: ckpt.TrainingClock) -> None:
    ckpt.save(path, {"model": model.state_dict(), "opt": opt.state_dict(), "batches": batches.state(),
                     "best": best.tensors(), "step": step, **members.state(), **clock.state()}, config)
