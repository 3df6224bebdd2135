"""How close memcap's MLT trainer runs to this CPU's limit, in one run.

Prints, measured now on this machine:
  1. sgemm: GFLOP/s of a 1024^3 float32 matmul on the same number of threads (the machine's peak);
  2. per H in (1, 5, 20, 60) and context type (paper config d=64, n=32, d_h=d, batch 256, C=100, one
     model): memcap's own training step (memcap.training.step.train_step: batch, forward,
     backward, Adam, LR schedule), in model-steps/s and as a share of sgemm. The share counts the
     FLOPs of a larger formulation of the same model (legacy_logits, counted by torch's
     FlopCounterMode over forward and backward), a constant per configuration, so a formulation that
     needs fewer FLOPs counts as faster;
  3. the ratio to the reference computation (the original's full (n+1)x(n+1) attention, one model;
     memcap.models.mlt_reference) at H = 20, after checking both give the same outputs and gradients;
  4. the projected core-hours of every paper sweep (#1-#11, one seed, early stopping ignored), each
     grid point's steps S = max(floor(500 T / 256), min_steps) at the step time measured for its shape,
     and beside them its evaluations (every eval_every steps a forward pass over each model's T rows,
     memcap.training.evaluate) at the evaluation time measured for that shape; and the
     same again with each model trained for the steps its published paper run took (fewer where it
     stopped early at full memorization; a seed not yet run: its grid point's mean share).

  5. on a GPU (--device cuda): model-steps/s by pack size M (models trained as one: the seeds of a grid
     point, or a pack of many grid points, memcap.training.pack) and H, shared and random contexts,
     with the share of sgemm at memcap's own FLOPs; what padding a pack's heads costs; and the projection
     of every paper sweep with all 6 seeds as the pipeline packs them (params.yaml resources.paper:
     pack_models, pack_mem_mb), each pack timed at its padded shape and size, beside the grid's floor
     (its FLOPs over the measured sgemm). On the CPU the projection is one grid point a job, as the CPU
     presets run: packing changes nothing there.

    python benchmarks/train_throughput.py [--threads 1] [--seconds 3] [--project-seconds 0.4] [--device cuda]
    python benchmarks/train_throughput.py --device cuda --seconds 1 --no-reference   # a GPU in a few minutes
    python benchmarks/train_throughput.py --device cuda --seconds 1 --no-reference --cuda-graphs
        # every GPU step replayed from a CUDA graph (memcap.training.graphed), as train-pack
        # --cuda-graphs trains; benchmarks/graph_check.py checks that it gives the eager numbers
"""

from __future__ import annotations

import argparse
import math
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from peak import sgemm_gflops, sync  # benchmarks/peak.py

from memcap import params as memcap_params
from memcap.mlt_synthetic import grid, packing
from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_reference import ReferenceMLTAttention
from memcap.stacked_adam import StackedAdam
from memcap.tasks.mlt_data import make_data
from memcap.training.batches import BatchStream
from memcap.training.evaluate import evaluate
from memcap.training.graphed import GraphedStep
from memcap.training.schedule import mlt_num_steps, warmup_cosine
from memcap.training.sizes import shape
from memcap.training.step import step_kernels, train_step

D, N_CTX, BATCH, CLASSES, T, T_RANDOM = 64, 32, 256, 100, 4096, 512
EVAL_ROWS = 1024   # rows a model in the evaluation timing (a pack of 256 with random contexts: 2 GB)
HEADS = (1, 5, 20, 60)
DEVICE = torch.device("cpu")   # --device
GRAPHS = False                 # --cuda-graphs: GPU steps replayed from CUDA graphs


def legacy_logits(self, q, ctx):
    """The larger formulation's attention logits: (W_Q^T e) per example, then W_K, then the context."""
    qh = torch.einsum("mbd,mhde->mbhe", q, self.w_q)
    u = torch.einsum("mbhe,mhde->mbhd", qh, self.w_k) / math.sqrt(self.input_dim)
    eq = "mnd,mbhd->mbhn" if ctx.dim() == 3 else "mbnd,mbhd->mbhn"
    return torch.einsum(eq, ctx, u).softmax(-1)


