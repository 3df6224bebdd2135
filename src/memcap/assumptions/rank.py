"""The assumption checks (docs/method.md, "MLT: Assumption checks") as batched linear algebra.

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
Every subset's Gram is gathered from the one T×T Gram of the vectors when it fits the memory budget.

Kruskal sampling uses *nested* subsets: trial i draws one random permutation of the T vectors and the
k-subset is its first k entries. Adding a row can only shrink σ_min and grow σ_max (interlacing) while
the tolerance factor max(k, d) = d stays fixed for k <= d, so each trial's full-rank outcome is
monotone in k, the fraction is exactly non-increasing in k, and a bisection over k finds the same
estimated Kruskal rank as a full scan with the same trials (at log2(d) evaluations instead of d).
Monotone per trial also means an outcome decides others: a subset full rank at k is full rank below k,
one deficient at k is deficient above. The sampler keeps, per trial, the range of k still undecided and
computes only those trials at each k; the Kruskal-rank search and the Fig 1 grid visit k by bisection,
so each trial is factorized at a handful of k however many the checks and the figure ask for.
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

    Same decision as `batched_rank(X) == k`, 5-6x cheaper (see `full_rank_from_gram`).
    """
    B, k, d = X.shape
    assert k <= d, "full rank of k rows needs k <= d"
    out = torch.empty(B, dtype=torch.bool, device=X.device)
    step = _chunk(k, d, budget_mb)
    for s in range(0, B, step):
        x = X[s:s + step].double()
        out[s:s + step] = full_rank_from_gram(x @ x.mT, d)
    return out


EPS64 = torch.finfo(torch.float64).eps


