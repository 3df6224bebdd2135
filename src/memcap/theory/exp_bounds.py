"""Experiment (c): rank(Z) under random and constructed weights against Props 2 and 5.

Prop 2 (shared context): random W_KQ at several scales, and CONSTRUCT's weights (built on the first
H(n−1)+1 examples, then shown all T queries). Prop 5 (constant token sums): random W_KQ. Every row
says whether rank(Z) stays under its bound and whether it reaches it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcap.tasks.mlt_data import draw_one
from memcap.theory import features as F
from memcap.theory import rank_bounds as RB
from memcap.theory.construct import capacity
from memcap.theory.mlt_weights import construct_mlt, theory_tokens


def rank_row(prop, weights, scale, context, d, n, H, T, seed, rank, bound) -> dict:
    """One rank check; the rank_bounds and trained_ranks tables share these columns."""
    return {"proposition": prop, "weights": weights, "weight_scale": scale, "context": context, "input_dim": d,
            "context_size": n, "heads": H, "dataset_size": T, "seed": seed, "rank": rank, "bound": bound,
            "naive": min(T, H * d), "holds": rank <= bound, "attains": rank == bound}


def run(preset: dict) -> pd.DataFrame:
    """The rank_bounds table: every (seed, proposition, H, weights) of the preset."""
    rtol, rows = preset["rank_rtol"], []
    b2, b5 = preset["bounds"]["prop2"], preset["bounds"]["prop5"]
    for seed in preset["seeds"]:
        rng = np.random.default_rng(seed)          # one stream per seed, drawn in this order (prop2, then prop5)
        d, n, T = b2["input_dim"], b2["context_size"], b2["dataset_size"]
        q, c, y = draw_one(seed, T, n, d, "shared", "regression")
        ctx, e = theory_tokens(q, c)
        for H in b2["heads"]:
            for s in b2["weight_scales"]:
                rows.append(rank_row("prop2", "random", s, "shared", d, n, H, T, seed,
                                     RB.random_weight_rank(ctx, e, H, s, rng, rtol), RB.prop2_bound(H, n)))
            # Constructed weights memorize the first `bound` examples, then see all T queries.
            k = capacity(H, n, n)
            con, _, _ = construct_mlt(q[:k], c, y[:k], H, n, seed=seed, rtol=rtol)
            rank = F.numerical_rank(F.features(ctx, e, con.w_kq), rtol)
            rows.append(rank_row("prop2", "constructed", np.nan, "shared", d, n, H, T, seed, rank,
                                 RB.prop2_bound(H, n)))
        d, n, T = b5["input_dim"], b5["context_size"], b5["dataset_size"]
        ctx = RB.constant_sum_tokens((T, n, d), b5["token_sum"], rng)
        e = RB.constant_sum_tokens((T, d), b5["token_sum"], rng)
        for H in b5["heads"]:
            for s in b5["weight_scales"]:
                rows.append(rank_row("prop5", "random", s, "random", d, n, H, T, seed,
                                     RB.random_weight_rank(ctx, e, H, s, rng, rtol), RB.prop5_bound(H, d)))
    return pd.DataFrame(rows)
