"""One optimizer step of every model of a stack on its next batch: the device work a CUDA graph records."""

from __future__ import annotations

import torch

from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_shared_grad import shared_context_grads
from memcap.stacked_adam import StackedAdam
from memcap.tasks.mlt_data import MLTData
from memcap.training.batches import BatchStream
from memcap.training.losses import example_loss


def train_step(model: MLTAttention, data: MLTData, batches: BatchStream, opt: StackedAdam,
               classification: bool) -> None:
    """One optimizer step of every model on its next batch (no host sync: nothing is read back)."""
    step_kernels(model, data, *batches.next(), opt, classification)
    opt.advance()


def step_kernels(model: MLTAttention, data: MLTData, idx: torch.Tensor, valid, rows, opt: StackedAdam,
                 classification: bool) -> None:
    """The device work of a step on rows idx (M, w) of each model (valid, rows: a short batch's mask
    and row counts, else None): batch, gradient, Adam update. What a CUDA graph records
    (memcap.training.graphed); the schedules' step is the caller's."""
    q, c, y = data.batch(idx)
    if c.dim() == 3:   # shared context: the same gradient without autograd's per-node cost
        shared_context_grads(model, q, c, y, classification, rows, valid)
    else:
        loss = example_loss(model(q, c), y, classification)   # no accuracy or bits: not read here
        if valid is not None:
            loss = loss * valid
        opt.zero_grad()
        (loss.sum(1) / (y.shape[1] if rows is None else rows.view(-1))).sum().backward()   # Σ_m mean loss_m
    opt.update()


def check_step_gradient(model: MLTAttention, data: MLTData, classification: bool, rows: int = 4) -> None:
    """A shared-context stack trains on the hand-written gradient: before its first step, check it against
    autograd's on each model's first rows (StaleGradient, naming the parameters, when they differ)."""
    if data.shared:
        k = min(rows, *data.sizes)
        idx = torch.arange(k, device=data.query_rows.device).expand(len(data.sizes), k)
        check_against_autograd(model, *data.batch(idx), classification)


class StaleGradient(RuntimeError):
    """The hand-written gradient is not the gradient of the model's own forward: training stops before it starts."""


def check_against_autograd(model: MLTAttention, queries: torch.Tensor, context: torch.Tensor,
                           labels: torch.Tensor, classification: bool, rtol: float = 1e-3) -> None:
    """Stop with StaleGradient unless shared_context_grads equals autograd's gradient of the model's own
    forward on this batch (every parameter, to rtol of its largest entry): a change to MLTAttention's
    forward without the same change here would otherwise train, silently, on another model's gradient.
    Run once at the start of a training run on a few rows (memcap.training.loop); the grads are cleared."""
    params = dict(model.named_parameters())
    for p in params.values():
        p.grad = None
    shared_context_grads(model, queries, context, labels, classification)
    hand = {k: None if p.grad is None else p.grad.clone() for k, p in params.items()}
    for p in params.values():
        p.grad = None
    with torch.enable_grad():
        example_loss(model(queries, context), labels, classification).mean(1).sum().backward()
    wrong = []
    for k, p in params.items():
        auto, mine = p.grad, hand[k]
        if auto is None and mine is None:
            continue
        if auto is None or mine is None or mine.shape != auto.shape:
            wrong.append(f"{k} (set by {'autograd only' if mine is None else 'the hand-written gradient only'})")
            continue
        gap, size = (mine - auto).abs().max().item(), auto.abs().max().item()
        if not gap <= rtol * max(size, 1e-12):
            wrong.append(f"{k} (largest difference {gap:.3g}, largest entry {size:.3g})")
        p.grad = None
    if wrong:
        raise StaleGradient(
            f"{type(model).__name__}: the hand-written shared-context gradient (memcap/models/mlt_shared_grad.py) "
            f"is not autograd's gradient of the model's forward: {'; '.join(wrong)}. A change to the model's "
            f"forward needs the same change in shared_context_grads; nothing was trained")
