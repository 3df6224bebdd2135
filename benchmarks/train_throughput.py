"""How close memcap's MLT trainer runs to this CPU's limit, in one run.

Prints, measured now on this machine:
  1. sgemm: GFLOP/s of a 1024^3 float32 matmul on the same number of threads (the machine's peak);
  2. per H in (1, 5, 20, 60) and context type (paper config d=64, n=32, d_h=d, batch 256, C=100, one
     model): memcap's own training step (memcap.mlt_synthetic.train.train_step: batch, forward,
     backward, Adam, LR schedule), in model-steps/s and as a share of sgemm. The share counts the
     FLOPs of the formulation memcap used until 2026-11-25 (LEGACY_LOGITS, counted by torch's
     FlopCounterMode over forward and backward), a constant per configuration, so a formulation that
     needs fewer FLOPs counts as faster;
  3. the ratio to the reference computation (the original's full (n+1)x(n+1) attention, one model;
     memcap.models.mlt_reference) at H = 20, after checking both give the same outputs and gradients;
  4. the projected core-hours of every paper sweep (#1-#11, one seed, early stopping ignored), each
     grid point's steps S = max(floor(500 T / 256), min_steps) at the step time measured for its shape.

  5. on a GPU (--device cuda): model-steps/s as a job trains more models at once (the seeds of one grid
     point batch in one job), and the projection per job of 2 seeds (the paper preset's seeds_per_job).

    python benchmarks/train_throughput.py [--threads 1] [--seconds 3] [--project-seconds 0.4] [--device cuda]
"""

from __future__ import annotations

import argparse
import math
import time
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from peak import sgemm_gflops, sync  # benchmarks/peak.py

from memcap import params as memcap_params
from memcap.lean_adam import LeanAdam
from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_reference import ReferenceMLTAttention
from memcap.mlt_synthetic import grid
from memcap.mlt_synthetic.schedule import mlt_num_steps, warmup_cosine
from memcap.mlt_synthetic.train import _Shuffler, train_step
from memcap.tasks.mlt_data import make_data

D, N_CTX, BATCH, CLASSES, T = 64, 32, 256, 100, 4096
HEADS = (1, 5, 20, 60)
DEVICE = torch.device("cpu")   # --device


def legacy_logits(self, q, ctx):
    """memcap's attention logits until 2026-11-25: (W_Q^T e) per example, then W_K, then the context."""
    qh = torch.einsum("mbd,mhde->mbhe", q, self.w_q)
    u = torch.einsum("mbhe,mhde->mbhd", qh, self.w_k) / math.sqrt(self.input_dim)
    eq = "mnd,mbhd->mbhn" if ctx.dim() == 3 else "mbnd,mbhd->mbhn"
    return torch.einsum(eq, ctx, u).softmax(-1)


@contextmanager
def legacy_formulation():
    now = MLTAttention._softmax_logits
    MLTAttention._softmax_logits = legacy_logits
    try:
        yield
    finally:
        MLTAttention._softmax_logits = now


def job(heads: int, context: str, n: int = N_CTX, head_dim: int | None = None, task: str = "classification",
        models: int = 1):
    """The training state of `models` models (one per seed, as a job batches a grid point's seeds) at a
    shape, and its step (memcap's own train_step)."""
    classification, seeds = task == "classification", list(range(models))
    data = make_data(seeds, dataset_size=T, context_size=n, input_dim=D, context=context, task=task,
                     num_classes=CLASSES).to(DEVICE)
    model = MLTAttention(seeds, D, heads, n, head_dim=head_dim, out_dim=CLASSES if classification else 1).to(DEVICE)
    opt = LeanAdam(model.parameters(), lr=1e-3)   # as memcap.mlt_synthetic.train.train
    sched = warmup_cosine(opt, 10 ** 7)
    shuffler = _Shuffler(seeds, T, DEVICE)
    return model, data, lambda: train_step(model, data, shuffler, opt, sched, BATCH, classification)


def step_flops(heads: int, context: str, legacy: bool) -> int:
    """Matmul FLOPs of one training step's forward and backward (torch's FlopCounterMode)."""
    def count():
        model, data, _ = job(heads, context)
        q, c, y = data.batch(torch.arange(BATCH, device=DEVICE)[None])
        with FlopCounterMode(display=False) as fc:
            F.cross_entropy(model(q, c)[0], y[0]).backward()
        return fc.get_total_flops()
    if legacy:
        with legacy_formulation():
            return count()
    return count()


def rate(step, seconds: float) -> float:
    step()
    step()   # warm-up: first allocations, the shuffler's first permutations
    sync(DEVICE)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        n += 1
    sync(DEVICE)
    return n / (time.perf_counter() - start)


