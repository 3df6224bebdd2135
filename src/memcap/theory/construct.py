"""CONSTRUCT: the constructive memorizer of MLT Theorem 1 / Prop 1 (MLT §4.1, App. B).

Given T ≤ H(r−1)+1 examples (contexts E^(t) ∈ R^{n×d}, queries e^(t) ∈ R^d), r = min(n, d_h), and any
labels y ∈ R^{T×d_out}, build per-head W_KQ^h = W_K^h (W_Q^h)^T of rank ≤ d_h such that the features
Z of eq (7) have full row rank T; then the min-norm readout ω = Z^+ y fits every label exactly.

    head 1:  examples G_1 (r of them); attention targets α ~ Dirichlet(1_n); W^1 = FIT-HEAD(G_1, α)
    head h:  new examples S = G_h (r−1 of them), old ones O = G_1 ∪ … ∪ G_{h−1}
             W^h(c) = FIT-HEAD(S, α) + c·v w^T, where w ⟂ every new query, so the new examples
             see exactly α whatever c, while each old example's softmax tends (c → ∞) to one-hot
             on the token where (w^T e)·E v is largest (Lemmas 3–4); c is doubled from 1 until
             rank Z[O ∪ S, heads 1..h] = |O| + |S|, or set by the certified Weyl bound (§5.4 5b).

Logits here are E W_KQ e with no temperature (the theory's convention); `mlt_weights` maps the
result onto `MLTAttention`, whose 1/√d scaling is absorbed into W_K and W_Q. float64 throughout.
The non-constructive steps of the proof become random draws plus explicit checks, and a violated
assumption raises `AssumptionError` naming the examples involved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from memcap.theory import features as F
from memcap.bounds import memorization_bound

C_MAX = 2.0 ** 40        # doubling gives up here: the limit block is then numerically degenerate
C_RULES = ("doubling", "certified")


EPS64 = float(np.finfo(np.float64).eps)


def rounding_bound(T: int, cond: float, y) -> float:
    """The largest max|Zω − y| float64 rounding explains for a T-row system Z of condition number cond.

    A backward-stable least-squares solve returns the exact ω of a perturbed Z + δZ, ‖δZ‖ <= c·T·ε·‖Z‖,
    so its residual is ‖δZ ω‖ <= c·T·ε·‖Z‖·‖ω‖ <= c·T·ε·cond(Z)·‖y‖ (‖ω‖ <= ‖y‖/σ_min); recomputing Z
    through the model's forward pass perturbs it the same way. With c = 1: on the paper grid every case
    lies within a quarter of this bound, the worst-conditioned (cond 4e6, residual 3e-9 to 3e-8: rounding, so it varies with the BLAS) within 0.005, while a
    fixed 1e-8 judged that exact case not exact.
    """
    return float(T * EPS64 * cond * np.linalg.norm(np.asarray(y, np.float64)))


def exact(rank: int, T: int, residual: float, bound: float) -> bool:
    """The construction memorizes exactly: full rank T and a residual rounding explains."""
    return bool(rank == T and residual <= bound)


class AssumptionError(ValueError):
    """The data violate an assumption of Theorem 1 (n < d, Asm 1, Asm 2, distinct tokens, T ≤ bound)."""


class ConstructionError(RuntimeError):
    """The assumptions hold but a numerical step failed (ill-conditioned limit block, c too large)."""


def capacity(heads: int, context_size: int, head_dim: int) -> int:
    """H(r−1)+1 with r = min(n, d_h): the examples Theorem 1 memorizes (memcap.bounds)."""
    return memorization_bound(heads, context_size, head_dim)


def head_groups(dataset_size: int, heads: int, r: int) -> list[np.ndarray]:
    """G_1 = first r examples, G_h = the next r−1; fewer groups when T is below the bound."""
    groups, start = [], 0
    for h in range(heads):
        size = r if h == 0 else r - 1
        if start >= dataset_size or size == 0:
            break
        groups.append(np.arange(start, min(start + size, dataset_size)))
        start += size
    return groups


def _rows(contexts: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return contexts if contexts.ndim == 2 else contexts[idx]


def fit_head(contexts: np.ndarray, queries: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """FIT-HEAD (§5.3): W (d, d) of rank ≤ |S| with softmax(E^(t) W e^(t)) = α_t for every t.

    contexts (n, d) | (S, n, d); queries (S, d); alpha (S, n) in the open simplex.
    u_t = E_t^+ log α_t solves E_t u_t = log α_t (E_t has full row rank, Asm 2); W = U Q^+ maps
    each query e_t to u_t (the queries are independent, Asm 1).
    """
    ell = np.log(alpha)                                                  # (S, n) target logits
    if contexts.ndim == 2:
        gram = contexts @ contexts.T                                     # (n, n)
        u = np.linalg.solve(gram, ell.T).T @ contexts                    # (S, d)
    else:
        gram = np.einsum("snd,smd->snm", contexts, contexts)             # (S, n, n)
        u = np.einsum("sn,snd->sd", np.linalg.solve(gram, ell[..., None])[..., 0], contexts)
    # W = U (QᵀQ)^{-1} Qᵀ with Q = [e_t] (d, S): the min-norm map with W e_t = u_t.
    qtq = queries @ queries.T                                            # (S, S)
    return u.T @ np.linalg.solve(qtq, queries)                           # (d, d)


def suppressor(queries_new: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rank-one W̃ = v wᵀ with W̃ e = 0 for every new query (Lemma 3): w = projection of a Gaussian
    onto span{new queries}^⊥, v Gaussian. Returns (v, w)."""
    d = queries_new.shape[1]
    basis, _ = np.linalg.qr(queries_new.T)                               # (d, S) orthonormal
    g = rng.standard_normal(d)
    w = g - basis @ (basis.T @ g)
    return rng.standard_normal(d), w