@contextmanager
def legacy_formulation():
    """The larger formulation: those logits, every context row embedded."""
    now, folds = MLTAttention._softmax_logits, MLTAttention._folds_embedding
    MLTAttention._softmax_logits, MLTAttention._folds_embedding = legacy_logits, lambda self, batch: False
    try:
        yield
    finally:
        MLTAttention._softmax_logits, MLTAttention._folds_embedding = now, folds


def job(heads: int, context: str, n: int = N_CTX, head_dim: int | None = None, task: str = "classification",
        models: int = 1, pad_heads: int | None = None, rows: int | None = None):
    """The training state of `models` models (a grid point's seeds, or a pack) at a shape, and its step
    (memcap's own train_step). pad_heads: the models are padded to that many heads, as in a pack with
    larger models. Random contexts hold T_RANDOM rows a model (the step reads B of them either way),
    unless `rows` says how many."""
    classification, seeds = task == "classification", list(range(models))
    rows = rows or (T if context == "shared" else T_RANDOM)
    data = make_data(seeds, dataset_size=rows, context_size=n, input_dim=D, context=context, task=task,
                     num_classes=CLASSES).to(DEVICE)
    model = MLTAttention(seeds, D, heads, n, head_dim=head_dim, out_dim=CLASSES if classification else 1)
    if pad_heads:
        model = MLTAttention.stack([model, MLTAttention([0], D, pad_heads, n, head_dim=head_dim,
                                                        out_dim=model.out_dim)]).select(seeds)
    model = model.to(DEVICE)
    opt = StackedAdam(list(model.parameters()), 1e-3, [10 ** 7] * models, warmup_cosine)   # as train()
    batches = BatchStream(seeds, [rows] * models, BATCH, DEVICE)
    # graphs only on the GPU: train_step_flops builds its jobs on the CPU (FLOPs are counted there)
    if GRAPHS and DEVICE.type == "cuda":   # the first step eager (warm-up), then one replay a step
        graphed = GraphedStep(lambda i, v, r: step_kernels(model, data, i, v, r, opt, classification), opt, DEVICE)
        return model, data, lambda: graphed(batches)
    return model, data, lambda: train_step(model, data, batches, opt, classification)


def step_flops(heads: int, context: str, legacy: bool) -> int:
    """Matmul FLOPs of one training step's forward and backward by autograd (torch's FlopCounterMode),
    at the larger formulation (legacy) or memcap's module."""
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


_FLOPS: dict[tuple, int] = {}


def train_step_flops(heads: int, context: str, n: int = N_CTX, head_dim: int | None = None,
                     task: str = "classification") -> int:
    """Matmul FLOPs of one model's training step as memcap runs it today (train_step: the hand-written
    shared-context gradient, or autograd), counted once per shape on the CPU."""
    key = (heads, context, n, head_dim, task)
    if key not in _FLOPS:
        global DEVICE
        where, DEVICE = DEVICE, torch.device("cpu")
        try:
            _, _, step = job(heads, context, n, head_dim, task)
            step()
            with FlopCounterMode(display=False) as fc:
                step()
            _FLOPS[key] = fc.get_total_flops()
        finally:
            DEVICE = where
    return _FLOPS[key]


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


def eval_row_seconds(key: tuple, models: int, seconds: float) -> float:
    """Seconds of one evaluation (memcap's evaluate: forward passes over the full training set of every
    model at once) per row of T, for `models` models at a shape (key: heads, context, n, head_dim, task)."""
    rows = EVAL_ROWS
    model, data, _ = job(*key, models=models, rows=rows)
    classification = key[4] == "classification"
    return 1 / rate(lambda: evaluate(model, data, classification), seconds) / rows


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


