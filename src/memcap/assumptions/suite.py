"""From streamed token matrices to the family's rows: one row per (model, layer, check).

A model's features are accumulated batch by batch and only what the checks need is kept: the query
row (T, d), Asm 3's x = e + mean(E) (T, d) and the rank of each context (T,). A paper-size GPT-2-large
layer (2000 × 1024 × 1280 fp32 ≈ 10.5 GB) thus costs 2 × 2000 × 1280 floats.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from memcap.assumptions.rank import KruskalSampler, asm3_vectors, rank_context
from memcap.stats import wilson_interval

CHECKS = ("gp", "asm1", "asm2", "asm3")
# Column order of results/assumptions/runs/checks/*.parquet (one row per model, layer and check); `drawn`
# says what a text sample is made of (documents used, text its examples share), empty for images
COLUMNS = ["track", "data_source", "data_label", "model", "layer", "weights", "status", "reason", "check",
           "T", "n", "d", "k", "trials", "full_rank", "fraction", "ci_low", "ci_high", "threshold", "holds",
           "kruskal_rank_est", "search_evals", "distinct_sources", "drawn", "wall_time_s"]


@dataclass
class Features:
    """Bounded summary of one (model, layer): query rows, Asm 3 vectors, context ranks.

    With `capacity` (the number of examples, when known) they are written into tensors allocated once at
    the first batch: small tensors kept alive between a forward pass's large temporaries would fragment
    the heap, which the jobs never trim (memcap.runtime.keep_freed_memory), and grow the process by ~1 MB
    per ViT-B/16 image.
    """

    query_index: int
    capacity: int | None = None
    queries: list = field(default_factory=list)
    asm3: list = field(default_factory=list)
    ranks: list = field(default_factory=list)
    n: int = 0
    d: int = 0
    filled: int = 0

    def add(self, tokens: torch.Tensor, budget_mb: float) -> None:        # tokens (B, n, d)
        tokens = tokens.float()
        B, self.n, self.d = tokens.shape
        r = rank_context(tokens, budget_mb).cpu()
        q = tokens[:, self.query_index].cpu()
        a = asm3_vectors(tokens, self.query_index).cpu()
        if self.capacity is None:
            # copies: a view (what .cpu() returns on the CPU) would keep the whole (B, n, d) batch alive
            self.ranks.append(r.clone())
            self.queries.append(q.clone())
            self.asm3.append(a.clone())
            return
        if not self.queries:
            self.queries = [torch.empty(self.capacity, self.d)]
            self.asm3 = [torch.empty(self.capacity, self.d)]
            self.ranks = [torch.empty(self.capacity, dtype=r.dtype)]
        s, e = self.filled, self.filled + B
        self.queries[0][s:e], self.asm3[0][s:e], self.ranks[0][s:e] = q, a, r
        self.filled = e

    def tensors(self):
        if self.capacity is not None:
            return self.queries[0][:self.filled], self.asm3[0][:self.filled], self.ranks[0][:self.filled]
        return torch.cat(self.queries), torch.cat(self.asm3), torch.cat(self.ranks)


def skipped_rows(base: dict, reason: str) -> list[dict]:
    return [{**base, "status": "SKIPPED", "reason": reason, "check": c} for c in CHECKS]


def check_rows(feat: Features, base: dict, settings: dict, device: torch.device,
               curve_ks: list[int] | None = None) -> tuple[list[dict], pd.DataFrame | None]:
    """Asm 2, Asm 1 (k=n), GP (k=min(T,d)), Asm 3 (k=n) and the estimated Kruskal rank of the queries."""
    start = time.perf_counter()
    thr, trials, seed, budget = settings["threshold"], settings["trials"], settings["seed"], settings["budget_mb"]
    queries, x3, ranks = feat.tensors()
    T, n, d = len(queries), feat.n, feat.d
    common = {**base, "status": "ok", "reason": "", "T": T, "n": n, "d": d, "threshold": thr}
    rows = []

    full = int((ranks == n).sum())                                    # Asm 2: every context has rank n
    lo, hi = wilson_interval(full, T)
    rows.append({**common, "check": "asm2", "k": n, "trials": T, "full_rank": full, "fraction": full / T,
                 "ci_low": lo, "ci_high": hi, "holds": full == T})

    q = KruskalSampler.draw(queries.to(device), trials, seed, budget_mb=budget)
    q.fraction(min(n, q.max_k))                                       # k = n first: the search then extends it
    est, evals = q.estimate_kruskal_rank(thr)
    a3 = KruskalSampler.draw(x3.to(device), trials, seed, budget_mb=budget)
    for check, sampler, k in (("asm1", q, n), ("gp", q, min(T, d)), ("asm3", a3, n)):
        if k > T:
            rows.append({**common, "check": check, "k": k, "status": "n/a",
                         "reason": f"T={T} < k={k}: too few examples for a k-subset"})
            continue
        frac, hits = sampler.fraction(k)
        lo, hi = wilson_interval(hits, trials)
        rows.append({**common, "check": check, "k": k, "trials": trials, "full_rank": hits, "fraction": frac,
                     "ci_low": lo, "ci_high": hi, "holds": frac >= thr})
    wall = time.perf_counter() - start
    for r in rows:
        r.update(kruskal_rank_est=est, search_evals=evals, wall_time_s=wall)

    curve = None
    if curve_ks:
        ks = sorted({k for k in curve_ks if k <= q.max_k})
        fr = q.fractions(ks)
        ci = [wilson_interval(h, trials) for _, h in fr]
        curve = pd.DataFrame({**{c: base[c] for c in ("track", "data_source", "model", "layer")},
                              "T": T, "n": n, "d": d, "k": ks, "trials": trials,
                              "fraction": [f for f, _ in fr], "ci_low": [c[0] for c in ci],
                              "ci_high": [c[1] for c in ci]})
    return rows, curve


def to_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows).reindex(columns=COLUMNS)
    for c in ("T", "n", "d", "k", "trials", "full_rank", "kruskal_rank_est", "search_evals", "distinct_sources"):
        df[c] = df[c].astype("Int64")
    df["holds"] = df["holds"].astype("boolean")
    return df


def curve_grid(max_k: int, step: int, marks: list[int]) -> list[int]:
    """Fig 1's candidate k: 1, 1+step, ... plus the marked values (n and d). The step shrinks so that a
    small geometry (digits: max_k = 64) still gets ~40 points."""
    step = max(1, min(step, max_k // 40))
    return sorted(set(np.arange(1, max_k + 1, step).tolist()) | {m for m in marks if m <= max_k})
