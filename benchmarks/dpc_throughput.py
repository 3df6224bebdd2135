"""Training steps/s of memcap's DPC trainer against the original code's computation, in one run.

Exp 1 config (N = 50, d = d_h = 10, H = 31, batch 256, 64 batches per epoch). The reference is the
original computation (memcap.dpc.reference): H separate nn.MultiheadAttention modules summed in a
Python loop, trigrams drawn one sample at a time, a DataLoader, torch's default Adam, one run at a
time. memcap trains all repetitions of a grid point as one batched model with vectorized heads. Both
are checked to compute the same logits on the same weights before timing.

    python benchmarks/dpc_throughput.py [--threads 1] [--seconds 10] [--reps 5] [--project]

--project also times every grid point of the paper preset (a few steps each) and prints the
projected wall time of the whole 1285-run suite on this machine (jobs run 2 at a time on 2 cores).

It also prints sgemm (a 1024^3 float32 matmul on the same threads: the machine's peak) and, for the
grid points that dominate the paper suite's FLOPs, the share of it that memcap's step reaches (matmul
FLOPs of forward and backward, counted by torch's FlopCounterMode).
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.utils.data import DataLoader
from torch.utils.flop_counter import FlopCounterMode

from peak import sgemm_gflops  # benchmarks/peak.py

from memcap import runtime
from memcap.dpc.reference import ReferenceAoT, reference_data, reference_loss
from memcap.dpc.train import nll
from memcap.models.aot import AoT
from memcap.tasks.lookup import make_task

N, D, HEADS, BATCH, BATCHES = 50, 10, 31, 256, 64


def check_same_math() -> float:
    fast = AoT([0], N, D, D, HEADS).double()
    ref = ReferenceAoT(fast).double()
    x = torch.randint(N, (1, BATCH, 2))
    with torch.no_grad():
        return float((fast(x)[0] - ref(x[0])[:, -1]).abs().max())


def reference_step_fn():
    """One step of the original training loop (DataLoader over a per-sample-drawn sample), and the
    seconds the per-sample draw of the 16384-trigram sample took."""
    task = make_task(N, 1, 2222)
    start = time.perf_counter()
    data = reference_data(task.table, BATCH * BATCHES)
    gen_s = time.perf_counter() - start
    model = ReferenceAoT(AoT([0], N, D, D, HEADS))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loader = DataLoader(data, batch_size=BATCH, shuffle=True)
    it = iter(loader)

    def step():
        nonlocal it
        batch = next(it, None)
        if batch is None:                      # new epoch: reshuffle, as the original's loader does
            it = iter(loader)
            batch = next(it)
        loss = reference_loss(model(batch[:, :-1]), batch[:, -1])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step, gen_s


def memcap_step_fn(vocab: int, reps: int, batch: int, shape: dict):
    """One step of memcap's trainer body (dpc.train.train) for `reps` batched models."""
    task = make_task(vocab, batch * 8, 2222)
    model = AoT(list(range(reps)), vocab, **shape)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2, fused=True)
    gens = [torch.Generator().manual_seed(r) for r in range(reps)]

    def step():
        perm = torch.stack([torch.randperm(batch * 8, generator=g)[:batch] for g in gens])
        tokens = task.samples[perm]                                           # (M, B, 3)
        logits = model(tokens[..., :2])
        loss = nll(logits, tokens[..., 2])
        (logits.argmax(-1) == tokens[..., 2]).float().mean(1)                 # the per-batch accuracy
        opt.zero_grad(set_to_none=True)
        loss.mean(1).sum().backward()
        opt.step()
    return step


def rate(step, seconds: float, warmup: int = 1, min_steps: int = 1) -> float:
    """Steps per second over `seconds` (and at least `min_steps`), after `warmup` steps."""
    for _ in range(warmup):
        step()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or n < min_steps:
        step()
        n += 1
    return n / (time.perf_counter() - start)


def best_rates(steps: dict, seconds: float, rounds: int) -> dict:
    """Interleave short timing rounds of every contender and keep each one's best: on a shared
    machine, other processes' load then biases no contender more than another."""
    best = {k: 0.0 for k in steps}
    for _ in range(rounds):
        for k, fn in steps.items():
            best[k] = max(best[k], rate(fn, seconds / rounds))
    return best


