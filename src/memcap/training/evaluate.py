"""Full-train-set evaluation of every model of a stack, as the original evaluates: unshuffled, in order.

A model's numbers do not depend on which other models share the stack, nor on how the stack is sliced
to keep an evaluation chunk under EVAL_BYTES (each model's rows are chunked the same either way).
"""

from __future__ import annotations

import math

import torch

from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import MLTData
from memcap.training.config import EVAL_BATCH, EVAL_BYTES
from memcap.training.losses import loss_and_hits

CPU_EVAL_ROWS = 2048   # rows a CPU forward pass takes at once: a chunk of 8,192 spills its caches (~2x slower)


def _forward_parts(model: MLTAttention, rows: int, device: torch.device) -> int:
    """Into how many forward passes an evaluation chunk of `rows` examples goes: on a CPU, parts of
    at least CPU_EVAL_ROWS / 2 rows where the model takes the same products for them as for the
    whole chunk (each row's outputs are then the whole chunk's, bit for bit, so the sums are too)."""
    if device.type != "cpu" or rows < 2 * CPU_EVAL_ROWS:
        return 1
    parts = math.ceil(rows / CPU_EVAL_ROWS)
    return parts if model.formulation(rows // parts) == model.formulation(rows) else 1


def _eval_slices(model: MLTAttention, data: MLTData, rows: int) -> list[list[int]]:
    """Models evaluated together: as many as keep a chunk of `rows` examples under EVAL_BYTES. Each
    model's numbers do not depend on the slicing (its rows are chunked the same either way)."""
    H, n, d, C = model.heads, model.context_size, model.input_dim, model.out_dim
    per_model = 4 * rows * (4 * H * n + 3 * C + 2 * d + (0 if data.shared else 4 * n * d))
    k = max(1, EVAL_BYTES // per_model)
    M = model.num_models
    return [list(range(a, min(a + k, M))) for a in range(0, M, k)]


@torch.no_grad()
def evaluate(model: MLTAttention, data: MLTData, classification: bool, batch_size: int = EVAL_BATCH):
    """Full-train-set loss and accuracy per model, in order (the original's unshuffled loader), and
    memorized bits; every model's own T rows in chunks of batch_size. A chunk past a model's T leaves
    it out (a pack of T = 30,000-130,000 would otherwise pass every model over 130,000 rows)."""
    M, device = model.num_models, data.query_rows.device
    loss = torch.zeros(M, device=device, dtype=torch.float64)
    hits, bits = torch.zeros_like(loss), torch.zeros_like(loss)
    slices = _eval_slices(model, data, batch_size)
    for keep in slices:
        T = max(data.sizes[k] for k in keep)
        live = None
        for start in range(0, T, batch_size):
            rows_left = [k for k in keep if data.sizes[k] > start]
            if rows_left != live:   # the models with rows left in this chunk, and only they
                live = rows_left
                whole = len(live) == M
                sub_model, sub_data = (model, data) if whole else (model.select(live), data.select(live))
                at = torch.tensor(live, device=device)
            idx = torch.arange(start, min(start + batch_size, T), device=device).expand(len(live), -1)
            valid = None
            if min(sub_data.sizes) < start + idx.shape[1]:   # a model with fewer rows: mask its tail
                valid = idx < sub_data.size_of[:, None]
                idx = torch.minimum(idx, sub_data.size_of[:, None] - 1)
            outs, ys = [], []
            for part in idx.tensor_split(_forward_parts(sub_model, idx.shape[1], device), dim=1):
                q, c, y = sub_data.batch(part)
                outs.append(sub_model(q, c))
                ys.append(y)
            out, y = (outs[0], ys[0]) if len(outs) == 1 else (torch.cat(outs, 1), torch.cat(ys, 1))
            l, h, b = loss_and_hits(out, y, classification, valid)
            loss.index_add_(0, at, l.double())
            hits.index_add_(0, at, h.double())
            bits.index_add_(0, at, b.double())
    return loss / data.size_of, hits / data.size_of, bits
