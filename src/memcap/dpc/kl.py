"""DPC's KL theory in computable form (DPC §3, §6): KL of explicit low-rank encoders next to bounds.

d_KL(π, f) = E_{t∼π} KL(π_t ‖ softmax f(t)) for a logit map f on contexts t. Three parts:
  prop3   Prop 3's circle construction for look-up tables (d = 2): W_j = (cos 2πj/N, sin 2πj/N),
          E(t) = λ·W_g(t); d_KL = log(1 + Σ_{k≠0} exp(−λ(1 − cos 2πk/N))) → 0 as λ → ∞.
  thm2    Theorem 2 for near-look-up π (mass δ moved off g(t)): the JL-type encoder
          f(t) = λ(t)·Wᵀ W_g(t) with λ(t) matching the entropy of π_t, its true KL, and the full and
          simplified bounds (valid when C = sqrt(32 log(N+1)/d) < 1/2).
  lsq     The slides' least squares (truncated SVD of the row-centred log-probability matrix) vs
          weighted least squares (rows weighted by √π(t)) rank-d fits, their true KL and bounds.
          [R] choices: ‖π‖∞ / ‖π‖−∞ are the max / min of the joint π(t, y); σ_{d+1} is that of the
          matrix each method factorises (centred L for LS, diag(√π)·centred L for WLS).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def kl_of_logits(p: np.ndarray, logits: np.ndarray, prior: np.ndarray) -> float:
    """Σ_t prior_t KL(p_t ‖ softmax(logits_t)); p, logits (T, N); 0·log 0 = 0."""
    z = logits - logits.max(1, keepdims=True)
    logq = z - np.log(np.exp(z).sum(1, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1)) - logq), 0.0)
    return float(prior @ terms.sum(1))


# --- Prop 3 -----------------------------------------------------------------------------------------

def circle_kl(N: int, lam: float) -> float:
    """Closed form: log(1 + Σ_{k=1}^{N−1} exp(−λ(1 − cos 2πk/N))), the same for every context."""
    k = np.arange(1, N)
    return float(np.log1p(np.exp(-lam * (1 - np.cos(2 * np.pi * k / N))).sum()))


def circle_construction_kl(table: np.ndarray, N: int, lam: float) -> float:
    """KL of the explicit rank-2 encoder on a look-up table g into [N] (uniform prior on contexts)."""
    angles = 2 * np.pi * np.arange(N) / N
    W = np.stack([np.cos(angles), np.sin(angles)], 1)                        # (N, 2) unembedding rows
    g = table.reshape(-1)
    logits = lam * W[g] @ W.T                                                 # (T, N): f(t) = W·λW_g(t)
    p = np.eye(N)[g]
    return kl_of_logits(p, logits, np.full(len(g), 1 / len(g)))


def prop3_table(Ns: list[int], lambdas: list[float], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for N in Ns:
        table = rng.integers(N, size=(N, N))
        for lam in lambdas:
            rows.append({"part": "prop3", "N": N, "dim": 2, "lam": float(lam), "method": "circle",
                         "kl": circle_construction_kl(table, N, lam), "kl_closed_form": circle_kl(N, lam)})
    return pd.DataFrame(rows)


# --- Theorem 2 --------------------------------------------------------------------------------------

def jl_constant(N: int, dim: int) -> float:
    """C = sqrt(32 log(N+1)/d); Theorem 2 needs C < 1/2."""
    return math.sqrt(32 * math.log(N + 1) / dim)


def solve_lambda(entropy: float, gaps: np.ndarray, lam_max: float = 1e4) -> float:
    """λ with log Σ_j exp(λ·gaps_j) = entropy (gaps_g = 0, others < 0); decreasing in λ, bisection."""
    f = lambda lam: np.logaddexp.reduce(lam * gaps) - entropy   # noqa: E731
    if f(lam_max) >= 0:
        return lam_max                                           # entropy ~ 0: the limit λ → ∞
    lo, hi = 0.0, lam_max
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


def near_lookup(N: int, delta: float, rng: np.random.Generator, contexts: int) -> tuple[np.ndarray, np.ndarray]:
    """π_t = (1 − δ)·onehot(g(t)) + δ·q_t, q_t ~ Dirichlet(1) on the N − 1 other tokens. -> (p, g)."""
    g = rng.integers(N, size=contexts)
    q = rng.dirichlet(np.ones(N - 1), size=contexts)
    p = np.zeros((contexts, N))
    others = np.array([np.delete(np.arange(N), gi) for gi in g])
    np.put_along_axis(p, others, delta * q, 1)
    p[np.arange(contexts), g] = 1 - delta
    return p, g


def thm2_bounds(p: np.ndarray, g: np.ndarray, C: float) -> tuple[float, float]:
    """(full, simplified) bounds of Theorem 2 for a uniform prior; 0·∞ := 0 when the entropy is 0."""
    T, N = p.shape
    ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)).sum(1)    # usual entropy, nats
    off = 1 - p[np.arange(T), g]                                             # π(y ≠ g(t) | t)
    with np.errstate(divide="ignore", invalid="ignore"):
        logterm = np.log((N - 1) / np.expm1(ent))
        tilde = np.where(off[:, None] > 0, p / np.where(off > 0, off, 1)[:, None], 0)
        tilde[np.arange(T), g] = 0
        u = np.full((T, N), 1 / (N - 1))
        u[np.arange(T), g] = 0
        tv = 0.5 * np.abs(tilde - u).sum(1)
        full = np.where(off > 0, off * logterm * (1 + 2 * C + C * tv) / (1 - 2 * C), 0.0)
        mean_ent = ent.mean()
        simple = off.mean() * np.log((N - 1) / np.expm1(mean_ent)) * (1 + 4 * C) / (1 - 2 * C) \
            if off.mean() > 0 else 0.0
    return float(full.mean()), float(simple)


def thm2_table(N: int, dim: int, deltas: list[float], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((dim, N))
    W /= np.linalg.norm(W, axis=0, keepdims=True)                           # unit columns W_j
    gram = W.T @ W
    c_emp = float(np.abs(gram - np.eye(N)).max())
    c_jl = jl_constant(N, dim)
    rows = []
    for delta in deltas:
        p, g = near_lookup(N, delta, rng, N * N)
        ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)).sum(1)
        lam = np.array([solve_lambda(e, gram[gi] - gram[gi, gi]) for e, gi in zip(ent, g)])
        logits = lam[:, None] * gram[g]                                      # f(t) = λ(t)·WᵀW_g(t)
        kl = kl_of_logits(p, logits, np.full(len(g), 1 / len(g)))
        for cname, C in (("jl", c_jl), ("empirical", c_emp)):
            full, simple = thm2_bounds(p, g, C) if C < 0.5 else (float("nan"), float("nan"))
            rows.append({"part": "thm2", "N": N, "dim": dim, "delta": float(delta), "method": f"C_{cname}",
                         "C": C, "kl": kl, "bound": full, "bound_simplified": simple,
                         "note": "d >= N-1: inf over L is 0 (Prop 2); kl is that of the Thm 2 encoder"})
    return pd.DataFrame(rows)


# --- least squares vs weighted least squares (slides) ------------------------------------------------

def _rank_d(M: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    return (U[:, :d] * s[:d]) @ Vt[:d], s


def lsq_table(N: int, contexts: int, draws: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for draw in range(draws):
        prior = rng.dirichlet(np.ones(contexts))                             # π(t), non-uniform
        p = rng.dirichlet(np.ones(N), size=contexts)                         # π(·|t), full support (A2)
        L = np.log(p)
        Lc = L - L.mean(1, keepdims=True)                                    # softmax ignores row shifts
        joint = prior[:, None] * p
        pmax, pmin = joint.max(), joint.min()
        sw = np.sqrt(prior)[:, None]
        for d in range(1, N):
            f_ls, s_ls = _rank_d(Lc, d)
            g_w, s_w = _rank_d(sw * Lc, d)
            f_wls = g_w / sw
            sig_ls, sig_w = (s_ls[d] if d < len(s_ls) else 0.0), (s_w[d] if d < len(s_w) else 0.0)
            rows.append({"part": "lsq", "N": N, "dim": d, "draw": draw, "method": "least_squares",
                         "kl": kl_of_logits(p, f_ls, prior), "sigma": sig_ls,
                         "bound": N * pmax ** 2 * sig_ls ** 2 + (N * pmax) ** 1.5 * sig_ls ** 3})
            rows.append({"part": "lsq", "N": N, "dim": d, "draw": draw, "method": "weighted_least_squares",
                         "kl": kl_of_logits(p, f_wls, prior), "sigma": sig_w,
                         "bound": pmax * sig_w ** 2 + (pmax / pmin) ** 1.5 * sig_w ** 3})
    return pd.DataFrame(rows)


def kl_table(t: dict) -> pd.DataFrame:
    """All three parts from the preset's `theory` block, one long table (tables/kl.parquet)."""
    return pd.concat([prop3_table(t["prop3_N"], t["prop3_lambdas"], t["seed"]),
                      thm2_table(t["thm2_N"], t["thm2_dim"], t["thm2_deltas"], t["seed"]),
                      lsq_table(t["lsq_N"], t["lsq_contexts"], t["lsq_draws"], t["seed"])], ignore_index=True)