def project_paper(job_overhead_s: float = 3.0, seconds_per_point: float = 0.5) -> float:
    """Projected wall seconds of the paper preset on 2 cores (2 one-thread jobs at a time): each grid
    point's measured step time x its steps, plus a per-job start-up allowance."""
    import yaml

    from memcap.dpc import grid
    from memcap.params import REPO_ROOT

    preset = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["dpc"]["paper"]
    total, jobs = 0.0, grid.jobs(preset)
    for exp, label in jobs:
        s = grid.settings(preset, exp)
        for x in s["x"]["values"]:
            m = grid.shape(s, grid.series_value(label), x)
            step = memcap_step_fn(s["N"], s["repetitions"], s["batch_size"], m)
            total += s["batches"] * s["epochs"] / rate(step, seconds_per_point, warmup=3, min_steps=3)
        print(f"  {exp}/{label}: cumulative {total / 60:.1f} min of training", flush=True)
    return (total + job_overhead_s * len(jobs)) / 2


def dominant_points(top: int = 3) -> list[tuple[str, str, int, dict, dict, int]]:
    """The paper preset's grid points with the most training FLOPs: (experiment, series, x, settings,
    shape, FLOPs per step), largest first."""
    import yaml

    from memcap.dpc import grid
    from memcap.params import REPO_ROOT

    preset = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["dpc"]["paper"]
    points = []
    for exp, label in grid.jobs(preset):
        s = grid.settings(preset, exp)
        for x in s["x"]["values"]:
            m = grid.shape(s, grid.series_value(label), x)
            step = memcap_step_fn(s["N"], s["repetitions"], s["batch_size"], m)
            with FlopCounterMode(display=False) as fc:
                step()
            flops = fc.get_total_flops()
            points.append((flops * s["batches"] * s["epochs"], exp, label, x, s, m, flops))
    points.sort(key=lambda p: -p[0])
    return [p[1:] for p in points[:top]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--reps", type=int, default=5, help="repetitions batched per grid point (paper: 5)")
    ap.add_argument("--project", action="store_true", help="also project the paper suite's wall time")
    args = ap.parse_args()
    runtime.prepare(args.threads)   # what every training job's process does (threads, allocator)
    torch.manual_seed(0)

    print(f"DPC Exp 1 config: N={N}, d=d_h={D}, H={HEADS}, batch {BATCH}; torch threads {args.threads}")
    print(f"max |logit difference| memcap vs reference (float64): {check_same_math():.2e}")
    ref_step, gen_s = reference_step_fn()
    shape = dict(dim=D, head_dim=D, heads=HEADS)
    r = best_rates({"ref": ref_step, "one": memcap_step_fn(N, 1, BATCH, shape),
                    "many": memcap_step_fn(N, args.reps, BATCH, shape)}, args.seconds, rounds=5)
    start = time.perf_counter()
    make_task(N, BATCH * BATCHES, 2222)
    vec_gen_s = time.perf_counter() - start
    print(f"reference (H modules in a loop, DataLoader, one run): {r['ref']:8.1f} steps/s")
    print(f"memcap, 1 model:                                      {r['one']:8.1f} steps/s  "
          f"ratio {r['one'] / r['ref']:5.1f}x")
    print(f"memcap, {args.reps} repetitions batched:                       {r['many']:8.1f} steps/s "
          f"= {args.reps * r['many']:8.1f} run-steps/s  ratio {args.reps * r['many'] / r['ref']:5.1f}x")
    print(f"sample of {BATCH * BATCHES} trigrams: per-sample loop {gen_s:.2f} s, vectorized {vec_gen_s * 1e3:.1f} ms")
    print(f"one paper Exp 1 run (4096 steps): reference {4096 / r['ref']:.1f} s; memcap "
          f"{4096 / (args.reps * r['many']):.2f} s per run when {args.reps} are batched")
    peak = sgemm_gflops(3.0)
    print(f"sgemm 1024^3: {peak:.1f} GFLOP/s on {args.threads} thread(s); the paper suite's heaviest grid points:")
    for exp, label, x, s, m, flops in dominant_points():
        steps = rate(memcap_step_fn(s["N"], s["repetitions"], s["batch_size"], m), args.seconds / 3, warmup=2)
        print(f"  {exp} {label} x={x} ({s['repetitions']} repetitions batched): {steps:7.1f} steps/s, "
              f"{flops / 1e6:7.1f} MFLOP/step, {100 * flops * steps / 1e9 / peak:5.1f}% of sgemm")
    if args.project:
        wall = project_paper()
        print(f"projected paper suite (1285 runs, 2 one-thread jobs at a time): {wall / 60:.1f} min")


if __name__ == "__main__":
    main()
