"""The training gradient of MLTAttention with a shared context, written out by hand.

With one context for every example, a training step is a handful of small GEMMs (at H = 1 about 19
MFLOP), and autograd's bookkeeping of ~60 small nodes costs several times their arithmetic. This is the
same loss and the same gradient, computed in the order the forward needs them (the derivation is the
chain rule through the model's docstring; tests/test_mlt_model.py checks it against autograd to float
rounding). Only the training step uses it; evaluation and random contexts keep the module's forward.
"""

from __future__ import annotations

import math

import torch

from memcap.models.mlt_attention import MLTAttention


@torch.no_grad()
def shared_context_grads(model: MLTAttention, queries: torch.Tensor, context: torch.Tensor,
                         labels: torch.Tensor, classification: bool, rows=None, valid=None) -> None:
    """Set every parameter's .grad to the gradient of Σ_m mean_b loss_m (the trainer's objective).

    queries (M, B, d), context (M, n, d) shared by the batch, labels (M, B): class indices, or targets
    for the squared error of the first output. In a pack a model's batch may be shorter than B (its
    epoch's last): valid (M, B) marks its rows, rows (M, 1, 1) counts them (else every row counts)."""
    m = model
    M, B, d = queries.shape
    H, n, dh = m.heads, m.context_size, m.head_dim
    scale = 1 / math.sqrt(d)

    # forward (as MLTAttention.forward, shared context), keeping what the backward reads
    e = torch.baddbmm(m.emb_b[:, None, :], context, m.emb_w) + m.pe[1:n + 1]     # (M, n, d)
    kq = torch.matmul(e[:, None], m.w_k)                                         # (M, H, n, dh)
    keys = torch.matmul(kq, m.w_q.transpose(2, 3)).reshape(M, H * n, d)          # (M, Hn, d)
    # The embedded query enters only the logits, q·K^T = x·(W_emb K^T) + (b_emb + pe_0)·K^T: with
    # fewer logits per example than d (H·n < d, e.g. H = 1) the raw query meets W_emb·K^T directly
    fold = H * n < d
    q0 = (m.emb_b + m.pe[0])[:, None, :]                                         # (M, 1, d)
    if fold:
        emb_keys = torch.bmm(m.emb_w, keys.transpose(1, 2))                     # (M, d, Hn)
        logits = torch.baddbmm(torch.bmm(q0, keys.transpose(1, 2)), queries, emb_keys)
    else:
        q = torch.baddbmm(q0, queries, m.emb_w)                                  # (M, B, d)
        logits = torch.bmm(q, keys.transpose(1, 2))
    alpha = m.masked(logits.mul_(scale).view(M, B, H, n)).softmax(-1)
    weights = m.per_value(alpha)                                                 # (M, B, H·d_v, n)
    values = torch.bmm(m.w_v, e.transpose(1, 2))                                 # (M, H·d_v, n): a head's d_v values
    heads = (weights * values[:, None]).sum(-1)                                  # (M, B, H·d_v)
    # W_O then W_D is one H·d_v x C map: formed once a step, it spares the (B x d)(d x C) product per
    # example whenever H < d (every paper sweep)
    readout = torch.bmm(m.w_o, m.dec_w)                                          # (M, H, C)
    out = torch.baddbmm(m.dec_b[:, None, :], heads, readout)                     # (M, B, C)

    # d(mean loss)/d(out)
    if classification:
        g_out = out.softmax(-1)
        g_out.scatter_add_(-1, labels[..., None], torch.full_like(g_out[..., :1], -1.0))
    else:
        g_out = torch.zeros_like(out)
        g_out[..., 0] = 2 * (out[..., 0] - labels)
    g_out.div_(B if rows is None else rows)
    if valid is not None:
        g_out.mul_(valid[..., None])

    m.dec_b.grad = g_out.sum(1)
    g_readout = torch.bmm(heads.transpose(1, 2), g_out)                          # (M, H, C)
    m.dec_w.grad = torch.bmm(m.w_o.transpose(1, 2), g_readout)
    m.w_o.grad = torch.bmm(g_readout, m.dec_w.transpose(1, 2))
    g_heads = torch.bmm(g_out, readout.transpose(1, 2))                          # (M, B, H·d_v)
    g_values = (g_heads[..., None] * weights).sum(1)                             # (M, H·d_v, n)
    # through the softmax: g_α = g_head·v, and Σ_j g_α,j α_j = g_head·head, so
    # d/d(logits) = α ⊙ g_head (v − head), scaled by 1/sqrt(d), summed over a head's d_v values
    g_s = (values[:, None] - heads[..., None]).mul_(g_heads[..., None] * scale).mul_(weights)
    if m.value_dim > 1:
        g_s = g_s.view(M, B, H, m.value_dim, n).sum(3)
    g_s = g_s.reshape(M, B, H * n)
    if fold:
        g_emb_keys = torch.bmm(queries.transpose(1, 2), g_s)                    # (M, d, Hn)
        g_q0 = g_s.sum(1, keepdim=True)                                          # (M, 1, Hn)
        g_keys = (torch.bmm(g_emb_keys.transpose(1, 2), m.emb_w)
                  .baddbmm_(g_q0.transpose(1, 2), q0).view(M, H, n, d))
        g_emb_w_query = torch.bmm(g_emb_keys, keys)                              # (M, d, d)
        g_emb_b_query = torch.bmm(g_q0, keys)[:, 0]                              # (M, d)
    else:
        g_q = torch.bmm(g_s, keys)                                               # (M, B, d)
        g_keys = torch.bmm(g_s.transpose(1, 2), q).view(M, H, n, d)
        g_emb_w_query = torch.bmm(queries.transpose(1, 2), g_q)
        g_emb_b_query = g_q.sum(1)
    m.w_q.grad = torch.matmul(g_keys.transpose(2, 3), kq)                        # (M, H, d, dh)
    g_kq = torch.matmul(g_keys, m.w_q)                                           # (M, H, n, dh)
    m.w_k.grad = torch.matmul(e[:, None].transpose(2, 3), g_kq)                  # (M, H, d, dh)
    g_e = torch.matmul(g_kq, m.w_k.transpose(2, 3)).sum(1)                       # (M, n, d)
    g_e.baddbmm_(g_values.transpose(1, 2), m.w_v)
    m.w_v.grad = torch.bmm(g_values, e)
    m.emb_w.grad = g_emb_w_query.baddbmm_(context.transpose(1, 2), g_e)
    m.emb_b.grad = g_emb_b_query + g_e.sum(1)

