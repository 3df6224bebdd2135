"""MLT's step count and learning-rate schedule, as the original builds them (spec mahdavi.md §2.2)."""

from __future__ import annotations

import torch
from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, LRScheduler, SequentialLR

from memcap.mlt_synthetic.grid import mlt_num_steps  # noqa: F401 (torch-free, there for the planners)


def warmup_cosine(opt: torch.optim.Optimizer, total_steps: int) -> LRScheduler:
    """LinearLR from 0.01·lr to lr over W = floor(S/20) steps, then cosine to 0 over S − W; step it
    once after every optimizer step."""
    warmup = total_steps // 20
    if warmup == 0:  # S < 20: no warm-up step at all (SequentialLR would still start at 0.01·lr)
        return CosineAnnealingLR(opt, T_max=max(total_steps, 1))
    return SequentialLR(opt, [LinearLR(opt, start_factor=0.01, end_factor=1.0, total_iters=warmup),
                              CosineAnnealingLR(opt, T_max=total_steps - warmup)], milestones=[warmup])
