"""Per-example losses of a stack of models, and what an evaluation sums of them: loss, hits, bits."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def example_loss(out: torch.Tensor, labels: torch.Tensor, classification: bool) -> torch.Tensor:
    """Per-example loss (M, B): cross-entropy in nats over out (M, B, C), or squared error of out[..., 0]."""
    if classification:
        M, B, C = out.shape
        return F.cross_entropy(out.reshape(M * B, C), labels.reshape(M * B), reduction="none").view(M, B)
    return F.mse_loss(out[..., 0], labels, reduction="none")


def loss_and_hits(out: torch.Tensor, labels: torch.Tensor, classification: bool, valid=None):
    """Per-model summed loss, correct count and memorized bits over a batch: out (M, B, C), labels (M, B);
    valid (M, B): the rows that count (a pack's models of smaller T), None: all.

    Memorized bits of an example = max(0, log2 C − its NLL in bits): what the model knows about the
    label beyond chance (the bits-per-parameter measure of the report).
    """
    loss = example_loss(out, labels, classification)
    if valid is not None:
        loss = torch.where(valid, loss, 0.0)
    if classification:
        hits = out.argmax(-1) == labels
        bits = (math.log2(out.shape[-1]) - loss / math.log(2)).clamp(min=0)
        if valid is not None:
            hits, bits = hits & valid, torch.where(valid, bits, 0.0)
        return loss.sum(1), hits.sum(1), bits.sum(1)
    return loss.sum(1), torch.zeros_like(loss[:, 0]), torch.full_like(loss[:, 0], float("nan"))
