"""Benchmark: CONSTRUCT (MLT Theorem 1) at the paper's width, and how its time scales with T.

    OMP_NUM_THREADS=2 python benchmarks/construct.py --threads 2   # target: d=64, n=32, H=8 shared in <= 5 s

numpy's BLAS takes its thread count from OMP_NUM_THREADS (set it to match --threads); on a machine
shared with other jobs, 1 thread avoids OpenMP oversubscription, which can cost 10x or more.

Times CONSTRUCT plus the verification through MLTAttention's forward pass (float64, CPU), on the
MLT family's data (memcap.tasks.mlt_data, regression labels), for H = 1, 2, 4, 8, 16, 32 with d_h = d so
T = H(n−1)+1 grows linearly in H. Prints one line per case and the fitted exponent of time ~ T^k.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from memcap.stats import linear_fit
from memcap.tasks.mlt_data import draw_one
from memcap.bounds import memorization_bound
from memcap.theory.mlt_weights import construct_mlt

TARGET_S = 5.0   # d=64, n=32, H=8 shared (T=249) within 5 s on 2 CPU cores


def time_case(d: int, n: int, heads: int, context: str, repeats: int) -> dict:
    T = memorization_bound(heads, n, d)
    q, c, y = draw_one(0, T, n, d, context, "regression")
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        con, _, err = construct_mlt(q, c, y, heads, d, seed=0)
        best = min(best, time.perf_counter() - start)
    return {"d": d, "n": n, "H": heads, "context": context, "T": T, "rank": con.rank, "cond": con.cond,
            "c_max": np.nanmax(con.scales) if heads > 1 else np.nan, "residual": err, "seconds": best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    ap.add_argument("--repeats", type=int, default=3, help="best of this many runs per case")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, numpy {np.__version__}, torch threads {args.threads}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load {os.getloadavg()[0]:.1f}")
    for context in ("shared", "random"):
        rows = []
        for H in args.heads:
            rows.append(r := time_case(64, 32, H, context, args.repeats))
            print(f"{context:6s} d={r['d']} n={r['n']} H={r['H']:3d} T={r['T']:5d} rank={r['rank']:5d} "
                  f"cond={r['cond']:9.3g} c_max={r['c_max']:6g} max|ŷ−y|={r['residual']:.1e} "
                  f"time={r['seconds']:.3f}s", flush=True)
        t = np.array([r["T"] for r in rows], float)
        s = np.array([r["seconds"] for r in rows])
        big = t >= 100
        k = linear_fit(np.log(t[big]), np.log(s[big]))["slope"]          # NaN below 2 points
        print(f"{context}: time ~ T^{k:.2f} (fit over T >= 100)")
        target = [r for r in rows if r["H"] == 8]
        if context == "shared" and target:
            sec = target[0]["seconds"]
            print(f"TARGET d=64 n=32 H=8 shared T=249: {sec:.3f} s (limit {TARGET_S} s) -> "
                  f"{'PASS' if sec <= TARGET_S else 'FAIL'}")


if __name__ == "__main__":
    main()
