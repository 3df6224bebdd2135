"""The attention features Z of MLT eq (7), and numerical rank, in float64.

For one example (context E ∈ R^{n×d}, query e ∈ R^d) and head h with W_KQ^h = W_K^h (W_Q^h)^T:
    α_h = softmax(E W_KQ^h e) ∈ Δ^{n-1},   z_h = E^T α_h ∈ R^d,   z = [z_1; …; z_H] ∈ R^{Hd}
and Z stacks z^(t) over the T examples. The output of the layer is linear in Z (eq 8), so rank(Z)
decides how many labels the value/output/readout weights can fit exactly.

Contexts are (n, d) when shared by every example (Prop 2's setting) or (T, n, d) otherwise.
"""

from __future__ import annotations

import numpy as np

RANK_RTOL = 1e-9   # relative SVD tolerance of the rank checks (MLT App. B.2: c doubles until the rank check passes)


def logits(contexts: np.ndarray, queries: np.ndarray, w_kq: np.ndarray) -> np.ndarray:
    """Softmax logits E_t W_KQ^h e_t: contexts (n, d) | (T, n, d), queries (T, d), w_kq (H, d, d) -> (T, H, n)."""
    u = np.einsum("hde,te->thd", w_kq, queries)                 # (T, H, d): W_KQ^h e_t
    if contexts.ndim == 2:
        return np.einsum("nd,thd->thn", contexts, u)
    return np.einsum("tnd,thd->thn", contexts, u)


def softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(-1, keepdims=True)   # stable for the large scales c of the construction
    p = np.exp(x)
    return p / p.sum(-1, keepdims=True)


def head_features(contexts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """z_h = E^T α_h: alpha (T, H, n) -> (T, H, d)."""
    if contexts.ndim == 2:
        return np.einsum("thn,nd->thd", alpha, contexts)
    return np.einsum("thn,tnd->thd", alpha, contexts)


def features(contexts: np.ndarray, queries: np.ndarray, w_kq: np.ndarray) -> np.ndarray:
    """Z of eq (7) as (T, H, d); reshape to (T, H·d) for the matrix."""
    return head_features(contexts, softmax(logits(contexts, queries, w_kq)))


def singular_values(z: np.ndarray) -> np.ndarray:
    return np.linalg.svd(z.reshape(z.shape[0], -1), compute_uv=False)


def numerical_rank(z: np.ndarray, rtol: float = RANK_RTOL) -> int:
    """Singular values above rtol·σ_max; z is (T, ...) and is flattened to (T, ·)."""
    s = singular_values(z)
    return int((s > rtol * s[0]).sum()) if s.size and s[0] > 0 else 0


def condition(z: np.ndarray) -> float:
    """σ_max / σ_min over the min(T, H·d) singular values (inf when rank-deficient)."""
    s = singular_values(z)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
