"""The checks of spec mahdavi.md §4.1 as batched linear algebra.

Definitions [P]: the Kruskal rank of a set of vectors is the largest k such that every k-subset is
linearly independent; General Position (GP) means it is min(#vectors, d). Asm 1: the T query vectors
have Kruskal rank >= n. Asm 2: every context E^(t) has rank n. Asm 3: x^(t) = e^(t) + mean_i E_i^(t)
has Kruskal rank >= n.

Rank follows `torch.linalg.matrix_rank`'s default rule for float32 features: a singular value counts
when σ_i > σ_max · max(rows, d) · ε_float32. We evaluate it through the Gram matrix in float64
(eigvalsh of X Xᵀ gives σ² with absolute error ~1e-16·σ_max², far below the float32 tolerance), which
is 2-3x faster than a batched float32 SVD and decides the same ranks.

Kruskal sampling only needs "is this k-subset of rank k?", which a Cholesky of G - tol²·I answers
(`batched_full_rank`), with eigvalsh only for the rare subsets whose σ_min is within the bracket of σ_max.

Kruskal sampling uses *nested* subsets: trial i draws one random permutation of the T vectors and the
k-subset is its first k entries. Adding a row can only shrink σ_min and grow σ_max (interlacing) while
the tolerance factor max(k, d) = d stays fixed for k <= d, so each trial's full-rank outcome is
monotone in k, the fraction is exactly non-increasing in k, and a bisection over k finds the same
estimated Kruskal rank as a full scan with the same trials (at log2(d) evaluations instead of d).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

EPS32 = torch.finfo(torch.float32).eps


def _chunk(rows: int, d: int, budget_mb: float) -> int:
    """Matrices per linear-algebra call so that the float64 copies stay under budget_mb."""
    per = rows * (d + rows) * 8 * 2
    return max(1, int(budget_mb * 2**20 // per))


def batched_rank(X: torch.Tensor, budget_mb: float = 512) -> torch.Tensor:
    """Numerical rank of each matrix of X (B, r, d), matrix_rank's float32 rule; returns (B,) int64."""
    B, r, d = X.shape
    out = torch.empty(B, dtype=torch.int64, device=X.device)
    step = _chunk(r, d, budget_mb)
    for s in range(0, B, step):
        x = X[s:s + step].double()
        # Gram of the smaller side: rank(X) = rank(X Xᵀ) = rank(Xᵀ X)
        gram = x @ x.mT if r <= d else x.mT @ x                     # (b, m, m), m = min(r, d)
        lam = torch.linalg.eigvalsh(gram).clamp_min(0)               # (b, m) ascending, = σ²
        sigma = lam.sqrt()
        tol = sigma[:, -1:] * max(r, d) * EPS32                      # (b, 1)
        out[s:s + step] = (sigma > tol).sum(-1)
    return out


def batched_full_rank(X: torch.Tensor, budget_mb: float = 512) -> torch.Tensor:
    """Is each matrix of X (B, k, d), k <= d, of rank k under matrix_rank's float32 rule? -> (B,) bool.

    Same decision as `batched_rank(X) == k`, 5-6x cheaper: full rank <=> λ_min(G) > tol², tol = σ_max·d·ε,
    i.e. G - tol²·I is positive definite, which one batched Cholesky tells. σ_max is bracketed
    (max diag and a Rayleigh quotient below, the Frobenius norm above), so a success with the upper
    tolerance or a failure with the lower one is certain; the rare matrices in between get eigvalsh.
    """
    B, k, d = X.shape
    assert k <= d, "full rank of k rows needs k <= d"
    out = torch.empty(B, dtype=torch.bool, device=X.device)
    step = _chunk(k, d, budget_mb)
    factor = (d * EPS32) ** 2
    for s in range(0, B, step):
        x = X[s:s + step].double()
        gram = x @ x.mT                                               # (b, k, k) = σ² spectrum
        eye = torch.eye(k, dtype=gram.dtype, device=gram.device)
        v = gram.sum(-1, keepdim=True) + 1e-300                       # power iterations from the ones vector
        for _ in range(2):
            v = gram @ (v / v.norm(dim=1, keepdim=True))
        v = v / v.norm(dim=1, keepdim=True)
        lam_lo = torch.maximum((v.mT @ gram @ v)[:, 0, 0], gram.diagonal(dim1=-2, dim2=-1).amax(-1))
        lam_hi = gram.flatten(1).norm(dim=1)                          # ||G||_F >= λ_max
        sure = torch.linalg.cholesky_ex(gram - (factor * lam_hi)[:, None, None] * eye).info == 0
        maybe = torch.linalg.cholesky_ex(gram - (factor * lam_lo)[:, None, None] * eye).info == 0
        res = sure.clone()
        unsure = maybe & ~sure
        if unsure.any():
            res[unsure] = batched_rank(X[s:s + step][unsure], budget_mb) == k
        out[s:s + step] = res
    return out