def projection(seconds: float, peak: float, packed: bool) -> None:
    """Hours of each paper sweep and of the grid with all 6 seeds, early stopping ignored: training steps,
    and beside them evaluations. CPU: one grid point's 2 seeds a job (the CPU presets), each shape's step
    timed with one model. GPU: the packs the pipeline would form (memcap.mlt_synthetic.packing with
    resources.paper), each timed at its padded shape and size; a pack's models leave as they finish
    (S = max(floor(500 T/256), 50,000) differs by T), so its time is the sum over the spans between
    finishes, at a step time interpolated between the pack's full size and one model. Evaluations: at
    step 0, every eval_every steps and at each model's last step, a pass over the models still training,
    each chunk of rows taking the models with rows left in it (train.evaluate), timed per row likewise. Beside
    them, the floor: every model's training-step FLOPs x S over the measured sgemm. The same sums are
    then taken with S replaced by the steps each model's published paper run took (early_stopped_steps)."""
    params = memcap_params.load("params.yaml")
    sweeps = grid.resolve(params[grid.FAMILY], "paper")
    peak, gpu = peak * 1e9, DEVICE.type == "cuda"
    unit = "GPU-hours" if gpu else "core-hours"
    train = params["resources"]["paper"]["train"]
    names = {grid.run_name(sweeps, *j[:3], list(j[3])) for j in grid.jobs(sweeps)}
    packs = packing.plan(sweeps, names, train.get("pack_models", 1), train.get("pack_mem_mb", 60000)) if packed else []
    timed: dict[tuple, float] = {}

    def step_s(key: tuple, models: int) -> float:
        if ("step", key, models) not in timed:
            timed["step", key, models] = 1 / rate(job(*key, models=models)[2], seconds)
            torch.cuda.empty_cache() if gpu else None
        return timed["step", key, models]

    def row_s(key: tuple, models: int) -> float:
        if ("eval", key, models) not in timed:
            timed["eval", key, models] = eval_row_seconds(key, models, seconds)
            torch.cuda.empty_cache() if gpu else None
        return timed["eval", key, models]

    def key_of(s: dict, value: int) -> tuple:
        shp = shape(s, value)
        return shp["heads"], s["context"], shp["context_size"], shp["head_dim"], s["task"]

    def steps_of(s: dict, T: int) -> int:
        return mlt_num_steps(T, s["min_steps"], s["epochs"], s["batch_size"])

    def hours_of(s: dict, key: tuple, members: list[tuple[int, int]]) -> tuple[float, float]:
        """(training, evaluation) hours of one process training these models ((S, T) each) at `key`."""
        members, M, ev = sorted(members), len(members), s["eval_every"]

        def between(timer, share: float) -> float:   # one model's time .. the full pack's
            return timer(key, M) if share == 1 else timer(key, 1) + (timer(key, M) - timer(key, 1)) * share

        def pass_s(sizes: list[int]) -> float:
            return eval_pass_seconds(sizes, lambda live: between(row_s, (live - 1) / max(M - 1, 1)))

        steps, evals, start = 0.0, pass_s([T for _, T in members]), 0   # the evaluation at step 0
        for k, (end, _) in enumerate(members):   # models k.. still train from start to end
            if end > start:
                passes = end // ev - start // ev + (1 if end % ev else 0)
                steps += (end - start) * between(step_s, (M - k - 1) / max(M - 1, 1))
                evals += passes * pass_s([T for _, T in members[k:]])
            start = end
        return steps / 3600, evals / 3600

    def sweep_hours(sweep: str, s: dict, steps) -> tuple[float, float, float]:
        """(training, evaluation, floor) hours of one sweep, each model training steps(job, seed) steps."""
        jobs = [j for j in grid.jobs(sweeps) if j[0] == sweep]
        floor = sum(steps(j, seed) * train_step_flops(*key_of(s, j[1])) for j in jobs for seed in j[3]) / peak / 3600
        mine = [p for p in packs if p.sweep == sweep]
        packed = {j for p in mine for j in p.jobs}
        units = [(key_of(s, max(j[1] for j in p.jobs)), [(steps(j, seed), j[2]) for j in p.jobs for seed in j[3]])
                 for p in mine]
        units += [(key_of(s, j[1]), [(steps(j, seed), j[2]) for seed in j[3]]) for j in jobs if j not in packed]
        hours = [hours_of(s, key, members) for key, members in units]   # a pack, or one job (its seeds together)
        return sum(h for h, _ in hours), sum(e for _, e in hours), floor

    ran = measured_steps()
    how = (f"{len(packs)} packs of up to {train.get('pack_models')} models" if packed
           else "one grid point (2 seeds) a job, one job at a time")
    print(f"\npaper grid, all 6 seeds, {how} (training + evaluation); early stopping ignored, and beside it "
          f"as the {len(ran)} published paper runs stopped (a seed not run: its grid point's mean share):")
    total, stopped = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    for i, (sweep, s) in enumerate(sweeps.items(), 1):
        planned = sweep_hours(sweep, s, lambda j, seed: steps_of(s, j[2]))
        early = sweep_hours(sweep, s, lambda j, seed: early_stopped_steps(ran, j, seed, steps_of(s, j[2])))
        total, stopped = [a + b for a, b in zip(total, planned)], [a + b for a, b in zip(stopped, early)]
        hours, eval_hours, floor = planned
        print(f"  #{i:<2} {sweep:30s} {sum(j[0] == sweep for j in grid.jobs(sweeps)):4d} jobs "
              f"{sum(p.sweep == sweep for p in packs):3d} packs {hours:8.2f} + {eval_hours:5.2f} {unit}"
              f"   floor {floor:6.3f} (x{hours / floor:.0f})   as stopped {early[0]:8.2f} + {early[1]:5.2f}", flush=True)
    for what, (hours, eval_hours, floor) in (("early stopping ignored", total), ("as the runs stopped", stopped)):
        print(f"  whole grid, 6 seeds, {what}: {hours:.1f} {unit} training + {eval_hours:.1f} evaluation = "
              f"{hours + eval_hours:.1f}; floor (training FLOPs / sgemm) {floor:.2f}: "
              f"training x{hours / floor:.1f} the floor", flush=True)


