"""CONSTRUCT on MLT's synthetic data, realized as weights of the trained model `MLTAttention`.

The trained model (models/mlt_attention.py) embeds each raw row x_i as W_emb x_i + b_emb + pe[i] and
scores s_h = E W_K^h (W_Q^h)ᵀ e / √d. With W_emb = I and b_emb = 0 the model's tokens are exactly the
theory's post-embedding tokens
    E_i = x_i + pe[i]  (i = 1..n),   e = x_0 + pe[0],
and setting the model's w_k = d^{1/4}·W_K, w_q = d^{1/4}·W_Q absorbs its 1/√d, so its logits are the
theory's E W_KQ e. With d_v = 1 and a scalar label (MLT Prop 1, Step 2): w_v[h] = ω_h, w_o[h] = e_1
(each head's scalar goes to coordinate 1 of o), dec_w = e_1, dec_b = 0, so
    ŷ = Σ_h w_o[h]·(α_hᵀ E w_v[h]) · e_1 = Σ_h z_hᵀ ω_h,
which is eq (8). `verify` runs the model's ordinary forward pass (mask, softmax and all) in float64.
"""

from __future__ import annotations

import numpy as np
import torch

from memcap.models.mlt_attention import MLTAttention, sinusoidal_pe
from memcap.theory.construct import Construction, construct


def theory_tokens(queries: np.ndarray, contexts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Raw rows -> the theory's (contexts, queries) with the model's PE (as the float64 model holds it)."""
    n, d = contexts.shape[-2:]
    pe = sinusoidal_pe(n + 1, d).double().numpy()                       # the model's buffer after .double()
    return np.asarray(contexts, np.float64) + pe[1:], np.asarray(queries, np.float64) + pe[0]


def to_model(con: Construction, context_size: int) -> MLTAttention:
    """An M=1 float64 MLTAttention computing exactly the construction's ŷ (scalar labels)."""
    H, d, dh = con.w_k.shape
    if con.readout.shape[-1] != 1:
        raise ValueError("MLTAttention has d_v = 1 per head: only scalar labels map onto it")
    model = MLTAttention([0], input_dim=d, heads=H, context_size=context_size, head_dim=dh, out_dim=1).double()
    scale = d ** 0.25                                                   # (d^{1/4})² = √d undoes the /√d
    e1 = torch.zeros(d, dtype=torch.float64)
    e1[0] = 1.0
    with torch.no_grad():
        model.emb_w.copy_(torch.eye(d, dtype=torch.float64)[None])
        model.emb_b.zero_()
        model.w_k.copy_(torch.from_numpy(con.w_k * scale)[None])
        model.w_q.copy_(torch.from_numpy(con.w_q * scale)[None])
        model.w_v.copy_(torch.from_numpy(con.readout[..., 0])[None])   # (1, H, d)
        model.w_o.copy_(e1.expand(1, H, d))
        model.dec_w.copy_(e1[None, :, None])
        model.dec_b.zero_()
    return model


@torch.no_grad()
def model_predictions(model: MLTAttention, queries: np.ndarray, contexts: np.ndarray) -> np.ndarray:
    """ŷ from the model's own forward pass on raw rows: (T,)."""
    q = torch.from_numpy(np.asarray(queries, np.float64))[None]
    c = torch.from_numpy(np.asarray(contexts, np.float64))[None]
    return model(q, c)[0, :, 0].numpy()


def construct_mlt(queries: np.ndarray, contexts: np.ndarray, labels: np.ndarray, heads: int,
                  head_dim: int, seed: int = 0, **kwargs) -> tuple[Construction, MLTAttention, float]:
    """CONSTRUCT on raw MLT rows; returns (construction, model, max |ŷ_model − y|)."""
    ctx, q = theory_tokens(queries, contexts)
    con = construct(ctx, q, labels, heads, head_dim, seed=seed, **kwargs)
    model = to_model(con, contexts.shape[-2])
    err = float(np.abs(model_predictions(model, queries, contexts) - np.asarray(labels, np.float64)).max())
    return con, model, err
