"""The theory family's grids, from its preset (torch-free): which cases each experiment runs."""

from __future__ import annotations

import itertools

# The one source of H(min(n, d_h) − 1) + 1; numpy only, imports nothing else from memcap.
from memcap.bounds import memorization_bound

FAMILY = "theory"


def construct_cases(p: dict) -> list[dict]:
    """Grid points of the construction experiment: n < d and d_h ≤ d (Theorem 1's setting)."""
    g = p["construct"]
    return [dict(input_dim=d, context_size=n, head_dim=dh, heads=H, context=ctx, seed=s)
            for d, n, dh, H, ctx, s in itertools.product(g["input_dims"], g["context_sizes"], g["head_dims"],
                                                         g["heads"], g["contexts"], p["seeds"])
            if n < d and dh <= d]


def gd_cases(p: dict) -> list[dict]:
    """Training runs of the gradient-descent comparison: one per (H, T), T = factor × H(r−1)+1."""
    g = p["gradient_descent"]
    d, n = g["input_dim"], g["context_size"]
    dh = g["head_dim"] or d                                             # null = d
    cases = []
    for H in g["heads"]:
        bound = memorization_bound(H, n, dh)
        for factor in g["dataset_size_factors"]:
            cases.append(dict(heads=H, input_dim=d, context_size=n, head_dim=dh, context=g["context"],
                              dataset_size=max(1, round(factor * bound)), dataset_size_factor=factor,
                              bound=bound, tolerance=g["tolerance"]))
    return cases


def gd_settings(g: dict) -> dict:
    """A preset's `gradient_descent` block as the MLT trainer's estimates read it (regression, one output)."""
    return {**g, "task": "regression", "num_classes": 1}
