"""Training of DPC's look-up-table runs (docs/method.md, "DPC: Training protocol"): the loop, and one job of a grid.

Faithful to the original protocol:
  the fixed sample of batch_size·batches trigrams is reshuffled every epoch (DataLoader shuffle=True);
  Adam (default betas/eps, no weight decay) with the effective lr rule, changed once per epoch;
  loss = NLL of softmax(logits) + 1e-12 at the last position (the KL, since the table has 0 entropy);
  per-batch accuracy from the forward pass just before that batch's step; the reported accuracy is
  the mean over the 100 batches before the very last one (`Acc[-101:-1]`).
Added: the exact full-table accuracy (and KL) over all N² contexts after training.

M models (repetitions) train in one batched computation; each has its own seed for its
initialisation and its own shuffling, so its result does not depend on which others share the job.
`run_job` trains one curve (every x of one series value, from grid.settings) and returns its rows.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
import torch
from torch.optim.lr_scheduler import LambdaLR

from memcap import checkpoint as ckpt
from memcap import bounds
from memcap.dpc import grid
from memcap.dpc.schedule import effective_lr
from memcap.errors import TrainingFailed
from memcap.models.aot import AoT, param_count
from memcap.progress import Progress
from memcap.runtime import pick_device
from memcap.stacked_adam import StackedAdam
from memcap.tasks.lookup import LookupTask, make_task
from memcap.training import memory


@dataclass
class TrainConfig:
    batch_size: int = 256        # B
    batches: int = 64            # M: the sample has B·M trigrams
    epochs: int = 64
    lr: float = 0.1              # the original's `lr` argument (effective start lr·lr)
    lr_low: float = 5e-3         # the original's `lr_low` argument (effective end ~ lr·lr_low)
    window: int = 100            # accuracy = mean over the `window` batches before the last
    eval_batch_size: int = 8192
    checkpoint_every_s: float = 300.0   # seconds between checkpoints (at epoch ends); < 0: never


@dataclass
class RunResult:
    acc_window: float            # the original's number: mean train-batch accuracy, Acc[-101:-1]
    acc_table: float             # exact: fraction of all N² contexts whose argmax is g(t)
    loss_window: float           # mean train-batch loss over the same window
    kl_table: float              # d_KL(π, T) over the full table (uniform prior on pairs)
    steps: int
    memorized_bits: float = float("nan")   # Σ over the N² contexts of max(0, log2 N − NLL in bits)
    wall_time_s: float = float("nan")      # training seconds of the point (all its models), every segment
    segments: int = 1                      # 1 + how many times the point was resumed from a checkpoint


def nll(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The original's loss, per model and sample: −log(softmax(logits)[target] + 1e-12). (M, B)."""
    p = logits.softmax(-1).gather(-1, target[..., None])[..., 0]
    return -(p + 1e-12).log()


class NLLAndHits(torch.autograd.Function):
    """`nll` and the argmax hits of one batch in a single softmax pass: (loss (M, B), hit (M, B)).

    The same function as nll(logits, target) with its gradient written out, c·(p − onehot) with
    c = p_y/(p_y + 1e-12), so that training needs no softmax backward, no argmax pass and no
    scatter of the gather's gradient (1.6x faster on Exp 5's 1024-example batches). A hit is
    exp(logit_y − max) == 1, i.e. the target reaches the maximum (argmax up to exact float ties).
    """

    @staticmethod
    def forward(ctx, logits, target):
        e = (logits - logits.amax(-1, keepdim=True)).exp_()
        e_y = e.gather(-1, target[..., None])[..., 0]
        total = e.sum(-1)
        p_y = e_y / total
        ctx.save_for_backward(e, total, p_y, target)
        return -(p_y + 1e-12).log(), e_y == 1.0

    @staticmethod
    def backward(ctx, grad, _):
        e, total, p_y, target = ctx.saved_tensors
        c = grad * p_y / (p_y + 1e-12)
        d = e * (c / total)[..., None]                                        # c·p
        return d.scatter_add_(-1, target[..., None], -c[..., None]), None


@torch.no_grad()
def evaluate_table(model: AoT, task: LookupTask, batch_size: int = 8192, with_bits: bool = False):
    """Exact accuracy and KL over every context (N², each with prior 1/N²), per model: (M,), (M,).

    with_bits: also the memorized bits Σ_t max(0, log2 N − NLL_t in bits), (M,), for bits per parameter.
    """
    ctx, answer = task.all_contexts()
    M = model.num_models
    hits = torch.zeros(M, dtype=torch.float64, device=ctx.device)
    loss, bits = torch.zeros_like(hits), torch.zeros_like(hits)
    log2_n = torch.log2(torch.tensor(float(task.vocab)))
    for start in range(0, len(ctx), batch_size):
        c, y = ctx[start:start + batch_size], answer[..., start:start + batch_size]   # y: (b,) or (M, b)
        logits = model(c.expand(M, -1, -1))                                   # (M, b, N)
        y = y.expand(M, -1)
        hits += (logits.argmax(-1) == y).sum(1).double()
        per = nll(logits, y)                                                  # (M, b) nats
        loss += per.sum(1).double()
        bits += (log2_n - per / torch.log(torch.tensor(2.0))).clamp(min=0).sum(1).double()
    if with_bits:
        return hits / len(ctx), loss / len(ctx), bits
    return hits / len(ctx), loss / len(ctx)


