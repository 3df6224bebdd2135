"""Which models of a stack still train, and what became of the others: each model's best evaluation
(Best: the lowest full-train loss, the checkpoint MLT's App A reports), and the models that finished or
failed (Members). A model that is done leaves the stack at once and costs no more work.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from memcap.models.mlt_attention import MLTAttention
from memcap.training.config import RunResult


@dataclass
class Best:
    """Per model (dim 0): its lowest full-train loss at an evaluation, its accuracy, bits, step and parameters,
    and the early-stop step (-1: running)."""
    loss: torch.Tensor
    acc: torch.Tensor
    bits: torch.Tensor
    step: torch.Tensor
    done_at: torch.Tensor
    state: dict

    @classmethod
    def start(cls, model: MLTAttention) -> "Best":
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


def stack_rows(rows: list[dict[str, torch.Tensor]], device: torch.device) -> dict[str, torch.Tensor]:
    """One state of M models from one row per model, each row moved to `device` first: a member that
    finished before a resume has its best parameters from the checkpoint, on the CPU, while the pack
    trains on the GPU."""
    return {k: torch.cat([row[k].to(device) for row in rows]) for k in rows[0]}


@dataclass
class Members:
    """The stack's models by position 0..M-1: those still training (`active`, in the stack's order),
    those finished (their result and best parameters, one row each) and those that learned nothing."""
    totals: list[int]                               # every model's planned steps
    active: list[int]
    finished: dict[int, tuple[RunResult, dict]]
    failed: list[int]

    def __post_init__(self):
        self.last_steps = set(self.active_totals)   # a model's last step is evaluated, whatever eval_every says

    @classmethod
    def start(cls, totals: list[int], skip: set[int], saved: dict | None) -> "Members":
        """Every model but those in `skip` (finished elsewhere), or the members a checkpoint saved."""
        if saved is None:
            return cls(totals, [m for m in range(len(totals)) if m not in skip], {}, [])
        finished = {int(k): (RunResult(**r), st) for k, (r, st) in saved["finished"].items()}
        return cls(totals, list(saved["active"]), finished, list(saved["failed"]))

    @property
    def active_totals(self) -> list[int]:
        return [self.totals[m] for m in self.active]

    def state(self) -> dict:
        return {"active": self.active, "failed": self.failed,
                "finished": {m: (asdict(r), st) for m, (r, st) in self.finished.items()}}

    def retire(self, best: Best, step: int, classification: bool,
               clock) -> tuple[list[int] | None, dict[int, RunResult]]:
        """The models done at `step` (early stop, or their last step) leave, their results final. Returns
        the positions within the active models that go on (None: nobody left) and {position: result}
        of the models finished now; a model that ended no better than its initialisation is failed.
        clock: the job's training time (memcap.checkpoint.TrainingClock)."""
        done_at, totals = best.done_at.tolist(), self.active_totals
        out = [i for i, (d, t) in enumerate(zip(done_at, totals)) if d >= 0 or step >= t]
        if not out:
            return None, {}
        losses, steps = best.loss.tolist(), best.step.tolist()
        new = {}
        for i in out:
            m, stopped = self.active[i], done_at[i] >= 0
            ran = done_at[i] if stopped else step
            if not math.isfinite(losses[i]) or (ran > 0 and steps[i] == 0):   # learned nothing: refused
                self.failed.append(m)
                continue
            r = RunResult(mem_acc=float(best.acc[i]) if classification else float("nan"), mem_loss=losses[i],
                          memorized_bits=float(best.bits[i]), best_step=steps[i], steps_run=ran,
                          steps_planned=self.totals[m], early_stopped=stopped, wall_time_s=clock.seconds(),
                          segments=clock.segments)
            self.finished[m] = (r, {k: v[i:i + 1].clone() for k, v in best.state.items()})
            new[m] = r
        gone = set(out)
        keep = [i for i in range(len(self.active)) if i not in gone]
        self.active = [self.active[i] for i in keep]
        self.last_steps = set(self.active_totals)
        return keep, new
