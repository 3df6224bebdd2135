"""Training loop for MLT's synthetic memorization runs (spec mahdavi.md §2.2).

Faithful to the original protocol:
  Adam (default betas, no weight decay), batch 256 reshuffled every epoch, fp32;
  S = max(floor(500·T/256), min_steps) steps, 5% linear warm-up then cosine to 0;
  full-train-set evaluation at step 0 and every `eval_every` steps (and, here, at the last step);
  the checkpoint with the lowest full-train loss is the one reported (accuracy, or MSE);
  early stop once train accuracy is exactly 1.0 (classification only; off for saturation runs).

M models train in one batched computation: the seeds of a grid point, or a pack of many grid points
(memcap.mlt_synthetic.pack), each with its own T and so its own step count and schedule. Each keeps
its own data, init, shuffling and early stop, so model m's result does not depend on which other
models share its batch; a model that is done leaves the batch. `train_point` runs one grid point,
`train_jobs` a pack of jobs, each returning a table of runs per job.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Callable

import pandas as pd
import torch
import torch.nn.functional as F

from memcap import checkpoint as ckpt
from memcap.errors import TrainingFailed
from memcap.mlt_synthetic.batches import BatchStream
from memcap.mlt_synthetic.grid import EVAL_BATCH, EVAL_BYTES
from memcap.mlt_synthetic.pack import Job, build, job_rows
from memcap.mlt_synthetic.schedule import mlt_num_steps, warmup_cosine
from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_shared_grad import shared_context_grads
from memcap.progress import Progress
from memcap.runtime import pick_device
from memcap.stacked_adam import StackedAdam
from memcap.tasks.mlt_data import MLTData


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


def _loss_and_hits(out: torch.Tensor, labels: torch.Tensor, classification: bool, valid=None):
    """Per-model summed loss, correct count and memorized bits over a batch: out (M, B, C), labels (M, B);
    valid (M, B): the rows that count (a pack's models of smaller T), None: all.

    Memorized bits of an example = max(0, log2 C − its NLL in bits): what the model knows about the
    label beyond chance (the bits-per-parameter measure of the report).
    """
    loss = _example_loss(out, labels, classification)
    if valid is not None:
        loss = torch.where(valid, loss, 0.0)
    if classification:
        hits = out.argmax(-1) == labels
        bits = (math.log2(out.shape[-1]) - loss / math.log(2)).clamp(min=0)
        if valid is not None:
            hits, bits = hits & valid, torch.where(valid, bits, 0.0)
        return loss.sum(1), hits.sum(1), bits.sum(1)
    return loss.sum(1), torch.zeros_like(loss[:, 0]), torch.full_like(loss[:, 0], float("nan"))


CPU_EVAL_ROWS = 2048   # rows a CPU forward pass takes at once: a chunk of 8,192 spills its caches (~2x slower)


def _forward_parts(model: MLTAttention, rows: int, device: torch.device) -> int:
    """Into how many forward passes an evaluation chunk of `rows` examples goes: on a CPU, parts of
    at least CPU_EVAL_ROWS / 2 rows where the model takes the same products for them as for the
    whole chunk (each row's outputs are then the whole chunk's, bit for bit, so the sums are too)."""
    if device.type != "cpu" or rows < 2 * CPU_EVAL_ROWS:
        return 1
    parts = math.ceil(rows / CPU_EVAL_ROWS)
    return parts if model.formulation(rows // parts) == model.formulation(rows) else 1


def _eval_slices(model: MLTAttention, data: MLTData, rows: int) -> list[list[int]]:
    """Models evaluated together: as many as keep a chunk of `rows` examples under EVAL_BYTES. Each
    model's numbers do not depend on the slicing (its rows are chunked the same either way)."""
    H, n, d, C = model.heads, model.context_size, model.input_dim, model.out_dim
    per_model = 4 * rows * (4 * H * n + 3 * C + 2 * d + (0 if data.shared else 4 * n * d))
    k = max(1, EVAL_BYTES // per_model)
    M = model.num_models
    return [list(range(a, min(a + k, M))) for a in range(0, M, k)]


@torch.no_grad()
def evaluate(model: MLTAttention, data: MLTData, classification: bool, batch_size: int = EVAL_BATCH):
    """Full-train-set loss and accuracy per model, in order (the original's unshuffled loader), and
    memorized bits; every model's own T rows in chunks of batch_size. A chunk past a model's T leaves
    it out (a pack of T = 30,000-130,000 would otherwise pass every model over 130,000 rows)."""
    M, device = model.num_models, data.query_rows.device
    loss = torch.zeros(M, device=device, dtype=torch.float64)
    hits, bits = torch.zeros_like(loss), torch.zeros_like(loss)
    slices = _eval_slices(model, data, batch_size)
    for keep in slices:
        T = max(data.sizes[k] for k in keep)
        live = None
        for start in range(0, T, batch_size):
            rows_left = [k for k in keep if data.sizes[k] > start]
            if rows_left != live:   # the models with rows left in this chunk, and only they
                live = rows_left
                whole = len(live) == M
                sub_model, sub_data = (model, data) if whole else (model.select(live), data.select(live))
                at = torch.tensor(live, device=device)
            idx = torch.arange(start, min(start + batch_size, T), device=device).expand(len(live), -1)
            valid = None
            if min(sub_data.sizes) < start + idx.shape[1]:   # a model with fewer rows: mask its tail
                valid = idx < sub_data.size_of[:, None]
                idx = torch.minimum(idx, sub_data.size_of[:, None] - 1)
            outs, ys = [], []
            for part in idx.tensor_split(_forward_parts(sub_model, idx.shape[1], device), dim=1):
                q, c, y = sub_data.batch(part)
                outs.append(sub_model(q, c))
                ys.append(y)
            out, y = (outs[0], ys[0]) if len(outs) == 1 else (torch.cat(outs, 1), torch.cat(ys, 1))
            l, h, b = _loss_and_hits(out, y, classification, valid)
            loss.index_add_(0, at, l.double())
            hits.index_add_(0, at, h.double())
            bits.index_add_(0, at, b.double())
    return loss / data.size_of, hits / data.size_of, bits


def train_step(model: MLTAttention, data: MLTData, batches: BatchStream, opt: StackedAdam,
               classification: bool) -> None:
    """One optimizer step of every model on its next batch (no host sync: nothing is read back)."""
    step_kernels(model, data, *batches.next(), opt, classification)
    opt.advance()


def step_kernels(model: MLTAttention, data: MLTData, idx: torch.Tensor, valid, rows, opt: StackedAdam,
                 classification: bool) -> None:
    """The device work of a step on rows idx (M, w) of each model (valid, rows: a short batch's mask
    and row counts, else None): batch, gradient, Adam update. What a CUDA graph records
    (memcap.mlt_synthetic.graphed); the schedules' step is the caller's."""
    q, c, y = data.batch(idx)
    if c.dim() == 3:   # shared context: the same gradient without autograd's per-node cost
        shared_context_grads(model, q, c, y, classification, rows, valid)
    else:
        loss = _example_loss(model(q, c), y, classification)   # no accuracy or bits: not read here
        if valid is not None:
            loss = loss * valid
        opt.zero_grad()
        (loss.sum(1) / (y.shape[1] if rows is None else rows.view(-1))).sum().backward()   # Σ_m mean loss_m
    opt.update()


@dataclass
class _Best:
    """Per model (dim 0): the lowest full-train loss so far, its accuracy, bits, step and parameters,
    and the early-stop step (-1: running)."""
    loss: torch.Tensor
    acc: torch.Tensor
    bits: torch.Tensor
    step: torch.Tensor
    done_at: torch.Tensor
    state: dict

    @classmethod
    def start(cls, model: MLTAttention) -> "_Best":
        M, device = model.num_models, model.pe.device
        loss = torch.full((M,), float("inf"), dtype=torch.float64, device=device)
        return cls(loss, torch.zeros_like(loss), torch.zeros_like(loss), torch.zeros(M, dtype=torch.long, device=device),
                   torch.full((M,), -1, dtype=torch.long, device=device),
                   {k: v.detach().clone() for k, v in model.named_parameters()})

    @torch.no_grad()
    def record(self, model, loss, acc, bits, step: int, eligible: torch.Tensor, early_stop: bool) -> None:
        better = eligible & (self.done_at < 0) & (loss < self.loss)
        self.loss.copy_(torch.where(better, loss, self.loss))
        self.acc.copy_(torch.where(better, acc, self.acc))
        self.bits.copy_(torch.where(better, bits, self.bits))
        self.step.copy_(torch.where(better, torch.full_like(self.step, step), self.step))
        for k, v in model.named_parameters():
            mask = better.view(-1, *([1] * (v.dim() - 1)))
            self.state[k].copy_(torch.where(mask, v, self.state[k]))
        if early_stop:
            stop = eligible & (self.done_at < 0) & (acc >= 1.0)
            self.done_at.copy_(torch.where(stop, torch.full_like(self.done_at, step), self.done_at))

    @torch.no_grad()
    def keep(self, keep: list[int]) -> None:
        index = torch.tensor(keep, device=self.loss.device)
        for name in ("loss", "acc", "bits", "step", "done_at"):
            setattr(self, name, getattr(self, name).index_select(0, index))
        self.state = {k: v.index_select(0, index) for k, v in self.state.items()}

    def tensors(self) -> dict:
        return {"loss": self.loss, "acc": self.acc, "bits": self.bits, "step": self.step,
                "done_at": self.done_at, "state": self.state}


def stack_rows(rows: list[dict[str, torch.Tensor]], device: torch.device) -> dict[str, torch.Tensor]:
    """One state of M models from one row per model, each row moved to `device` first: a member that
    finished before a resume has its best parameters from the checkpoint, on the CPU, while the pack
    trains on the GPU."""
    return {k: torch.cat([row[k].to(device) for row in rows]) for k in rows[0]}


def train(model: MLTAttention, data: MLTData, seeds: list[int], cfg: TrainConfig, classification: bool,
          checkpoint_path: str | None = None, progress: bool = True, desc: str = "train",
          on_finish: Callable[[dict[int, RunResult]], None] | None = None, skip: set[int] = frozenset(),
          cuda_graphs: bool = False):
    """Train M models: a grid point's seeds, or a pack of many grid points (model and data stacked by
    memcap.mlt_synthetic.pack; each model its own T, so its own step count and schedule).

    A model leaves the pack once it is done (early stop, or its last step): it costs no more work, and
    `on_finish({position: RunResult})` hears of it at once. Models in `skip` never train (finished
    elsewhere). cuda_graphs: replay each step from CUDA graphs (memcap.mlt_synthetic.graphed; a CUDA
    device only, not yet checked on one). Returns ([RunResult per model, None for skipped], best
    parameters (M, ...)); the model then holds every model's best parameters."""
    device = data.query_rows.device
    M = len(seeds)
    sizes = list(data.sizes)
    totals = [mlt_num_steps(T, cfg.min_steps, cfg.epochs, cfg.batch_size) for T in sizes]
    full_shapes, full_mask = list(model.shapes), model.context_mask
    # `skip` is not in it: a pack stopped after some jobs finished is resumed by a run that skips them
    run_config = {"format": 4, "cfg": asdict(cfg), "seeds": seeds, "sizes": sizes,
                  "classification": classification,
                  "device": str(device),   # resumed only on the device it was made on
                  **({"cuda_graphs": True} if cuda_graphs else {}),   # and only stepped the same way
                  "model": [model.input_dim, model.out_dim, model.shapes]}
    saved = ckpt.load(checkpoint_path, run_config)
    if saved is not None and skip & set(saved["active"]):   # killed after a job's file, before its checkpoint
        print(f"checkpoint {checkpoint_path} trains models finished since; training starts afresh", flush=True)
        saved = None
    active = [m for m in range(M) if m not in skip] if saved is None else list(saved["active"])
    finished: dict[int, tuple[RunResult, dict]] = {} if saved is None else {
        int(k): (RunResult(**r), st) for k, (r, st) in saved["finished"].items()}
    failed: list[int] = [] if saved is None else list(saved["failed"])
    first_params = {k: v.detach()[:1].clone() for k, v in model.named_parameters()}   # a shape for skipped rows

    def keep_active(keep: list[int]) -> None:   # positions within the active models
        model.keep(keep)
        nonlocal data
        data = data.select(keep)

    if len(active) < M:
        keep_active(active)
    act_totals = [totals[m] for m in active]
    last_steps = set(act_totals)   # a model's last step is evaluated, whatever eval_every says
    batches = BatchStream([seeds[m] for m in active], list(data.sizes), cfg.batch_size, device)
    opt = StackedAdam(list(model.parameters()), cfg.lr, act_totals, warmup_cosine)
    best = _Best.start(model)
    step = 0
    if saved is not None:
        model.load_state_dict(saved["model"])
        opt.load_state_dict(saved["opt"])
        batches.load(saved["batches"])
        best = _Best(**{k: v.to(device) for k, v in saved["best"].items() if k != "state"},
                     state={n: t.to(device) for n, t in saved["best"]["state"].items()})
        step = saved["step"]
        print(f"{desc}: resumed from checkpoint {checkpoint_path} at step {step}/{max(totals)} "
              f"({len(active)} of {M} models still training)", flush=True)
    clock = ckpt.TrainingClock(saved)
    graphed = None
    if cuda_graphs and active:
        from memcap.mlt_synthetic.graphed import GraphedStep
        # the step on the pack as it is now: `data` is rebound when models leave
        graphed = GraphedStep(lambda i, v, r: step_kernels(model, data, i, v, r, opt, classification),
                              opt, device)

    def checkpoint_now():
        ckpt.save(checkpoint_path, {
            "model": model.state_dict(), "opt": opt.state_dict(), "batches": batches.state(),
            "best": best.tensors(), "step": step, "active": active, "failed": failed,
            "finished": {m: (asdict(r), st) for m, (r, st) in finished.items()}, **clock.state()}, run_config)

    def evaluate_and_record():
        eligible = [step % cfg.eval_every == 0 or step == t for t in act_totals]
        loss, acc, bits = evaluate(model, data, classification, cfg.eval_batch_size)
        best.record(model, loss, acc, bits, step, torch.tensor(eligible, device=device),
                    classification and cfg.early_stop)

    def retire() -> None:
        """Models that are done leave the pack; their results are final."""
        nonlocal active, act_totals
        done_at = best.done_at.tolist()
        out = [i for i, (d, t) in enumerate(zip(done_at, act_totals)) if d >= 0 or step >= t]
        if not out:
            return
        losses, steps = best.loss.tolist(), best.step.tolist()
        new = {}
        for i in out:
            m, stopped = active[i], done_at[i] >= 0
            ran = done_at[i] if stopped else step
            if not math.isfinite(losses[i]) or (ran > 0 and steps[i] == 0):   # learned nothing: refused
                failed.append(m)
                continue
            r = RunResult(mem_acc=float(best.acc[i]) if classification else float("nan"), mem_loss=losses[i],
                          memorized_bits=float(best.bits[i]), best_step=steps[i], steps_run=ran,
                          steps_planned=totals[m], early_stopped=stopped, wall_time_s=clock.seconds(),
                          segments=clock.segments)
            finished[m] = (r, {k: v[i:i + 1].clone() for k, v in best.state.items()})
            new[m] = r
        gone = set(out)
        keep = [i for i in range(len(active)) if i not in gone]
        active, act_totals = [active[i] for i in keep], [act_totals[i] for i in keep]
        last_steps.clear()
        last_steps.update(act_totals)
        if keep:
            keep_active(keep)
            opt.keep(keep, list(model.parameters()))
            batches.keep(keep)
            best.keep(keep)
            if graphed is not None:
                graphed.reset()
        if on_finish and new:
            on_finish(new)

    last_save = time.monotonic()
    bar = Progress(max(totals), step, desc, enabled=progress)
    if step == 0 and active:
        evaluate_and_record()
        retire()
    with ckpt.StopRequest() as stop:
        while active:
            if graphed is None:
                train_step(model, data, batches, opt, classification)
            else:
                graphed(batches)
            step += 1
            bar.update(1)
            if step % cfg.eval_every == 0 or step in last_steps:
                evaluate_and_record()
                bar.log(best_loss=float(best.loss.mean()), **({"best_acc": float(best.acc.mean())} if classification else {}),
                        **({"models": len(active)} if M > 1 and len(set(totals)) > 1 else {}))
                retire()
                if active and checkpoint_path and 0 <= cfg.checkpoint_every_s <= time.monotonic() - last_save:
                    checkpoint_now()
                    last_save = time.monotonic()
            if stop.requested and active:   # SIGTERM: keep everything trained so far, then exit as killed
                if checkpoint_path:
                    checkpoint_now()
                print(f"{desc}: stopped by SIGTERM at step {step}/{max(totals)}"
                      f"{'; checkpoint saved' if checkpoint_path else ''}", flush=True)
                raise SystemExit(ckpt.StopRequest.EXIT_CODE)
    results = [finished[m][0] if m in finished else None for m in range(M)]
    bar.close(**({"best_acc": sum(r.mem_acc for r in results if r) / max(1, len(finished))} if classification else {}),
              best_loss=sum(r.mem_loss for r in results if r) / max(1, len(finished)))

    # The model now holds each model's best parameters (a skipped or failed one: the first's, unused).
    best_state = stack_rows([finished[m][1] if m in finished else first_params for m in range(M)], device)
    model.restore(best_state, full_shapes, full_mask)
    if failed:
        raise TrainingFailed(f"seeds {[seeds[m] for m in sorted(failed)]}: training ended no better than the "
                             f"initialisation (T = {[sizes[m] for m in sorted(failed)]}, lr {cfg.lr}); nothing "
                             f"is written for them. Check lr, batch_size and the steps in params.yaml")
    return results, best_state


def train_jobs(jobs: list[Job], device="auto", labels: dict | None = None, checkpoint_path: str | None = None,
               checkpoint_every_s: float = 300.0, progress: bool = True, desc: str = "pack",
               on_job: Callable[[int, pd.DataFrame], None] | None = None, skip: set[int] = frozenset(),
               cuda_graphs: bool = False):
    """Train the jobs of one sweep as one pack (memcap.mlt_synthetic.pack); return (pack, {job index:
    its runs table}). `on_job(i, table)` hears of each job as soon as all its models are done; jobs in
    `skip` (finished elsewhere) are not trained. labels: columns put first in every row. cuda_graphs:
    see train; every row's device then reads e.g. "cuda+graphs"."""
    device = pick_device(device) if isinstance(device, str) else device
    pack = build(jobs, device)
    s = jobs[0].settings
    # How often to checkpoint changes no result: it is an argument, not part of the settings.
    cfg = TrainConfig(lr=s["lr"], batch_size=s["batch_size"], epochs=s["epochs"], min_steps=s["min_steps"],
                      eval_every=s["eval_every"], early_stop=s["early_stop"], checkpoint_every_s=checkpoint_every_s)
    results: dict[int, RunResult] = {}
    tables: dict[int, pd.DataFrame] = {}

    def job_done(new: dict[int, RunResult]) -> None:
        results.update(new)
        for i, pos in enumerate(pack.positions):
            if i not in tables and i not in skip and all(p in results for p in pos):
                tables[i] = job_rows(jobs[i], results, pos, len(pack.seeds),
                                     f"{device}+graphs" if cuda_graphs else device, labels)
                if on_job:
                    on_job(i, tables[i])

    skipped = {p for i in skip for p in pack.positions[i]}
    final, _ = train(pack.model, pack.data, pack.seeds, cfg, s["task"] == "classification", checkpoint_path,
                     progress, desc, on_finish=job_done, skip=skipped, cuda_graphs=cuda_graphs)
    job_done({p: r for p, r in enumerate(final) if r is not None})   # those finished before a resume
    return pack, tables


def train_point(settings: dict, value: int, dataset_size: int, device="auto", labels: dict | None = None,
                checkpoint_path: str | None = None, checkpoint_every_s: float = 300.0, progress: bool = True,
                desc: str | None = None):
    """Train every seed of one grid point (a pack of one job); return (runs DataFrame, pack).

    settings: resolved sweep settings (memcap.mlt_synthetic.grid.sweep_settings, or any dict with the same keys);
    value replaces the swept quantity; device: 'auto' | 'cpu' | 'cuda' or a torch.device; labels:
    columns put first in every row (the family CLI passes family, sweep and scale).
    """
    pack, tables = train_jobs([Job(settings, value, dataset_size)], device, labels, checkpoint_path,
                              checkpoint_every_s, progress, desc or f"{settings['vary']}={value} T={dataset_size}")
    return tables[0], pack
