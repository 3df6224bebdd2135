"""A straightforward reimplementation of the original `BaselineAttention` computation.

Full (n+1)x(n+1) attention for every head with a mask on column 0, one model at a time: what the
original code computes. Used only to check the fast model (same outputs, same gradients) and as the
baseline of benchmarks/train_throughput.py.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from memcap.models.mlt_attention import MLTAttention


class ReferenceMLTAttention(nn.Module):
    """One model; weights copied from model `index` of an MLTAttention so both can be compared."""

    def __init__(self, fast: MLTAttention, index: int = 0):
        super().__init__()
        self.d, self.value_dim = fast.input_dim, fast.value_dim
        for name, p in fast.named_parameters():
            setattr(self, name, nn.Parameter(p.detach()[index].clone()))
        self.register_buffer("pe", fast.pe.clone())

    def attention(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: (B, n+1, d) -> full attention weights (B, H, L, L) and embedded rows (B, L, d)."""
        L = x.shape[1]
        emb = x @ self.emb_w + self.emb_b + self.pe[:L]                        # (B, L, d)
        q = torch.einsum("bld,hde->bhle", emb, self.w_q)                       # (B, H, L, dh)
        k = torch.einsum("bld,hde->bhle", emb, self.w_k)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d)                   # (B, H, L, L)
        mask = torch.zeros(L, L, dtype=torch.bool, device=x.device)
        mask[:, 0] = True                                                      # nobody attends to the query
        return scores.masked_fill(mask, float("-inf")).softmax(-1), emb

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, n+1, d) with the raw query in row 0 -> (B, out_dim)."""
        alpha, emb = self.attention(x)
        B, H, L, _ = alpha.shape
        w_v = self.w_v.view(H, self.value_dim, self.d)                          # head h: d x d_v
        v = torch.einsum("bld,hkd->bhlk", emb, w_v)                            # (B, H, L, d_v)
        heads = alpha @ v                                                      # (B, H, L, d_v)
        concat = heads.transpose(1, 2).reshape(B, L, H * self.value_dim)       # [p_1..p_H] per row
        out = concat @ self.w_o                                                # (B, L, d)
        return out[:, 0] @ self.dec_w + self.dec_b                             # row 0 only