def eval_pass_seconds(sizes: list[int], row_seconds) -> float:
    """One evaluation pass over models of these T: a chunk of rows takes only the models with rows
    left in it (train.evaluate), so each span of rows costs row_seconds(models still in it) a row."""
    total, below = 0.0, 0
    for i, T in enumerate(sorted(sizes)):
        if T > below:
            total += (T - below) * row_seconds(len(sizes) - i)
            below = T
    return total


def measured_steps(runs: str = "results/mlt_synthetic/runs/paper") -> dict[tuple, tuple[int, int]]:
    """(steps_run, steps_planned) of each published paper run by (sweep, value, T, seed); steps_run is
    fewer than planned where the run stopped early."""
    cols = ["sweep", "x", "dataset_size", "seed", "steps_run", "steps_planned"]
    files = sorted(Path(runs).glob("*/*/*.parquet"))
    rows = pd.concat([pd.read_parquet(f, columns=cols) for f in files]) if files else pd.DataFrame(columns=cols)
    return {(sw, x, T, seed): (run, plan) for sw, x, T, seed, run, plan in rows.itertuples(index=False)}


def early_stopped_steps(ran: dict[tuple, tuple[int, int]], job: tuple, seed: int, planned: int) -> int:
    """The steps this seed of the job trained if it was run; else its grid point's mean share of the
    planned steps over the seeds that were; else all `planned` (early stopping unknown: ignored)."""
    point = job[:3]
    if (*point, seed) in ran:
        return int(ran[(*point, seed)][0])
    shares = [run / plan for key, (run, plan) in ran.items() if key[:3] == point]
    return round(planned * sum(shares) / len(shares)) if shares else planned