def rank_context(tokens: torch.Tensor, budget_mb: float = 512) -> torch.Tensor:
    """Asm 2: rank of every example's token matrix, tokens (T, n, d) -> (T,) ranks."""
    return batched_rank(tokens, budget_mb)


def asm3_vectors(tokens: torch.Tensor, query_index: int) -> torch.Tensor:
    """Asm 3's x^(t) = e^(t) + (1/n) Σ_i E_i^(t); tokens (T, n, d) -> (T, d). The query is a row of E."""
    return tokens[:, query_index] + tokens.mean(1)


@dataclass
class KruskalSampler:
    """Nested random subsets of the rows of V (T, d): trial i's k-subset = first k of permutation i."""

    vectors: torch.Tensor          # (T, d) the query vector of every example
    perms: torch.Tensor            # (trials, kmax) row indices, each row a prefix of a random permutation
    budget_mb: float = 512
    _hits: dict = field(default_factory=dict, repr=False)     # k -> full-rank count (search, checks, Fig 1 share)

    @classmethod
    def draw(cls, vectors: torch.Tensor, trials: int, seed: int, kmax: int | None = None,
             budget_mb: float = 512) -> "KruskalSampler":
        T, d = vectors.shape
        kmax = min(kmax or T, T)
        g = torch.Generator().manual_seed(int(seed))
        # argsort of uniform noise = one uniform random permutation per trial, drawn in one call
        perms = torch.rand(trials, T, generator=g).argsort(1)[:, :kmax]
        return cls(vectors, perms.to(vectors.device), budget_mb)

    @property
    def trials(self) -> int:
        return self.perms.shape[0]

    @property
    def max_k(self) -> int:
        """Largest k a subset can have: min(T, d) (beyond d every subset is dependent)."""
        return min(self.perms.shape[1], self.vectors.shape[1])

    def full_rank(self, k: int) -> torch.Tensor:
        """(trials,) bool: is trial i's k-subset linearly independent?"""
        if k > self.vectors.shape[1]:
            return torch.zeros(self.trials, dtype=torch.bool)
        d = self.vectors.shape[1]
        step = _chunk(k, d, self.budget_mb)
        out = []
        for s in range(0, self.trials, step):                       # gather per chunk: bounded memory
            sub = self.vectors[self.perms[s:s + step, :k]]           # (b, k, d)
            out.append(batched_full_rank(sub, self.budget_mb))
        return torch.cat(out).cpu()

    def fraction(self, k: int) -> tuple[float, int]:
        """(fraction of full-rank k-subsets, their count)."""
        if k not in self._hits:
            # Monotone in k (module doc): a known 0 at some k' <= k, or a known `trials` at k' >= k, decides k.
            if any(h == 0 for kk, h in self._hits.items() if kk <= k):
                self._hits[k] = 0
            elif any(h == self.trials for kk, h in self._hits.items() if kk >= k):
                self._hits[k] = self.trials
            else:
                self._hits[k] = int(self.full_rank(k).sum())
        return self._hits[k] / self.trials, self._hits[k]

    def estimate_kruskal_rank(self, threshold: float = 0.99) -> tuple[int, int]:
        """Largest k in [0, max_k] with fraction(k) >= threshold, by bisection; returns (k, evaluations).

        Exact w.r.t. a full scan on the same trials because fraction(k) is non-increasing (see module doc).
        """
        lo, hi, evals = 0, self.max_k, 0                           # invariant: fraction(lo) >= thr (k=0 trivially)
        evals += 1
        if self.fraction(hi)[0] >= threshold:
            return hi, evals
        while hi - lo > 1:                                          # fraction(hi) < thr
            mid = (lo + hi) // 2
            evals += 1
            if self.fraction(mid)[0] >= threshold:
                lo = mid
            else:
                hi = mid
        return lo, evals
