"""MLT's step count and learning-rate schedule, as the original builds them (the paper's App A; docs/method.md,
MLT training protocol). Torch is imported only to build a schedule: the planners count steps torch-free."""

from __future__ import annotations


def mlt_num_steps(dataset_size: int, min_steps: int, epochs: int, batch_size: int) -> int:
    """S = max(floor(500·T/256), min_steps): 'at least 500 epochs and at least min_steps steps' (epochs
    and batch_size are the 500 and the 256)."""
    return max(epochs * dataset_size // batch_size, min_steps)


def warmup_cosine(opt, total_steps: int):
    """LinearLR from 0.01·lr to lr over W = floor(S/20) steps, then cosine to 0 over S − W; step it
    once after every optimizer step. opt: a torch optimizer; returns its LRScheduler."""
    from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

    warmup = total_steps // 20
    if warmup == 0:  # S < 20: no warm-up step at all (SequentialLR would still start at 0.01·lr)
        return CosineAnnealingLR(opt, T_max=max(total_steps, 1))
    return SequentialLR(opt, [LinearLR(opt, start_factor=0.01, end_factor=1.0, total_iters=warmup),
                              CosineAnnealingLR(opt, T_max=total_steps - warmup)], milestones=[warmup])
