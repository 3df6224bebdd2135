"""Counts of MLT attention (torch-free): its parameters, and the multiply-adds of its products: which
order of products the model takes (memcap.models.mlt_attention) and what padding a model to a pack's
shape costs (memcap.mlt_synthetic.packing). d: width, H: heads, n: context tokens, dh: head size,
B: examples."""

from __future__ import annotations


def param_count(d: int, heads: int, head_dim: int, out_dim: int, value_dim: int = 1) -> int:
    """Parameters of one model, e.g. 10,660 + 8,320·H for d = d_h = 64, C = 100 (d_v values a head:
    W_V and W_O hold 2·H·d_v·d)."""
    return d * d + d + 2 * heads * d * head_dim + 2 * heads * value_dim * d + d * out_dim + out_dim


def uses_a(d: int, H: int, dh: int, B: int) -> bool:
    """A context per example: form A_h = W_K^h (W_Q^h)^T (d_h near d), else go through (W_Q^h)^T e."""
    return H * d * dh * d + B * H * d * d < 2 * B * H * d * dh


def folds_embedding(d: int, H: int, n: int, dh: int, B: int) -> bool:
    """A context per example, A_h formed: leave its rows raw when that takes fewer multiply-adds,
    forward and backward: it saves their embedding (2·B·n·d²) and its gradient (2·B·H·n·d), and
    adds W_emb A_h (3·H·d³), the table (b + pe_j) A_h (3·H·n·d²) and its logits (3·B·H·n·d)."""
    raw, embedded = 3 * H * d ** 3 + 3 * H * n * d * d + 3 * B * H * n * d, 2 * B * n * d * d + 2 * B * H * n * d
    return uses_a(d, H, dh, B) and raw < embedded


def example_work(d: int, H: int, n: int, dh: int, out_dim: int, random_context: bool, B: int,
                 value_dim: int = 1) -> float:
    """Multiply-adds of one example's forward pass in the order of products the model takes for a
    batch of B (a model's own products, e.g. a shared context's keys, spread over its B examples).
    d_v values a head: the values, head outputs and W_O take d_v times the work of one."""
    Hv = H * value_dim
    common = d * d + Hv * n + Hv * d + d * out_dim          # query embedding, head outputs, W_O, readout
    if not random_context:                                  # keys once a step, then one product an example
        return common + H * n * d + (n * d * d + 2 * H * n * d * dh + n * d * Hv) / B
    if not uses_a(d, H, dh, B):
        return common + n * d * d + 2 * H * d * dh + H * n * d + n * d * Hv
    if not folds_embedding(d, H, n, dh, B):
        return common + n * d * d + H * d * d + H * n * d + n * d * Hv + H * d * dh * d / B
    return common + H * d * d + 2 * H * n * d + n * d * Hv + (H * d * dh * d + H * d ** 3 + H * n * d * d) / B
