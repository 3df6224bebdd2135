"""The learning rate the original code actually ran (docs/method.md, "DPC: Training protocol").

The original builds `LinearLR(opt, start_factor=lr, end_factor=lr_low, total_iters=epochs)` on an Adam
whose base lr is already `lr`, and steps it once per epoch. LinearLR multiplies the base lr by the
factor, so the effective rate is lr·lr at epoch 0, moving linearly towards lr·lr_low (never reached:
the last epoch is epochs − 1). For lr = 0.1, lr_low = 0.005: 1e-2, 5.25e-3 at epoch 32, 6.48e-4 at 63.
The paper's "0.1 linearly decreasing to 0.05" is not what ran; the CSVs were made with this rule.
"""

from __future__ import annotations


def effective_lr(epoch: int, epochs: int, lr: float, lr_low: float) -> float:
    """lr_e = lr·(lr + (lr_low − lr)·e/epochs), e = 0..epochs−1."""
    e = min(epoch, epochs)
    return lr * (lr + (lr_low - lr) * e / epochs)
