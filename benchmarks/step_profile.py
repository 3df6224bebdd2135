"""Where one MLT training step spends its time, op by op, on the CPU or a GPU (torch.profiler).

Times memcap's own step (train_throughput.job: batch, forward, backward, Adam) without the profiler,
then profiles `--steps` more and prints the ops by their own time on the device (the kernels' time on
a GPU, the op's on the CPU), grouped by input shapes, with each op's share of the unprofiled step and,
for matrix products, the GFLOP/s it reaches beside the device's sgemm. It says which products to
reorder or fuse; the eager step is profiled (a CUDA graph replays the same kernels). On the CPU the
profiler's own cost inflates small ops (an index_select of 0.46 ms timed by hand shows as 2 ms).

    python benchmarks/step_profile.py                                   # random contexts, H = 20, n = 40, 2 models
    python benchmarks/step_profile.py --device cuda --models 256 --n 32 # a GPU pack (a minute)
"""

from __future__ import annotations

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

import train_throughput as bench   # benchmarks/train_throughput.py: the step as memcap trains it
from peak import sgemm_gflops, sync

PRODUCTS = {"aten::mm": 2, "aten::bmm": 3, "aten::addmm": 2, "aten::baddbmm": 3}   # op -> rank of its operands


def product_flops(op: str, shapes: list) -> float:
    """FLOPs of a matrix product from its recorded input shapes (0 for any other op)."""
    rank = PRODUCTS.get(op)
    if rank is None:
        return 0.0
    *_, a, b = (s for s in shapes if len(s) == rank)   # addmm/baddbmm: the bias (maybe of that rank) first
    batch = a[0] if rank == 3 else 1
    return 2.0 * batch * a[-2] * a[-1] * b[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--heads", type=int, default=20)
    ap.add_argument("--n", type=int, default=40, help="context size")
    ap.add_argument("--context", choices=("shared", "random"), default="random")
    ap.add_argument("--models", type=int, default=2, help="models in the step (a grid point's seeds, or a pack)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    bench.DEVICE = torch.device(args.device)
    gpu = bench.DEVICE.type == "cuda"
    peak = sgemm_gflops(1, args.device)
    _, _, step = bench.job(args.heads, args.context, n=args.n, models=args.models)
    step_s = 1 / bench.rate(step, 2)

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with profile(activities=activities, record_shapes=True) as prof:
        for _ in range(args.steps):
            step()
        sync(bench.DEVICE)
    rows = []
    for e in prof.key_averages(group_by_input_shape=True):
        own = (e.self_device_time_total if gpu else e.self_cpu_time_total) / args.steps * 1e-6   # s a step
        if own > 0:
            rows.append((own, e.key, e.input_shapes, e.count // args.steps))
    rows.sort(key=lambda r: -r[0])
    print(f"{args.device}, {args.context} contexts, H = {args.heads}, n = {args.n}, {args.models} models: "
          f"{step_s * 1e3:.2f} ms a step unprofiled ({args.models / step_s:,.0f} model-steps/s); "
          f"sgemm {peak:,.0f} GFLOP/s; ops by own {'device' if gpu else 'CPU'} time:")
    profiled = sum(r[0] for r in rows)
    for own, op, shapes, calls in rows[: args.top]:
        flops = product_flops(op, shapes) * calls
        rate = f"{flops / own / 1e9:8.1f} GFLOP/s ({100 * flops / own / 1e9 / peak:4.1f}%)" if flops else " " * 25
        print(f"  {own * 1e3:7.3f} ms {100 * own / step_s:5.1f}%  {rate}  x{calls} {op} {shapes}")
    print(f"  all ops: {profiled * 1e3:.2f} ms a step profiled, {100 * profiled / step_s:.0f}% of the unprofiled step")


if __name__ == "__main__":
    main()
