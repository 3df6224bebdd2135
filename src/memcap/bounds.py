"""The papers' memorization bounds: leaf formulas, the one place each is written, importable by every family.

MLT (Mahdavi et al. 2024, Theorem 1): a one-layer H-head attention memorizes H(min(n, d_h) − 1) + 1
examples; Props 2 and 5 (theory/rank_bounds.py) are this expression with r = n, r = d or r = d_h.

DPC (Dana et al. 2025, §4, Corollary 2): with a uniform prior over the T_0 = N² contexts
of a look-up table, a model that memorises X contexts gets those right and the others right with
probability at least 1/N (chance), so
    E[acc] >= φ(X) = 1/N + (1 − 1/N)·X/T_0.
This paper (Corollary 1): X = H·d_h + d.  Previous (MLT's): X = H(d_h − 1) + 1, i.e. n = d_h.
Both are clipped at 1 (the original clips only in Exp 6; an accuracy bound above 1 says nothing).
"""

from __future__ import annotations

import numpy as np

# MLT Fig 2a: points at or above this seed-mean accuracy are saturated and left out of the linear fit
# of accuracy against the bound's growth (the paper does not state its cut; MLT §5.2). The family's figures and
# the scorecard read this one value.
SATURATION_ACC = 0.99


# Published capacities in bits per parameter, drawn and listed beside memcap's, each once, with its source:
# the perceptron (Cover 1965; Gardner 1988: 2 bits a weight), knowledge stored in language models
# (Allen-Zhu & Li 2024: 2 bits a parameter), GPT-style models on uniformly random tokens (Morris et al.
# 2025: ≈3.6 bits a parameter, their headline figure), and after heavy tuning (Collins et al.: ≈5).
PUBLISHED_BITS_PER_PARAM = {
    "perceptron, 2 bits a weight (Cover 1965; Gardner 1988)": 2.0,
    "knowledge in language models, ≈2 (Allen-Zhu & Li 2024)": 2.0,
    "GPT-style models on random tokens, ≈3.6 (Morris et al. 2025)": 3.6,
    "tuned models, ≈5 (Collins et al.)": 5.0,
}


def memorization_bound(heads, context_size, head_dim):
    """MLT Theorem 1: H(r − 1) + 1 with r = min(n, d_h); scalars give an int, arrays give an array."""
    out = np.asarray(heads) * (np.minimum(context_size, head_dim) - 1) + 1
    return int(out) if np.ndim(out) == 0 else out


def phi(memorised, N: int, contexts: int | None = None):
    """1/N + (1 − 1/N)·min(X, T_0)/T_0 with T_0 = N² unless given."""
    T0 = contexts or N * N
    return 1 / N + (1 - 1 / N) * np.minimum(memorised, T0) / T0


def associations(heads, head_dim, dim):
    """Corollary 1: H·d_h + d associations memorized, the one place this count is written."""
    return np.asarray(heads) * np.asarray(head_dim) + np.asarray(dim)


def our_bound(heads, head_dim, dim, N: int):
    """min(1, 1/N + (1 − 1/N)(H·d_h + d)/N²)."""
    return phi(associations(heads, head_dim, dim), N)


def previous_bound(heads, head_dim, N: int):
    """min(1, 1/N + (1 − 1/N)(H(d_h − 1) + 1)/N²): MLT's bound with context size n = d_h."""
    return phi(memorization_bound(heads, head_dim, head_dim), N)


def bound_slope_per_head(head_dim, N: int):
    """d(bound)/dH before saturation: (1 − 1/N)·d_h/N²; a measured slope a memorises a·N²/(1−1/N) per head.

    Also the slope per unit of d (head_dim = 1) and the previous bound's slope per head (head_dim = d_h − 1).
    """
    return (1 - 1 / N) * head_dim / N ** 2


def contexts_per_unit(slope, N: int):
    """Contexts memorised per unit of x that an accuracy slope stands for: slope·N²/(1 − 1/N)."""
    return slope * N ** 2 / (1 - 1 / N)


def min_heads(contexts: int, dim: int, head_dim: int) -> int:
    """H_min = ⌈(T − d)/d_h⌉ heads to memorise T contexts (Theorem 1)."""
    return max(0, -(-(contexts - dim) // head_dim))