@dataclass
class Construction:
    """Weights and diagnostics of one CONSTRUCT call (theory convention: logits E W_KQ e)."""

    w_k: np.ndarray               # (H, d, d_h)   W_K^h
    w_q: np.ndarray               # (H, d, d_h)   W_Q^h, W_KQ^h = W_K^h W_Q^hᵀ
    readout: np.ndarray           # (H, d, d_out) ω_h, the value/output/readout product of eq (8)
    z: np.ndarray                 # (T, H, d)     features of eq (7) under the factored weights
    scales: np.ndarray            # (H,)          c per head (NaN: head 1 or an unused head)
    rank: int                     # rank(Z)
    cond: float                   # cond(Z)
    residual: float               # max |Z ω − y|
    bound: int                    # H(r−1)+1
    alpha_draws: int              # Dirichlet draws used (1 per head when the first one works)
    heads_used: int
    info: dict = field(default_factory=dict)

    @property
    def w_kq(self) -> np.ndarray:
        return np.einsum("hdk,hek->hde", self.w_k, self.w_q)

    def predict(self, contexts: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """ŷ = Σ_h z_hᵀ ω_h (eq 8) on any examples: (T, d_out)."""
        z = F.features(contexts, queries, self.w_kq)
        return np.einsum("thd,hdo->to", z, self.readout)


def check_assumptions(contexts: np.ndarray, queries: np.ndarray, heads: int, head_dim: int) -> None:
    """Cheap necessary checks of Theorem 1's assumptions; raise AssumptionError with the culprit."""
    T, d = queries.shape
    n = contexts.shape[-2]
    if contexts.shape[-1] != d or (contexts.ndim == 3 and contexts.shape[0] != T):
        raise AssumptionError(f"shapes disagree: queries {queries.shape}, contexts {contexts.shape}")
    if n >= d:
        raise AssumptionError(f"Theorem 1 needs n < d; got context_size n={n}, input_dim d={d}")
    bound = capacity(heads, n, head_dim)
    if T > bound:
        raise AssumptionError(f"T={T} exceeds the capacity H(min(n, d_h)−1)+1 = {bound} "
                              f"(H={heads}, n={n}, d_h={head_dim})")
    if min(n, head_dim) < 2 and T > 1:
        raise AssumptionError(f"r = min(n, d_h) = {min(n, head_dim)}: one head memorizes a single example")
    _, first, counts = np.unique(queries, axis=0, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = first[counts > 1][0]
        same = np.flatnonzero((queries == queries[dup]).all(1))
        raise AssumptionError(f"Assumption 1 violated: duplicate queries at examples {same.tolist()}")
    ctx = contexts[None] if contexts.ndim == 2 else contexts
    s = np.linalg.svd(ctx, compute_uv=False)                             # (T|1, n)
    bad = np.flatnonzero(s[:, -1] <= F.RANK_RTOL * s[:, 0])
    if bad.size:
        raise AssumptionError(f"Assumption 2 violated: context of example(s) {bad[:5].tolist()} has rank < n={n}")


def _rank_ok(z: np.ndarray, rows: int, heads: int, rtol: float) -> bool:
    return F.numerical_rank(z[:rows, :heads], rtol) == rows


class _RankCheck:
    """Is Z[:rows, heads 1..h] of full row rank, as head h's block B changes (Dirichlet redraws, c doubling)?

    rank [A B] = rank A + rank(P⊥ B), P⊥ the projector onto col(A)^⊥: one SVD of the fixed previous
    heads A per head, then each candidate B costs a small (rows − rank A) × d SVD. A candidate that
    passes is confirmed by the full SVD, so the answer is the same as checking Z directly.
    """

    def __init__(self, z: np.ndarray, rows: int, h: int, rtol: float):
        self.z, self.rows, self.h, self.rtol = z, rows, h, rtol
        if h == 0:
            self.perp, self.scale = np.eye(rows), 0.0
        else:
            u, s, _ = np.linalg.svd(z[:rows, :h].reshape(rows, -1), full_matrices=True)
            rank = int((s > rtol * s[0]).sum()) if s.size and s[0] > 0 else 0
            self.perp, self.scale = u[:, rank:], float(s[0]) if s.size else 0.0

    def __call__(self) -> bool:
        b = self.z[:self.rows, self.h]                                   # (rows, d) head h's block
        m = self.perp.T @ b                                              # (rows − rank A, d)
        if m.shape[0] > m.shape[1]:
            return False
        if m.shape[0]:
            s = np.linalg.svd(m, compute_uv=False)
            if s[-1] <= self.rtol * max(self.scale, np.linalg.norm(b, 2)):
                return False
        return _rank_ok(self.z, self.rows, self.h + 1, self.rtol)


def _factor(w: np.ndarray, head_dim: int) -> tuple[np.ndarray, np.ndarray]:
    """W = W_K W_Qᵀ with head_dim columns each (SVD split of Σ; zero columns when rank < d_h)."""
    u, s, vt = np.linalg.svd(w)
    k = min(head_dim, s.size)
    if s.size > k and s[k] > 1e-9 * max(s[0], 1e-300):
        raise ConstructionError(f"head weight has rank > d_h={head_dim} (σ_{k + 1}/σ_1 = {s[k] / s[0]:.1e})")
    root = np.sqrt(s[:k])
    w_k, w_q = np.zeros((w.shape[0], head_dim)), np.zeros((w.shape[1], head_dim))
    w_k[:, :k], w_q[:, :k] = u[:, :k] * root, vt[:k].T * root
    return w_k, w_q


def construct(contexts: np.ndarray, queries: np.ndarray, labels: np.ndarray, heads: int, head_dim: int,
              seed: int = 0, c_rule: str = "doubling", rtol: float = F.RANK_RTOL,
              max_tries: int = 20) -> Construction:
    """CONSTRUCT (§5.4) on the theory's tokens: contexts (n, d) shared | (T, n, d), queries (T, d),
    labels (T,) or (T, d_out). Raises AssumptionError / ConstructionError when it cannot memorize."""
    if c_rule not in C_RULES:
        raise ValueError(f"c_rule must be one of {C_RULES}, got {c_rule!r}")
    contexts, queries = np.asarray(contexts, np.float64), np.asarray(queries, np.float64)
    y = np.asarray(labels, np.float64).reshape(queries.shape[0], -1)     # (T, d_out)
    check_assumptions(contexts, queries, heads, head_dim)
    T, d = queries.shape
    n = contexts.shape[-2]
    r = min(n, head_dim)
    rng = np.random.default_rng(seed)
    groups = head_groups(T, heads, r)

    w_kq = np.zeros((heads, d, d))
    z = np.zeros((T, heads, d))                                          # features under the heads built, W^1..W^h
    scales = np.full(heads, np.nan)
    draws = 0
    for h, new in enumerate(groups):
        old = np.arange(new[0])                                          # O_h = earlier groups
        ctx_new, q_new = _rows(contexts, new), queries[new]
        if np.linalg.matrix_rank(q_new) < len(new):
            raise AssumptionError(f"Assumption 1 violated: queries of examples {new.tolist()} are "
                                  f"linearly dependent (head {h + 1} must fit them independently)")
        rows = new[-1] + 1
        if h > 0:
            v, w = suppressor(q_new, rng)
            ctx_old, q_old = _rows(contexts, old), queries[old]
            we = q_old @ w                                               # (O,) wᵀ e_t, ≠ 0 under Asm 1
            if (np.abs(we) <= 1e-9 * np.linalg.norm(w) * np.linalg.norm(q_old, axis=1)).any():
                t = old[np.argmin(np.abs(we))]
                raise AssumptionError(f"Assumption 1 violated: query of example {t} lies in the span of "
                                      f"the queries of examples {new.tolist()}")
            ev = ctx_old @ v                                             # (n,) | (O, n)
            push = we[:, None] * ev                                      # (O, n) logit direction of c
            top2 = np.sort(push, axis=1)[:, -2:]
            gap = top2[:, 1] - top2[:, 0]                                # Δ_t > 0: a unique maximum
            if (gap <= 1e-12 * np.abs(push).max()).any():
                t = old[np.argmin(gap)]
                raise AssumptionError(f"context of example {t} has (numerically) repeated tokens: "
                                      f"the limit softmax is not one-hot")
            star = push.argmax(1)                                        # j*_t
            limit = ctx_old[star] if contexts.ndim == 2 else ctx_old[np.arange(len(old)), star]  # B_∞ (O, d)

        # Targets α for the new examples: Dirichlet draws until the limit matrix has full row rank.
        full_rank = _RankCheck(z, rows, h, rtol)
        for _ in range(max_tries):
            draws += 1
            alpha = rng.dirichlet(np.ones(n), size=len(new))             # (S, n)
            z[new, h] = F.head_features(ctx_new, alpha[:, None])[:, 0]
            if h > 0:
                z[old, h] = limit                                        # Z_∞ restricted to O ∪ S
            if full_rank():
                break
        else:
            raise ConstructionError(f"head {h + 1}: no Dirichlet target among {max_tries} draws gave "
                                    f"rank {rows} (the limit block is degenerate)")
        w_new = fit_head(ctx_new, q_new, alpha)
        if h == 0:
            w_kq[0] = w_new
            continue

        def features_at(c: float) -> np.ndarray:
            w_kq[h] = w_new + c * np.outer(v, w)
            return F.features(_rows(contexts, old), q_old, w_kq[h:h + 1])[:, 0]

        if c_rule == "certified":
            # Weyl: σ_min(Z(c)) ≥ σ_min(Z_∞) − ‖Z(c) − Z_∞‖ and ‖Z(c) − Z_∞‖_F ≤ √|O|·2·max‖E_j‖·(n−1)·e^{−g},
            # g = min_t (c Δ_t − 2‖E_t W_new e_t‖_∞): solve for c with a factor-2 margin.
            sigma = F.singular_values(z[:rows, :h + 1])[-1]
            norm = np.linalg.norm(_rows(contexts, old), axis=-1).max()
            need = math.log(2 * math.sqrt(len(old)) * 2 * norm * (n - 1) / sigma)
            own = 2 * np.abs(F.logits(_rows(contexts, old), q_old, w_new[None])[:, 0]).max(1)
            c = float(max(1.0, ((need + own) / gap).max()))
            z[old, h] = features_at(c)
            if not full_rank():
                raise ConstructionError(f"head {h + 1}: certified c={c:.3g} but rank check failed in float64")
        else:
            c = 1.0
            z[old, h] = features_at(c)
            while not full_rank():
                c *= 2
                if c > C_MAX:
                    raise ConstructionError(f"head {h + 1}: rank of Z[O ∪ S] stays below {rows} up to c={C_MAX:.0e}")
                z[old, h] = features_at(c)
        scales[h] = c

    # Factor every head into d_h columns and recompute Z with the factored weights (what a model runs).
    w_k = np.zeros((heads, d, head_dim))
    w_q = np.zeros((heads, d, head_dim))
    for h in range(len(groups)):
        w_k[h], w_q[h] = _factor(w_kq[h], head_dim)
    z = F.features(contexts, queries, np.einsum("hdk,hek->hde", w_k, w_q))
    zm = z.reshape(T, -1)
    rank = F.numerical_rank(zm, rtol)
    if rank < T:
        raise ConstructionError(f"rank(Z) = {rank} < T = {T} after factoring the heads")
    omega, *_ = np.linalg.lstsq(zm, y, rcond=None)                       # min-norm ω = Zᵀ(ZZᵀ)^{-1} y
    residual = float(np.abs(zm @ omega - y).max())
    return Construction(w_k=w_k, w_q=w_q, readout=omega.reshape(heads, d, -1), z=z, scales=scales,
                        rank=rank, cond=F.condition(zm), residual=residual, bound=capacity(heads, n, head_dim),
                        alpha_draws=draws, heads_used=len(groups), info={"c_rule": c_rule, "r": r})
