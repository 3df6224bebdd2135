"""Optimizer steps/s of memcap's MLT trainer against the reference computation, in one run.

Paper config (d=64, n=32, H=20, batch 256, classification with 100 classes), shared and random
contexts. The reference is a straightforward reimplementation of the original code: full (n+1)x(n+1)
attention for every head, one model at a time (memcap.models.mlt_reference). Before timing, both are
checked to give the same outputs and gradients on the same weights.

    python benchmarks/train_throughput.py [--threads 2] [--seconds 10] [--models 6]
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_reference import ReferenceMLTAttention
from memcap.tasks.mlt_data import make_data

D, N_CTX, HEADS, BATCH, CLASSES, T = 64, 32, 20, 256, 100, 4096


def check_same_math(shared: bool) -> float:
    """Max abs difference of outputs and gradients between the fast and the reference model."""
    torch.manual_seed(0)
    fast = MLTAttention([0], D, HEADS, N_CTX, out_dim=CLASSES).double()
    ref = ReferenceMLTAttention(fast).double()
    data = make_data([0], dataset_size=BATCH, context_size=N_CTX, input_dim=D,
                     context="shared" if shared else "random", task="classification")
    q, c, y = data.queries.double(), data.contexts.double(), data.labels
    out = fast(q, c)[0]
    ctx = c[0].expand(BATCH, -1, -1) if shared else c[0]
    out_ref = ref(torch.cat([q[0][:, None], ctx], 1))
    F.cross_entropy(out, y[0]).backward()
    F.cross_entropy(out_ref, y[0]).backward()
    diffs = [(out - out_ref).abs().max()]
    for name, p in fast.named_parameters():
        diffs.append((p.grad[0] - getattr(ref, name).grad).abs().max())
    return float(max(diffs).detach())


def steps_per_second(step, seconds: float) -> float:
    step()  # warm-up
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        n += 1
    return n / (time.perf_counter() - start)


def reference_step_fn(shared: bool):
    data = make_data([0], dataset_size=T, context_size=N_CTX, input_dim=D,
                     context="shared" if shared else "random", task="classification")
    model = ReferenceMLTAttention(MLTAttention([0], D, HEADS, N_CTX, out_dim=CLASSES))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    # The original keeps X = concat(e, E) of shape (T, n+1, d) and batches it.
    ctx = data.contexts[0].expand(T, -1, -1) if shared else data.contexts[0]
    X, y = torch.cat([data.queries[0][:, None], ctx], 1).contiguous(), data.labels[0]

    def step():
        idx = torch.randint(0, T, (BATCH,))
        loss = F.cross_entropy(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def memcap_step_fn(shared: bool, models: int):
    seeds = list(range(models))
    data = make_data(seeds, dataset_size=T, context_size=N_CTX, input_dim=D,
                     context="shared" if shared else "random", task="classification")
    model = MLTAttention(seeds, D, HEADS, N_CTX, out_dim=CLASSES)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        q, c, y = data.batch(torch.randint(0, T, (models, BATCH)))
        out = model(q, c)
        loss = F.cross_entropy(out.transpose(1, 2), y, reduction="none").mean(1).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=8.0, help="timing window per measurement")
    ap.add_argument("--models", type=int, default=6, help="seeds batched in one memcap job")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"config: d={D} n={N_CTX} H={HEADS} batch={BATCH} C={CLASSES}, {args.threads} threads, "
          f"torch {torch.__version__}")
    for shared in (True, False):
        name = "shared" if shared else "random"
        err = check_same_math(shared)
        assert err < 1e-9, f"fast and reference models disagree by {err}"
        ref = steps_per_second(reference_step_fn(shared), args.seconds)
        one = steps_per_second(memcap_step_fn(shared, 1), args.seconds)
        many = steps_per_second(memcap_step_fn(shared, args.models), args.seconds) * args.models
        print(f"{name:6s} context: reference {ref:7.2f} steps/s | memcap 1 model {one:8.2f} steps/s "
              f"(x{one / ref:5.1f}) | memcap {args.models} models batched {many:8.2f} model-steps/s "
              f"(x{many / ref:5.1f})   [outputs/grads agree to {err:.1e}]")


if __name__ == "__main__":
    main()
