"""Training loop for MLT's synthetic memorization runs (spec mahdavi.md §2.2).

Faithful to the original protocol:
  Adam (default betas, no weight decay), batch 256 reshuffled every epoch, fp32;
  S = max(floor(500·T/256), min_steps) steps, 5% linear warm-up then cosine to 0;
  full-train-set evaluation at step 0 and every `eval_every` steps (and, here, at the last step);
  the checkpoint with the lowest full-train loss is the one reported (accuracy, or MSE);
  early stop once train accuracy is exactly 1.0 (classification only; off for saturation runs).

M models (one per seed) train in one batched computation; each keeps its own data, init, shuffling
and early stop, so model m's result does not depend on which other models share its batch.
`train_point` runs one grid point (settings from memcap.mlt_synthetic.grid) and returns its table of runs.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import pandas as pd
import torch
import torch.nn.functional as F

from memcap import checkpoint as ckpt
from memcap.errors import TrainingFailed
from memcap.lean_adam import LeanAdam
from memcap.mlt_synthetic.grid import EVAL_BATCH, shape
from memcap.mlt_synthetic.schedule import mlt_num_steps, warmup_cosine
from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_shared_grad import shared_context_grads
from memcap.progress import Progress
from memcap.runtime import pick_device
from memcap.tasks.mlt_data import MLTData, make_data


@dataclass
class TrainConfig:
    lr: float = 1e-3
    batch_size: int = 256
    epochs: int = 500            # the "500" in S = max(500·T/256, min_steps)
    min_steps: int = 50_000
    eval_every: int = 500
    eval_batch_size: int = EVAL_BATCH
    early_stop: bool = True
    checkpoint_every_s: float = 300.0   # wall-clock seconds between checkpoints (0: every eval, <0: never)


@dataclass
class RunResult:
    mem_acc: float               # train accuracy of the lowest-loss checkpoint (NaN for regression)
    mem_loss: float              # train loss (CE or MSE) of that checkpoint
    memorized_bits: float        # Σ_t max(0, log2 C − NLL_t in bits) at that checkpoint (NaN: regression)
    best_step: int
    steps_run: int
    steps_planned: int
    early_stopped: bool
    wall_time_s: float = float("nan")   # training seconds of the job (all its models), every segment
    segments: int = 1                   # 1 + how many times the job was resumed from a checkpoint


def _example_loss(out: torch.Tensor, labels: torch.Tensor, classification: bool) -> torch.Tensor:
    """Per-example loss (M, B): cross-entropy in nats over out (M, B, C), or squared error of out[..., 0]."""
    if classification:
        M, B, C = out.shape
        return F.cross_entropy(out.reshape(M * B, C), labels.reshape(M * B), reduction="none").view(M, B)
    return F.mse_loss(out[..., 0], labels, reduction="none")


def _loss_and_hits(out: torch.Tensor, labels: torch.Tensor, classification: bool):
    """Per-model summed loss, correct count and memorized bits over a batch: out (M, B, C), labels (M, B).

    Memorized bits of an example = max(0, log2 C − its NLL in bits): what the model knows about the
    label beyond chance (the bits-per-parameter measure of the report).
    """
    loss = _example_loss(out, labels, classification)
    if classification:
        hits = (out.argmax(-1) == labels).sum(1)
        bits = (math.log2(out.shape[-1]) - loss / math.log(2)).clamp(min=0).sum(1)
        return loss.sum(1), hits, bits
    return loss.sum(1), torch.zeros_like(loss[:, 0]), torch.full_like(loss[:, 0], float("nan"))


@torch.no_grad()
def evaluate(model: MLTAttention, data: MLTData, classification: bool, batch_size: int = 8192):
    """Full-train-set loss and accuracy per model, in order (the original's unshuffled loader)."""
    M, T = data.queries.shape[:2]
    loss = torch.zeros(M, device=data.queries.device, dtype=torch.float64)
    hits, bits = torch.zeros_like(loss), torch.zeros_like(loss)
    for start in range(0, T, batch_size):
        idx = torch.arange(start, min(start + batch_size, T), device=loss.device).expand(M, -1)
        q, c, y = data.batch(idx)
        l, h, b = _loss_and_hits(model(q, c), y, classification)
        loss += l.double()
        hits += h.double()
        bits += b.double()
    return loss / T, hits / T, bits


class _Shuffler:
    """Per-model epoch permutations from per-model generators; its state is part of a checkpoint.

    Several epochs' permutations are drawn on the CPU and copied to the device at once (about
    PERMUTED_ROWS indices per model), so a small dataset (T = 550: a new epoch every ~2 steps) does not
    copy to the GPU on the per-step path. Each generator draws the same permutations in the same order
    as one epoch at a time would."""

    PERMUTED_ROWS = 1 << 16

    def __init__(self, seeds: list[int], size: int, device):
        self.gens = [torch.Generator().manual_seed(int(s) + 1) for s in seeds]
        self.size, self.device, self.pos = size, device, size
        self.ahead = max(1, self.PERMUTED_ROWS // size)    # epochs per draw
        self.perms, self.epoch = None, 0                   # (M, epochs, size) on the device

    def next(self, batch_size: int) -> torch.Tensor:
        if self.pos >= self.size:  # new epoch; the last batch of an epoch may be short
            self.epoch += 1
            if self.perms is None or self.epoch >= self.perms.shape[1]:
                self.perms = torch.stack([torch.stack([torch.randperm(self.size, generator=g)
                                                       for _ in range(self.ahead)]) for g in self.gens]).to(self.device)
                self.epoch = 0
            self.pos = 0
        idx = self.perms[:, self.epoch, self.pos:self.pos + batch_size]
        self.pos += batch_size
        return idx

    def state(self):
        return {"gens": [g.get_state() for g in self.gens], "pos": self.pos, "epoch": self.epoch,
                "perms": None if self.perms is None else self.perms.cpu()}

    def load(self, s):
        for g, st in zip(self.gens, s["gens"]):
            g.set_state(st)
        self.pos, self.epoch = s["pos"], s["epoch"]
        self.perms = None if s["perms"] is None else s["perms"].to(self.device)


def train_step(model: MLTAttention, data: MLTData, shuffler: _Shuffler, opt, sched, batch_size: int,
               classification: bool) -> None:
    """One optimizer step of every model on its next batch (no host sync: nothing is read back)."""
    q, c, y = data.batch(shuffler.next(batch_size))
    if c.dim() == 3:   # shared context: the same gradient without autograd's per-node cost
        shared_context_grads(model, q, c, y, classification)
    else:
        loss = _example_loss(model(q, c), y, classification).sum(1)  # no accuracy or bits: not read here
        opt.zero_grad(set_to_none=True)
        (loss / y.shape[1]).sum().backward()   # sum over models of each model's mean loss
    opt.step()
    sched.step()


def train(model: MLTAttention, data: MLTData, seeds: list[int], cfg: TrainConfig, classification: bool,
          checkpoint_path: str | None = None, progress: bool = True, desc: str = "train"):
    """Train M models; return ([RunResult per model], best-checkpoint parameters (M, ...) dict)."""
    device = data.queries.device
    M, T = len(seeds), data.size
    total = mlt_num_steps(T, cfg.min_steps, cfg.epochs, cfg.batch_size)
    opt = LeanAdam(model.parameters(), lr=cfg.lr)   # torch's fused Adam: one kernel for every parameter
    sched = warmup_cosine(opt, total)
    shuffler = _Shuffler(seeds, T, device)
    best_loss = torch.full((M,), float("inf"), dtype=torch.float64, device=device)
    best_acc = torch.zeros(M, dtype=torch.float64, device=device)
    best_bits = torch.zeros(M, dtype=torch.float64, device=device)
    best_step = torch.zeros(M, dtype=torch.long, device=device)
    done_at = torch.full((M,), -1, dtype=torch.long, device=device)   # early-stop step, -1: running
    best_state = {k: v.detach().clone() for k, v in model.state_dict().items() if k != "pe"}
    step = 0

    # "format" 3: the shuffler keeps several epochs' permutations (older checkpoints are not resumed).
    run_config = {"format": 3, "cfg": asdict(cfg), "seeds": seeds, "T": T, "classification": classification,
                  "device": str(device),   # resumed only on the device it was made on
                  "model": [model.input_dim, model.heads, model.head_dim, model.context_size, model.out_dim]}
    saved = ckpt.load(checkpoint_path, run_config)
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        sched.load_state_dict(saved["sched"])
        shuffler.load(saved["shuffler"])
        best_loss, best_acc, best_bits, best_step, done_at = (
            saved[k].to(device) for k in ("best_loss", "best_acc", "best_bits", "best_step", "done_at"))
        best_state = {k: v.to(device) for k, v in saved["best_state"].items()}
        step = saved["step"]
        print(f"{desc}: resumed from checkpoint {checkpoint_path} at step {step}/{total}", flush=True)
    clock = ckpt.TrainingClock(saved)

    def checkpoint_now():
        ckpt.save(checkpoint_path, {
            "model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
            "shuffler": shuffler.state(), "best_loss": best_loss, "best_acc": best_acc, "best_bits": best_bits,
            "best_step": best_step, "done_at": done_at, "best_state": best_state, "step": step,
            **clock.state()}, run_config)

    def evaluate_and_record():
        loss, acc, bits = evaluate(model, data, classification, cfg.eval_batch_size)
        running = done_at < 0
        better = running & (loss < best_loss)
        best_loss.copy_(torch.where(better, loss, best_loss))
        best_acc.copy_(torch.where(better, acc, best_acc))
        best_bits.copy_(torch.where(better, bits, best_bits))
        best_step.copy_(torch.where(better, torch.full_like(best_step, step), best_step))
        with torch.no_grad():
            for k, v in model.state_dict().items():
                if k in best_state:
                    mask = better.view(-1, *([1] * (v.dim() - 1)))
                    best_state[k].copy_(torch.where(mask, v, best_state[k]))
        if classification and cfg.early_stop:
            done_at.copy_(torch.where(running & (acc >= 1.0), torch.full_like(done_at, step), done_at))

    last_save = time.monotonic()
    bar = Progress(total, step, desc, enabled=progress)
    if step == 0:
        evaluate_and_record()
    # done_at changes only at evaluations: read it on the host there, not at every step (on a GPU each
    # read waits for the device)
    running = bool((done_at < 0).any())
    with ckpt.StopRequest() as stop:
        while step < total and running:
            train_step(model, data, shuffler, opt, sched, cfg.batch_size, classification)
            step += 1
            bar.update(1)
            if step % cfg.eval_every == 0 or step == total:
                evaluate_and_record()
                running = bool((done_at < 0).any())
                bar.log(best_loss=float(best_loss.mean()), **({"best_acc": float(best_acc.mean())} if classification else {}))
                if checkpoint_path and 0 <= cfg.checkpoint_every_s <= time.monotonic() - last_save:
                    checkpoint_now()
                    last_save = time.monotonic()
            if stop.requested:   # SIGTERM: keep everything trained so far, then exit as killed
                if checkpoint_path:
                    checkpoint_now()
                print(f"{desc}: stopped by SIGTERM at step {step}/{total}"
                      f"{'; checkpoint saved' if checkpoint_path else ''}", flush=True)
                raise SystemExit(ckpt.StopRequest.EXIT_CODE)
    bar.close(best_loss=float(best_loss.mean()), **({"best_acc": float(best_acc.mean())} if classification else {}))

    _refuse_untrained(seeds, best_loss, best_step, done_at, step, cfg)
    results = []
    for m in range(M):
        stopped = int(done_at[m]) >= 0
        results.append(RunResult(
            mem_acc=float(best_acc[m]) if classification else float("nan"),
            mem_loss=float(best_loss[m]), memorized_bits=float(best_bits[m]), best_step=int(best_step[m]),
            steps_run=int(done_at[m]) if stopped else step, steps_planned=total, early_stopped=stopped,
            wall_time_s=clock.seconds(), segments=clock.segments))
    return results, best_state


def _refuse_untrained(seeds, best_loss, best_step, done_at, step, cfg: TrainConfig) -> None:
    """A model whose loss was never finite, or never went below its step-0 evaluation although it
    trained, has learned nothing: recording its initialisation as a result would be a lie."""
    trained = (done_at != 0) & (step > 0)
    failed = [s for s, loss, best, t in zip(seeds, best_loss.tolist(), best_step.tolist(), trained.tolist())
              if not math.isfinite(loss) or (t and best == 0)]
    if failed:
        raise TrainingFailed(f"seeds {failed}: training ended no better than the initialisation (best loss "
                             f"{[round(float(x), 6) for x in best_loss.tolist()]} at steps {best_step.tolist()}, "
                             f"lr {cfg.lr}, {step} steps); nothing is written. Check lr, batch_size and the "
                             f"steps in params.yaml")


def train_point(settings: dict, value: int, dataset_size: int, device="auto", labels: dict | None = None,
                checkpoint_path: str | None = None, checkpoint_every_s: float = 300.0, progress: bool = True,
                desc: str | None = None):
    """Train every seed of one grid point; return (runs DataFrame, best weights, model).

    settings: resolved sweep settings (memcap.mlt_synthetic.grid.sweep_settings, or any dict with the same keys);
    value replaces the swept quantity; device: 'auto' | 'cpu' | 'cuda' or a torch.device; labels:
    columns put first in every row (the family CLI passes family, sweep and scale).
    """
    s = settings
    shp = shape(s, value)
    classification = s["task"] == "classification"
    out_dim = s["num_classes"] if classification else 1
    device = pick_device(device) if isinstance(device, str) else device
    seeds = [int(x) for x in s["seeds"]]

    data = make_data(seeds, dataset_size=dataset_size, context_size=shp["context_size"],
                     input_dim=s["input_dim"], context=s["context"], task=s["task"],
                     num_classes=s["num_classes"]).to(device)
    model = MLTAttention(seeds, input_dim=s["input_dim"], heads=shp["heads"],
                         context_size=shp["context_size"], head_dim=shp["head_dim"],
                         out_dim=out_dim).to(device)
    # How often to checkpoint changes no result: it is an argument, not part of the settings.
    cfg = TrainConfig(lr=s["lr"], batch_size=s["batch_size"], epochs=s["epochs"], min_steps=s["min_steps"],
                      eval_every=s["eval_every"], early_stop=s["early_stop"],
                      checkpoint_every_s=checkpoint_every_s)
    results, best = train(model, data, seeds, cfg, classification, checkpoint_path, progress,
                          desc=desc or f"{s['vary']}={value} T={dataset_size}")

    rows = []
    for seed, r in zip(seeds, results):
        rows.append({
            **(labels or {}), "vary": s["vary"], "x": value,
            "task": s["task"], "context": s["context"], "dataset_size": dataset_size,
            "heads": shp["heads"], "context_size": shp["context_size"],
            "head_dim": shp["head_dim"] or s["input_dim"], "input_dim": s["input_dim"],
            "num_classes": out_dim, "seed": seed, **asdict(r),
            "param_count": model.shared_params, "lr": s["lr"], "batch_size": s["batch_size"],
            "min_steps": s["min_steps"], "device": str(device), "models_in_job": len(seeds),
        })
    return pd.DataFrame(rows), best, model


@torch.no_grad()
def attention_maxima(model: MLTAttention, best: dict, settings: dict, dataset_size: int,
                     sweep: str) -> pd.DataFrame:
    """Max attention weight per (seed, example, head) of the best checkpoint (Fig 3's raw data)."""
    s = settings
    model.load_state_dict({**model.state_dict(), **best})
    seeds = [int(x) for x in s["seeds"]]
    n = model.context_size
    data = make_data(seeds, dataset_size=dataset_size, context_size=n, input_dim=s["input_dim"],
                     context=s["context"], task=s["task"], num_classes=s["num_classes"]).to(model.pe.device)
    idx = torch.arange(dataset_size, device=model.pe.device).expand(len(seeds), -1)
    q, c, _ = data.batch(idx)
    alpha = model.attention(q, c).amax(-1).cpu()            # (M, T, H)
    M, T, H = alpha.shape
    return pd.DataFrame({
        "sweep": sweep, "heads": model.heads, "dataset_size": dataset_size,
        "seed": torch.tensor(seeds).repeat_interleave(T * H).numpy(),
        "example": torch.arange(T).repeat_interleave(H).repeat(M).numpy(),
        "head": torch.arange(H).repeat(M * T).numpy(),
        "max_attention": alpha.reshape(-1).numpy(),
    })
