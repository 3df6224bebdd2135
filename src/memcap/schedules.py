"""Learning-rate schedules and step counts, as closed forms (checked against torch's schedulers)."""

from __future__ import annotations

import math


def mlt_num_steps(dataset_size: int, min_steps: int, epochs: int = 500, batch_size: int = 256) -> int:
    """S = max(floor(500·T/256), min_steps): 'at least 500 epochs and at least min_steps steps'."""
    return max(epochs * dataset_size // batch_size, min_steps)


def mlt_lr(step: int, total_steps: int, base_lr: float) -> float:
    """MLT: LinearLR from 0.01·lr to lr over W = floor(S/20) steps, then cosine to 0 over S − W.

    The original is torch's SequentialLR([LinearLR(0.01, 1.0, W), CosineAnnealingLR(S − W)], [W]).
    """
    warmup = total_steps // 20
    if step < warmup:
        return base_lr * (0.01 + (1 - 0.01) * step / warmup)
    span = max(total_steps - warmup, 1)
    return base_lr * (1 + math.cos(math.pi * (step - warmup) / span)) / 2