def pack_sizes(seconds: float, peak: float) -> None:
    """Model-steps/s as one process trains more models at once (a pack), per H and context, with the
    share of sgemm at today's FLOPs; then what padding heads to a larger pack-mate's costs."""
    print("\nmodel-steps/s by pack size M (d=64, n=32, d_h=d, C=100; % of sgemm at today's FLOPs):")
    for context in ("shared", "random"):
        for H in (1, 20, 60):
            flops, line = train_step_flops(H, context), []
            for m in (2, 24, 96, 256):
                r = m * rate(job(H, context, models=m)[2], seconds)
                line.append(f"M={m}: {r:8.0f} ({100 * r * flops / 1e9 / peak:4.1f}%)")
                torch.cuda.empty_cache() if DEVICE.type == "cuda" else None
            print(f"  {context:6s} H={H:<3d} " + "  ".join(line), flush=True)
    for context in ("shared", "random"):
        own = 96 * rate(job(20, context, models=96)[2], seconds)
        padded = 96 * rate(job(20, context, models=96, pad_heads=60)[2], seconds)
        print(f"  padding: 96 models of H=20 ({context}) alone {own:8.0f} model-steps/s, padded to H=60 "
              f"{padded:8.0f}: a padded step costs x{own / padded:.2f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=3.0, help="timing window per measurement")
    ap.add_argument("--project-seconds", type=float, default=0.4, help="timing window per shape of the projection")
    ap.add_argument("--no-projection", action="store_true")
    ap.add_argument("--no-reference", action="store_true", help="skip the one-model table and the reference")
    ap.add_argument("--packed", action="store_true", help="project packs also on the CPU (a GPU always does)")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda: the same steps on the GPU")
    ap.add_argument("--cuda-graphs", action="store_true", help="GPU steps replayed from CUDA graphs")
    args = ap.parse_args()
    global DEVICE, GRAPHS
    DEVICE, GRAPHS = torch.device(args.device), args.cuda_graphs
    if GRAPHS and DEVICE.type != "cuda":
        raise SystemExit("train_throughput: --cuda-graphs needs --device cuda")
    torch.set_num_threads(args.threads)
    peak = sgemm_gflops(args.seconds, args.device)
    where = torch.cuda.get_device_name() if DEVICE.type == "cuda" else f"{args.threads} thread(s)"
    print(f"torch {torch.__version__}, {where}: sgemm (float32) {peak:.1f} GFLOP/s"
          + (", steps replayed from CUDA graphs" if GRAPHS else ""))
    if not args.no_reference:
        one_model(args.seconds, peak)
    if DEVICE.type == "cuda":
        pack_sizes(args.seconds, peak)
    if not args.no_projection:
        projection(args.project_seconds, peak, args.packed or DEVICE.type == "cuda")


def one_model(seconds: float, peak: float) -> None:
    print(f"memcap train_step, d={D} n={N_CTX} d_h={D} batch={BATCH} C={CLASSES}, one model "
          f"(% of sgemm at the FLOPs of the larger formulation):")
    for context in ("shared", "random"):
        for H in HEADS:
            legacy, now = step_flops(H, context, legacy=True), step_flops(H, context, legacy=False)
            steps = rate(job(H, context)[2], seconds)
            print(f"  {context:6s} H={H:<3d} {steps:8.1f} steps/s  {legacy / 1e6:7.1f} MFLOP/step "
                  f"(now {now / 1e6:6.1f})  {100 * legacy * steps / 1e9 / peak:5.1f}% of sgemm")
    print("against the reference (full attention, one model), H = 20:")
    for context in ("shared", "random"):
        err = check_same_math(context)
        assert err < 1e-9, f"memcap and the reference disagree by {err}"
        ref, ours = reference_rate(context, seconds), rate(job(20, context)[2], seconds)
        print(f"  {context:6s} reference {ref:6.1f} steps/s, memcap {ours:7.1f} steps/s: x{ours / ref:.1f} "
              f"[outputs and gradients agree to {err:.1e}]")


if __name__ == "__main__":
    main()