def lambda_max_bounds(gram: torch.Tensor, start: torch.Tensor | None = None,
                      iters: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """(low, high) bounds on λ_max of each PSD matrix of gram (B, k, k), float64.

    Power iteration from `start` (B, k) (default: the ones vector) gives the Rayleigh quotient ρ <= λ_max
    and the residual
    r = ||G v - ρ v||. Kato–Temple: if every other eigenvalue is <= a < ρ, then λ_max <= ρ + r²/(ρ - a); for
    a PSD matrix λ_2 <= trace - ρ and λ_2² <= ||G||_F² - ρ², so a = the smaller of the two. Features with
    a dominant direction (a shared mean: every layer here) get bounds equal to ~1e-10 after ten
    iterations (three from a start near the top eigenvector); otherwise the Frobenius norm is the upper
    bound.
    """
    v = (gram.sum(-1, keepdim=True) if start is None else start[..., None].to(gram.dtype)) + 1e-300
    for _ in range(iters):
        v = gram @ (v / v.norm(dim=1, keepdim=True))
    v = v / v.norm(dim=1, keepdim=True)
    w = gram @ v
    rho = (v * w).sum((1, 2))
    r2 = ((w - rho[:, None, None] * v) ** 2).sum((1, 2))
    diag = gram.diagonal(dim1=-2, dim2=-1)
    fro2 = torch.linalg.vector_norm(gram, dim=(1, 2)) ** 2
    a = torch.minimum(diag.sum(-1) - rho, (fro2 - rho * rho).clamp_min(0).sqrt())
    fro = fro2.sqrt()
    high = torch.where(rho > a, torch.minimum(rho + r2 / (rho - a).clamp_min(1e-300), fro), fro)
    return torch.maximum(rho, diag.amax(-1)), high


def _positive_definite(gram: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Is gram_i - shift_i·I positive definite? One batched Cholesky, which stops at its first non-positive
    pivot (a deficient matrix is cheap). The diagonal is shifted in place and restored."""
    diag = gram.diagonal(dim1=-2, dim2=-1)
    diag -= shift[:, None]
    ok = torch.linalg.cholesky_ex(gram).info == 0
    diag += shift[:, None]
    return ok


def full_rank_from_gram(gram: torch.Tensor, d: int, start: torch.Tensor | None = None) -> torch.Tensor:
    """Full-rank decision of each k×d matrix X from its float64 Gram X Xᵀ (B, k, k), k <= d -> (B,) bool.

    Full rank <=> λ_min(G) > tol², tol = σ_max·d·ε, i.e. G - tol²·I is positive definite, which one batched
    Cholesky tells. λ_max = σ_max² is bracketed (`lambda_max_bounds`). Where the bracket is narrower than
    the Cholesky's own resolution (its backward error, ~k·ε64·λ_max, is what decides a λ_min that close to
    the tolerance anyway) one Cholesky at the upper tolerance decides. Elsewhere a failure with the lower
    tolerance is certain (deficient), a success with the upper one certain (full rank), and the rare
    matrices in between get eigvalsh (matrix_rank's rule). `gram` is used as scratch and restored.
    `start` (B, k): a guess of each top eigenvector (power iteration starts there, 3 steps instead of 10).
    """
    k = gram.shape[-1]
    factor = (max(k, d) * EPS32) ** 2
    lam_lo, lam_hi = lambda_max_bounds(gram, start, 10 if start is None else 3)
    tight = factor * (lam_hi - lam_lo) <= k * EPS64 * lam_hi
    out = torch.zeros(gram.shape[0], dtype=torch.bool, device=gram.device)
    if bool(tight.all()):
        return _positive_definite(gram, factor * lam_hi)
    one = tight.nonzero().flatten()
    if len(one):
        out[one] = _positive_definite(gram[one], factor * lam_hi[one])
    loose = (~tight).nonzero().flatten()
    if len(loose):
        g = gram[loose]
        maybe = _positive_definite(g, factor * lam_lo[loose])
        idx = maybe.nonzero().flatten()
        if len(idx):
            sure = _positive_definite(g[idx], factor * lam_hi[loose[idx]])
            out[loose[idx[sure]]] = True
            unsure = loose[idx[~sure]]
            if len(unsure):                                       # σ_min within the bracket: exact rule
                sigma = torch.linalg.eigvalsh(gram[unsure]).clamp_min(0).sqrt()
                out[unsure] = (sigma > sigma[:, -1:] * max(k, d) * EPS32).sum(-1) == k
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
    _cache: dict = field(default_factory=dict, repr=False)    # the Gram of the vectors; per-trial bounds

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

    def gram(self) -> torch.Tensor | None:
        """V Vᵀ in float64 (T, T), computed once, when it fits in budget_mb: every k-subset's Gram is then a
        gather of it instead of a (k, d) @ (d, k) product per subset. None when T is too large."""
        T = self.vectors.shape[0]
        if "gram" not in self._cache:
            v = self.vectors.double()
            self._cache["gram"] = v @ v.T if T * T * 8 <= self.budget_mb * 2**20 / 2 else None
        return self._cache["gram"]

    def _bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per trial, what is known (monotone in k, module doc): its k-subsets are full rank for k <= low
        and deficient for k >= high. (trials,) int64 each, on the CPU."""
        if "low" not in self._cache:
            self._cache["low"] = torch.zeros(self.trials, dtype=torch.long)
            self._cache["high"] = torch.full((self.trials,), self.max_k + 1, dtype=torch.long)
        return self._cache["low"], self._cache["high"]

    def top_direction(self) -> torch.Tensor:
        """Each vector's coordinate on the top right singular vector of V (T,): cut to a subset, it is close
        to the top eigenvector of the subset's Gram (a shared mean dominates), a warm start for λ_max."""
        if "top" not in self._cache:
            v = self.vectors.double()
            _, vecs = torch.linalg.eigh(v.T @ v)
            self._cache["top"] = v @ vecs[:, -1]
        return self._cache["top"]

    def _decide(self, k: int, rows: torch.Tensor) -> torch.Tensor:
        """Full rank of the k-subsets of trials `rows` (linear algebra): bool (len(rows),) on the CPU."""
        T, d = self.vectors.shape
        G = self.gram()
        step = _chunk(k, d, self.budget_mb)
        out = []
        for s in range(0, len(rows), step):                          # gather per chunk: bounded memory
            p = self.perms[rows[s:s + step].to(self.perms.device), :k]
            if G is not None:
                q = p.int()
                flat = (q[:, :, None] * T + q[:, None, :]).flatten()   # one index_select: the fastest gather
                gram = G.view(-1).index_select(0, flat).view(len(p), k, k)
                out.append(full_rank_from_gram(gram, d, self.top_direction()[p]).cpu())   # (b, k, k)
            else:
                out.append(batched_full_rank(self.vectors[p], self.budget_mb).cpu())      # (b, k, d)
        return torch.cat(out) if out else torch.zeros(0, dtype=torch.bool)

    def _record(self, k: int, rows: torch.Tensor) -> None:
        """Compute trials `rows` at k and record what it tells (full: up to k; deficient: from k on)."""
        low, high = self._bounds()
        full = self._decide(k, rows)
        low[rows[full]] = k
        high[rows[~full]] = k

    def full_rank(self, k: int) -> torch.Tensor:
        """(trials,) bool: is trial i's k-subset linearly independent?

        Only the trials whose outcome at k does not follow from earlier ones are computed. Once anything is
        known, a large k is reached by a ladder (each rung 3/4 of the next, down to k = 64): a subset
        deficient at a rung is deficient at k, so a trial that breaks early never gathers a large Gram block.
        """
        if k > self.max_k:
            return torch.zeros(self.trials, dtype=torch.bool)
        low, high = self._bounds()
        rung = 3 * k // 4
        known = bool((low > 0).any() or (high <= self.max_k).any())
        if rung >= 64 and known and bool(((low < rung) & (rung < high)).any()):
            self.full_rank(rung)
        todo = ((low < k) & (k < high)).nonzero().flatten()
        if len(todo):
            self._record(k, todo)
        return low >= k

    def reaches(self, k: int, threshold: float) -> bool:
        """fraction(k) >= threshold? Decided as soon as the trials computed settle it (the Kruskal-rank
        search needs no more): above the estimated rank a few dozen failures suffice."""
        if k in self._hits:
            return self._hits[k] / self.trials >= threshold
        if k > self.max_k:
            return threshold <= 0
        low, high = self._bounds()
        step = _chunk(k, self.vectors.shape[1], self.budget_mb)
        while True:
            full, deficient = int((low >= k).sum()), int((high <= k).sum())
            if full / self.trials >= threshold:
                return True
            if (self.trials - deficient) / self.trials < threshold:
                return False
            todo = ((low < k) & (k < high)).nonzero().flatten()[:step]
            self._record(k, todo)

    def fraction(self, k: int) -> tuple[float, int]:
        """(fraction of full-rank k-subsets, their count)."""
        if k not in self._hits:
            self._hits[k] = int(self.full_rank(k).sum())
        return self._hits[k] / self.trials, self._hits[k]

    def fractions(self, ks: list[int]) -> list[tuple[float, int]]:
        """fraction(k) for every k of a curve (Fig 1), the k grid visited by bisection: after its ends and
        middle, each trial is undecided in one half only, so every trial is computed at about log2(len(ks))
        values of k instead of all of them. Same numbers as evaluating every k."""
        ks = sorted(set(ks))

        def fill(lo: int, hi: int) -> None:
            if hi - lo > 1:
                mid = (lo + hi) // 2
                self.fraction(ks[mid])
                fill(lo, mid)
                fill(mid, hi)

        if ks:
            self.fraction(ks[0])
            self.fraction(ks[-1])
            fill(0, len(ks) - 1)
        return [self.fraction(k) for k in ks]

    def estimate_kruskal_rank(self, threshold: float = 0.99) -> tuple[int, int]:
        """Largest k in [0, max_k] with fraction(k) >= threshold, by bisection; returns (k, evaluations).

        Exact w.r.t. a full scan on the same trials because fraction(k) is non-increasing (see module doc);
        each probe computes only the trials that decide it (`reaches`).
        """
        lo, hi, evals = 0, self.max_k, 1                           # invariant: fraction(lo) >= thr (k=0 trivially)
        if self.reaches(hi, threshold):
            return hi, evals
        while hi - lo > 1:                                          # fraction(hi) < thr
            mid = (lo + hi) // 2
            evals += 1
            if self.reaches(mid, threshold):
                lo = mid
            else:
                hi = mid
        return lo, evals
