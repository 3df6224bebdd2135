"""The training loop of MLT, capacity's MLT probes and theory's gradient descent (DPC trains through its
own, memcap.dpc.train) (MLT's protocol: the paper's App A and its code;
docs/method.md, MLT training protocol).

Faithful to the original protocol:
  Adam (default betas, no weight decay), batch 256 reshuffled every epoch, fp32;
  S = max(floor(500·T/256), min_steps) steps, 5% linear warm-up then cosine to 0;
  full-train-set evaluation at step 0 and every `eval_every` steps (and, here, at the last step);
  the checkpoint with the lowest full-train loss is the one reported (accuracy, or MSE);
  early stop once train accuracy is exactly 1.0 (classification only; off for saturation runs).

M models train in one batched computation: the seeds of a grid point, a pack of many grid points
(memcap.training.pack), or a capacity round's probes, each with its own T and so its own step count
and schedule. Each keeps its own data, init, shuffling and early stop, so model m's result does not
depend on which other models share its batch; a model that is done leaves the batch
(memcap.training.members). Checkpoints, resuming and SIGTERM: memcap.training.resume.
"""

from __future__ import annotations

import time
from typing import Callable

import torch

from memcap import checkpoint as ckpt
from memcap.errors import TrainingFailed
from memcap.models.mlt_attention import MLTAttention
from memcap.progress import Progress
from memcap.stacked_adam import StackedAdam
from memcap.tasks.mlt_data import MLTData
from memcap.training import resume
from memcap.training.batches import BatchStream
from memcap.training.config import RunResult, TrainConfig
from memcap.training.evaluate import evaluate
from memcap.training.members import Best, Members, stack_rows
from memcap.training.schedule import mlt_num_steps, warmup_cosine
from memcap.training.step import check_step_gradient, step_kernels, train_step


def train(model: MLTAttention, data: MLTData, seeds: list[int], cfg: TrainConfig, classification: bool,
          checkpoint_path: str | None = None, progress: bool = True, desc: str = "train",
          on_finish: Callable[[dict[int, RunResult]], None] | None = None, skip: set[int] = frozenset(),
          cuda_graphs: bool = False):
    """Train M models stacked in `model` and `data` (each model its own T, so its own step count and
    schedule).

    A model leaves the stack once it is done (early stop, or its last step): it costs no more work, and
    `on_finish({position: RunResult})` hears of it at once. Models in `skip` never train (finished
    elsewhere). cuda_graphs: replay each step from CUDA graphs (memcap.training.graphed; a CUDA device
    only). Returns ([RunResult per model, None for skipped], best parameters (M, ...)); the model then
    holds every model's best parameters."""
    run = _Run(model, data, seeds, cfg, classification, checkpoint_path, desc, skip, cuda_graphs)
    last_save = time.monotonic()
    bar = Progress(max(run.members.totals), run.step, desc, enabled=progress)
    if run.step == 0 and run.members.active:
        run.evaluate()
        run.retire(on_finish)
    with ckpt.StopRequest() as stop:
        while run.members.active:
            run.advance()
            bar.update(1)
            if run.step % cfg.eval_every == 0 or run.step in run.members.last_steps:
                run.evaluate()
                bar.log(**run.progress_note())
                run.retire(on_finish)
                if run.members.active and checkpoint_path and 0 <= cfg.checkpoint_every_s <= time.monotonic() - last_save:
                    run.save()
                    last_save = time.monotonic()
            if stop.requested and run.members.active:   # SIGTERM: keep everything trained up to here, then exit as killed
                run.stop()
    return run.finish(bar)