def check_same_math(context: str) -> float:
    """Max abs difference of outputs and gradients between memcap's model and the reference (float64)."""
    fast = MLTAttention([0], D, 20, N_CTX, out_dim=CLASSES).double()
    ref = ReferenceMLTAttention(fast).double()
    data = make_data([0], dataset_size=BATCH, context_size=N_CTX, input_dim=D, context=context, task="classification")
    q, c, y = data.queries.double(), data.contexts.double(), data.labels
    out = fast(q, c)[0]
    ctx = c[0].expand(BATCH, -1, -1) if context == "shared" else c[0]
    out_ref = ref(torch.cat([q[0][:, None], ctx], 1))
    F.cross_entropy(out, y[0]).backward()
    F.cross_entropy(out_ref, y[0]).backward()
    diffs = [(out - out_ref).abs().max()] + [(p.grad[0] - getattr(ref, name).grad).abs().max()
                                             for name, p in fast.named_parameters()]
    return float(max(diffs).detach())


def reference_rate(context: str, seconds: float) -> float:
    data = make_data([0], dataset_size=T, context_size=N_CTX, input_dim=D, context=context,
                     task="classification").to(DEVICE)
    model = ReferenceMLTAttention(MLTAttention([0], D, 20, N_CTX, out_dim=CLASSES)).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ctx = data.contexts[0].expand(T, -1, -1) if context == "shared" else data.contexts[0]
    X, y = torch.cat([data.queries[0][:, None], ctx], 1).contiguous(), data.labels[0]

    def step():
        idx = torch.randint(0, T, (BATCH,), device=DEVICE)
        loss = F.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return rate(step, seconds)


def projection(seconds: float, models: int) -> None:
    """Hours of each paper sweep for one seed, from the step time of each of its shapes with `models`
    models in a job (1 on the CPU; on a GPU the paper preset's seeds_per_job)."""
    sweeps = grid.resolve(memcap_params.load("params.yaml")[grid.FAMILY], "paper")
    timed: dict[tuple, float] = {}
    total, unit = 0.0, "core-hours" if DEVICE.type == "cpu" else "GPU-hours"
    print(f"\npaper sweeps, one seed, {models} model(s) per job, one job at a time, early stopping ignored:")
    for i, (sweep, s) in enumerate(sweeps.items(), 1):
        hours = 0.0
        for value in s["values"]:
            shp = grid.shape(s, value)
            key = (shp["heads"], s["context"], shp["context_size"], shp["head_dim"], s["task"])
            if key not in timed:
                timed[key] = 1 / rate(job(*key, models=models)[2], seconds) / models
            for T_ in s["dataset_sizes"]:
                hours += mlt_num_steps(T_, s["min_steps"], s["epochs"], s["batch_size"]) * timed[key] / 3600
        total += hours
        print(f"  #{i:<2} {sweep:30s} {len(s['values']) * len(s['dataset_sizes']):3d} points  {hours:7.2f} {unit}")
    print(f"  all 11 sweeps: {total:.1f} {unit} per seed ({total * 6:.0f} for the paper's 6 seeds)")


def models_per_job(seconds: float) -> None:
    """GPU: model-steps/s as one job trains more models at once (H = 20, shared and random contexts)."""
    print("\nmodels per job (H = 20): model-steps/s")
    for context in ("shared", "random"):
        line = []
        for m in (1, 2, 6, 24, 96):
            line.append(f"M={m}: {m * rate(job(20, context, models=m)[2], seconds):8.0f}")
        print(f"  {context:6s} " + "  ".join(line))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3.0, help="timing window per measurement")
    ap.add_argument("--project-seconds", type=float, default=0.4, help="timing window per shape of the projection")
    ap.add_argument("--no-projection", action="store_true")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda: the same steps on the GPU")
    args = ap.parse_args()
    global DEVICE
    DEVICE = torch.device(args.device)
    torch.set_num_threads(args.threads)
    peak = sgemm_gflops(args.seconds, args.device)
    where = torch.cuda.get_device_name() if DEVICE.type == "cuda" else f"{args.threads} thread(s)"
    print(f"torch {torch.__version__}, {where}: sgemm (float32) {peak:.1f} GFLOP/s")
    print(f"memcap train_step, d={D} n={N_CTX} d_h={D} batch={BATCH} C={CLASSES}, one model "
          f"(% of sgemm at the FLOPs of the formulation until 2026-11-25):")
    for context in ("shared", "random"):
        for H in HEADS:
            legacy, now = step_flops(H, context, legacy=True), step_flops(H, context, legacy=False)
            steps = rate(job(H, context)[2], args.seconds)
            print(f"  {context:6s} H={H:<3d} {steps:8.1f} steps/s  {legacy / 1e6:7.1f} MFLOP/step "
                  f"(now {now / 1e6:6.1f})  {100 * legacy * steps / 1e9 / peak:5.1f}% of sgemm")
    print("against the reference (full attention, one model), H = 20:")
    for context in ("shared", "random"):
        err = check_same_math(context)
        assert err < 1e-9, f"memcap and the reference disagree by {err}"
        ref, ours = reference_rate(context, args.seconds), rate(job(20, context)[2], args.seconds)
        print(f"  {context:6s} reference {ref:6.1f} steps/s, memcap {ours:7.1f} steps/s: x{ours / ref:.1f} "
              f"[outputs and gradients agree to {err:.1e}]")
    if DEVICE.type == "cuda":
        models_per_job(args.seconds)
    if not args.no_projection:
        projection(args.project_seconds, 1 if DEVICE.type == "cpu" else 2)


if __name__ == "__main__":
    main()
