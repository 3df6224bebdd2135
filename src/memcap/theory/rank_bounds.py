"""Upper bounds on rank(Z), MLT Props 2 and 5 (MLT §4.2, App. E, App. I), for any attention weights.

Prop 2 (shared context E for every example): Z = Λ (I_H ⊗ E) with Λ = [Λ_1 … Λ_H] row-stochastic
blocks, and Λ_1 1 = Λ_h 1 puts H−1 vectors in Λ's null space, so rank(Z) ≤ H(n−1)+1.
Prop 5 (every token's entries sum to one constant c): 1ᵀ z_h = c for every head, so the H−1 vectors
[1_d; −1_d; 0 …] lie in Z's null space and rank(Z) ≤ H(d−1)+1, below the naive H·d.

Z is computed here for three kinds of weights: random Gaussian W_KQ (theory features), a trained
`MLTAttention` (its own embedding, PE and scaled softmax), and CONSTRUCT's weights.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from memcap.models.mlt_attention import MLTAttention
from memcap.theory import features as F
from memcap.bounds import memorization_bound


def prop2_bound(heads: int, context_size: int) -> int:
    """H(n−1)+1: rank(Z) for a shared context, whatever the weights and the queries (r = n)."""
    return memorization_bound(heads, context_size, context_size)


def prop5_bound(heads: int, input_dim: int) -> int:
    """H(d−1)+1: rank(Z) when every token's entries sum to the same constant (r = d)."""
    return memorization_bound(heads, input_dim, input_dim)


def random_weights(heads: int, input_dim: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """W_KQ^h with iid N(0, scale²/d) entries: (H, d, d). Large scales saturate the softmax."""
    return rng.standard_normal((heads, input_dim, input_dim)) * (scale / np.sqrt(input_dim))


def constant_sum_tokens(shape: tuple[int, ...], token_sum: float, rng: np.random.Generator) -> np.ndarray:
    """U(0,1) rows rescaled so that each row (token) sums to token_sum: Prop 5's data."""
    x = rng.uniform(size=shape) + 1e-3                                  # positive, so the rescale is safe
    return x * (token_sum / x.sum(-1, keepdims=True))


@torch.no_grad()
def model_features(model: MLTAttention, queries: torch.Tensor, contexts: torch.Tensor) -> np.ndarray:
    """Z of a trained MLTAttention on raw rows, in float64: (M, T, H, d).

    The theory's tokens are the model's embedded rows (embedding + PE), and α_h its attention
    weights (with its 1/√d), so z_h = E_embᵀ α_h. A float64 copy keeps float32 noise out of the rank.
    """
    m = copy.deepcopy(model).double().cpu()
    q, c = queries.double().cpu(), contexts.double().cpu()
    alpha = m.attention(q, c)                                           # (M, T, H, n)
    ctx = m.embed(c, slice(1, m.context_size + 1))                      # (M, n, d) | (M, T, n, d)
    eq = "mthn,mnd->mthd" if ctx.dim() == 3 else "mthn,mtnd->mthd"
    return torch.einsum(eq, alpha, ctx).numpy()


def random_weight_rank(contexts: np.ndarray, queries: np.ndarray, heads: int, scale: float,
                       rng: np.random.Generator, rtol: float = F.RANK_RTOL) -> int:
    """rank(Z) for one draw of random weights on the given tokens."""
    return F.numerical_rank(F.features(contexts, queries, random_weights(heads, queries.shape[1], scale, rng)), rtol)