class _Run:
    """One call of `train`: the models still training (model, data, batches and optimizer cut to them),
    each model's best evaluation, and the step."""

    def __init__(self, model: MLTAttention, data: MLTData, seeds: list[int], cfg: TrainConfig,
                 classification: bool, path: str | None, desc: str, skip: set[int], cuda_graphs: bool):
        self.model, self.data, self.seeds, self.cfg = model, data, seeds, cfg
        self.classification, self.path, self.desc = classification, path, desc
        self.device = device = data.query_rows.device
        self.sizes = list(data.sizes)
        self.full_shapes, self.full_mask = list(model.shapes), model.context_mask
        self.config = resume.run_config(model, cfg, seeds, self.sizes, classification, device, cuda_graphs)
        saved = resume.load(path, self.config, set(skip))
        totals = [mlt_num_steps(T, cfg.min_steps, cfg.epochs, cfg.batch_size) for T in self.sizes]
        self.members = members = Members.start(totals, set(skip), saved)
        self.first_params = {k: v.detach()[:1].clone() for k, v in model.named_parameters()}   # a shape for skipped rows
        if len(members.active) < len(seeds):
            self._cut(members.active)
        if members.active:
            check_step_gradient(self.model, self.data, classification)
        self.batches = BatchStream([seeds[m] for m in members.active], list(self.data.sizes), cfg.batch_size, device)
        self.opt = StackedAdam(list(model.parameters()), cfg.lr, members.active_totals, warmup_cosine)
        self.best, self.step = Best.start(model), 0
        if saved is not None:
            self.best, self.step = resume.restore(saved, model, self.opt, self.batches, device)
            print(f"{desc}: resumed from checkpoint {path} at step {self.step}/{max(totals)} "
                  f"({len(members.active)} of {len(seeds)} models still training)", flush=True)
        self.clock = ckpt.TrainingClock(saved)
        self.graphed = None
        if cuda_graphs and members.active:
            from memcap.training.graphed import GraphedStep
            # the step on the models still training: `self.data` is rebound when models leave
            self.graphed = GraphedStep(lambda i, v, r: step_kernels(self.model, self.data, i, v, r, self.opt,
                                                                    classification), self.opt, device)

    def _cut(self, keep: list[int]) -> None:
        """Model and data keep only the models at positions `keep` (of those still training)."""
        self.model.keep(keep)
        self.data = self.data.select(keep)

    def advance(self) -> None:
        """One step of every model still training."""
        if self.graphed is None:
            train_step(self.model, self.data, self.batches, self.opt, self.classification)
        else:
            self.graphed(self.batches)
        self.step += 1

    def evaluate(self) -> None:
        """Evaluate every model still training; a model's best counts only at its evaluation steps."""
        eligible = [self.step % self.cfg.eval_every == 0 or self.step == t for t in self.members.active_totals]
        loss, acc, bits = evaluate(self.model, self.data, self.classification, self.cfg.eval_batch_size)
        self.best.record(self.model, loss, acc, bits, self.step, torch.tensor(eligible, device=self.device),
                         self.classification and self.cfg.early_stop)

    def retire(self, on_finish) -> None:
        """Models that are done leave the stack; on_finish hears of their results."""
        keep, new = self.members.retire(self.best, self.step, self.classification, self.clock)
        if keep:
            self._cut(keep)
            self.opt.keep(keep, list(self.model.parameters()))
            self.batches.keep(keep)
            self.best.keep(keep)
            if self.graphed is not None:
                self.graphed.reset()
        if on_finish and new:
            on_finish(new)

    def progress_note(self) -> dict:
        totals = self.members.totals
        return {"best_loss": float(self.best.loss.mean()),
                **({"best_acc": float(self.best.acc.mean())} if self.classification else {}),
                **({"models": len(self.members.active)} if len(totals) > 1 and len(set(totals)) > 1 else {})}

    def save(self) -> None:
        resume.save(self.path, self.config, self.model, self.opt, self.batches, self.best, self.step,
                    self.members, self.clock)

    def stop(self) -> None:
        """SIGTERM: a checkpoint of everything trained up to this step, then exit as a killed job does."""
        if self.path:
            self.save()
        print(f"{self.desc}: stopped by SIGTERM at step {self.step}/{max(self.members.totals)}"
              f"{'; checkpoint saved' if self.path else ''}", flush=True)
        raise SystemExit(ckpt.StopRequest.EXIT_CODE)

    def finish(self, bar: Progress):
        """Every model's result and best parameters; the model then holds them (a skipped or failed
        model: the first's, unused). Models that learned nothing fail the run."""
        finished, M = self.members.finished, len(self.seeds)
        results = [finished[m][0] if m in finished else None for m in range(M)]
        bar.close(**({"best_acc": sum(r.mem_acc for r in results if r) / max(1, len(finished))}
                     if self.classification else {}),
                  best_loss=sum(r.mem_loss for r in results if r) / max(1, len(finished)))
        best_state = stack_rows([finished[m][1] if m in finished else self.first_params for m in range(M)],
                                self.device)
        self.model.restore(best_state, self.full_shapes, self.full_mask)
        failed = sorted(self.members.failed)
        if failed:
            raise TrainingFailed(f"seeds {[self.seeds[m] for m in failed]}: training ended no better than the "
                                 f"initialisation (T = {[self.sizes[m] for m in failed]}, lr {self.cfg.lr}); "
                                 f"nothing is written for them. Check lr, batch_size and the steps in params.yaml")
        return results, best_state