def train_step(model: AoT, tokens: torch.Tensor, opt, acc_hist: torch.Tensor, loss_hist: torch.Tensor,
               step: int) -> None:
    """One optimizer step of every model on its batch tokens (M, B, 3); the batch's accuracy and loss,
    from the forward pass before the step, go into the histories on the device (no host sync)."""
    logits = model(tokens[..., :2])                                   # (M, B, N)
    loss, hit = NLLAndHits.apply(logits, tokens[..., 2])              # (M, B) each
    with torch.no_grad():
        acc_hist[:, step] = hit.float().mean(1)
        loss_hist[:, step] = loss.mean(1)
    opt.zero_grad()
    loss.mean(1).sum().backward()   # sum over models of each model's mean loss
    opt.step()


def per_epoch_lr(holder: torch.optim.Optimizer, cfg: TrainConfig) -> LambdaLR:
    """The effective lr of the step's epoch (dpc.schedule), stepped after every step: with a base lr
    of 1.0 LambdaLR's lr is the rule's number exactly (as the original, which set it once an epoch)."""
    return LambdaLR(holder, lambda step: effective_lr(step // cfg.batches, cfg.epochs, cfg.lr, cfg.lr_low))


def train(model: AoT, task: LookupTask, seeds: list[int], cfg: TrainConfig,
          checkpoint_path: str | None = None, progress: bool = True, desc: str = "train") -> list[RunResult]:
    """Train M models on the task's fixed sample; return one RunResult per model."""
    device = task.samples.device
    M, n = len(seeds), task.samples.shape[-2]   # samples (n, 3) shared, or (M, n, 3) one a model
    if n != cfg.batch_size * cfg.batches:
        raise ValueError(f"sample has {n} trigrams, expected batch_size*batches = {cfg.batch_size * cfg.batches}")
    total = cfg.epochs * cfg.batches
    params = [p for p in model.parameters() if p.requires_grad]
    opt = StackedAdam(params, 1.0, [total] * M, lambda holder, _: per_epoch_lr(holder, cfg))
    gens = [torch.Generator().manual_seed(int(s) + 1) for s in seeds]         # per-model shuffling
    acc_hist = torch.zeros(M, total, device=device)                           # per-batch accuracy
    loss_hist = torch.zeros(M, total, device=device)
    epoch = 0

    run_config = {"cfg": asdict(cfg), "seeds": seeds, "n": n,
                  "model": [model.vocab, model.dim, model.head_dim, model.heads, model.width, model.layers,
                            model.per_head_proj]}
    saved = ckpt.load(checkpoint_path, run_config)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        for g, st in zip(gens, saved["gens"]):
            g.set_state(st)
        acc_hist, loss_hist = saved["acc_hist"].to(device), saved["loss_hist"].to(device)
        epoch = saved["epoch"]
    clock = ckpt.TrainingClock(saved)

    last_save = time.monotonic()
    bar = Progress(total, epoch * cfg.batches, desc, enabled=progress)
    B = cfg.batch_size
    while epoch < cfg.epochs:
        perm = torch.stack([torch.randperm(n, generator=g) for g in gens]).to(device)   # (M, n)
        own = task.samples.gather(1, perm[..., None].expand(-1, -1, 3)) if task.samples.dim() == 3 else None
        batches = (task.samples[perm] if own is None else own).view(M, cfg.batches, B, 3)   # (M, batches, B, 3)
        for b in range(cfg.batches):
            train_step(model, batches[:, b], opt, acc_hist, loss_hist, epoch * cfg.batches + b)
        epoch += 1
        bar.update(cfg.batches)
        done = slice((epoch - 1) * cfg.batches, epoch * cfg.batches)   # this epoch's batches, all models
        bar.log(epoch=epoch, loss=float(loss_hist[:, done].mean()), acc=float(acc_hist[:, done].mean()))
        if checkpoint_path and cfg.checkpoint_every_s >= 0 and epoch < cfg.epochs \
                and time.monotonic() - last_save >= cfg.checkpoint_every_s:
            ckpt.save(checkpoint_path, {"model": model.state_dict(), "opt": opt.state_dict(),
                                        "gens": [g.get_state() for g in gens], "epoch": epoch,
                                        "acc_hist": acc_hist.cpu(), "loss_hist": loss_hist.cpu(),
                                        **clock.state()}, run_config)
            last_save = time.monotonic()
    if not bool(torch.isfinite(loss_hist[:, total - 1]).all()):   # a diverged run is an error, not a result
        raise TrainingFailed(f"seeds {seeds}: the training loss is not finite at the end "
                             f"({loss_hist[:, total - 1].tolist()}; lr {cfg.lr}); nothing is written")
    lo = max(total - cfg.window - 1, 0)          # Acc[-101:-1]: the window before the last batch
    acc_window = acc_hist[:, lo:total - 1].mean(1)
    loss_window = loss_hist[:, lo:total - 1].mean(1)
    acc_table, kl_table, bits = evaluate_table(model, task, cfg.eval_batch_size, with_bits=True)
    bar.close(acc_window=float(acc_window.mean()), acc_table=float(acc_table.mean()), kl=float(kl_table.mean()))
    return [RunResult(float(acc_window[m]), float(acc_table[m]), float(loss_window[m]), float(kl_table[m]),
                      total, float(bits[m]), clock.seconds(), clock.segments) for m in range(M)]


def train_config(s: dict) -> TrainConfig:
    return TrainConfig(batch_size=s["batch_size"], batches=s["batches"], epochs=s["epochs"], lr=s["lr"],
                       lr_low=s["lr_low"], window=s["window"])


def _point_key(s: dict, series_value, x: int, seeds: list[int], device) -> dict:
    """What one grid point's rows depend on: a saved point is reused only for this very key."""
    return {"settings": s, "series": series_value, "x": x, "seeds": seeds, "device": str(device)}


def finished_path(prefix: str, x: int) -> str:
    return f"{prefix}_x{x}.done.pt"


def clear_checkpoints(prefix: str | None, s: dict) -> None:
    """Remove a job's per-point files (training checkpoints and finished rows): call once its output
    Parquet is written, never before, so a kill in between loses nothing."""
    if prefix:
        for x in s["x"]["values"]:
            ckpt.remove(f"{prefix}_x{x}.pt")
            ckpt.remove(finished_path(prefix, x))


def run_job(s: dict, experiment: str, label: str, scale: str, device: str = "auto",
            checkpoint_prefix: str | None = None, progress: bool = True) -> pd.DataFrame:
    """Train every grid point of one curve (all repetitions batched); one row per (x, repetition).

    s: grid.settings(preset, experiment); label: the series value as a string, or 'all'.
    With a checkpoint prefix, a point in training is checkpointed every cfg.checkpoint_every_s, and a
    finished point's rows are saved at once: a requeued job resumes the point it was in and retrains
    none of the points it had finished. `clear_checkpoints` removes them after the output is written.
    """
    device = pick_device(device)
    series_value = grid.series_value(label)
    reps = list(range(s["repetitions"]))
    seeds = [grid.repetition_seed(s["group_seed"], r) for r in reps]
    N, cfg = s["N"], train_config(s)
    task = make_task(N, cfg.batch_size * cfg.batches, s["group_seed"]).to(device)
    coverage = len(np.unique((task.samples[:, 0] * N + task.samples[:, 1]).cpu().numpy())) / N ** 2

    frames = []
    for x in s["x"]["values"]:
        key = _point_key(s, series_value, x, seeds, device)
        done = finished_path(checkpoint_prefix, x) if checkpoint_prefix else None
        saved = ckpt.load(done, key)
        if saved is not None:
            print(f"{experiment} {label} x={x}: finished before a requeue, rows reused", flush=True)
            frames.append(saved["rows"])
            continue
        m = grid.shape(s, series_value, x)
        memory.check(f"dpc {experiment} {label} x={x}", grid.point_bytes(s, series_value, x), memory.AOT_KNOBS)
        model = AoT(seeds, vocab=N, per_head_proj=s["per_head_proj"], **m).to(device)
        ck = f"{checkpoint_prefix}_x{x}.pt" if checkpoint_prefix else None
        results = train(model, task, seeds, cfg, ck, progress, desc=f"{experiment} {label} x={x}")
        lb = bounds.our_bound(m["heads"], m["head_dim"], m["dim"], N)
        prev = bounds.previous_bound(m["heads"], m["head_dim"], N)
        rows = pd.DataFrame([{
            "family": grid.FAMILY, "scale": scale, "experiment": experiment, "group": s["group"],
            "series_key": s["series"]["key"] if s.get("series") else "none",
            "series": series_value if series_value is not None else -1,
            "x_key": s["x"]["key"], "x": x, "N": N, **m, "per_head_proj": s["per_head_proj"],
            "repetition": rep, "seed": seed, "group_seed": s["group_seed"], **asdict(r),
            "param_count": param_count(N, per_head_proj=s["per_head_proj"], **m),
            "param_axis": grid.axis_params(s["axis"], N, m["dim"], m["heads"], m["width"], m["head_dim"]),
            "axis": s["axis"], "fit": s["fit"], "chance": 1 / N, "bound": lb, "prev_bound": prev,
            "contexts": N * N, "sample_coverage": coverage, "batch_size": cfg.batch_size,
            "batches": cfg.batches, "epochs": cfg.epochs, "lr": cfg.lr, "lr_low": cfg.lr_low,
            "device": str(device), "models_in_job": len(seeds),
        } for rep, seed, r in zip(reps, seeds, results)])
        if done:   # the finished rows first, then drop the point's training checkpoint
            ckpt.save(done, {"rows": rows}, key)
            ckpt.remove(ck)
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)
