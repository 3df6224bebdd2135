"""Adam over stacked models (dim 0 of every parameter), one learning-rate schedule per group of models.

The models of a pack have different step counts S (one per dataset size T), so different learning
rates at the same step. Models sharing S are kept next to each other (memcap.training.pack
orders them), and each such group is one call of the kernel torch's own fused Adam calls
(`torch._fused_adam_`) on views of its rows, with the group's learning rate from torch's LR schedulers
(memcap.training.schedule). Adam is elementwise, so a model's update is the one it would get
alone; with one group (a grid point) it is torch.optim.Adam(fused=True) exactly, without the
optimizer's ~100 µs of Python a step (hooks, grouping by device, checks). Every model starts at
step 0 together, so one step count serves all. tests/test_mlt_train.py checks it bit for bit against
torch.optim.Adam(fused=True), also across a checkpoint and in a pack of two schedules.

No torch.optim optimizer is built or stepped (the schedulers' _LearningRate skips Optimizer.__init__):
their methods import torch's compiler (`torch._dynamo`, ~1.3 CPU-s a process) on first use, and every
training job here is a short process.
"""

from __future__ import annotations

from typing import Callable

import torch


class StackedAdam:
    def __init__(self, params: list[torch.Tensor], lr: float, totals: list[int],
                 schedule: Callable[[torch.optim.Optimizer, int], torch.optim.lr_scheduler.LRScheduler],
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        if len(set(totals)) != len(_runs(totals)):
            raise ValueError(f"StackedAdam: models of one schedule must be next to each other, got {totals}")
        if any(p.shape[0] != len(totals) for p in params):
            raise ValueError(f"StackedAdam: every parameter stacks {len(totals)} models on dim 0, got "
                             f"{[tuple(p.shape) for p in params]}")
        self.params, self.lr, self.betas, self.eps, self.schedule = list(params), lr, betas, eps, schedule
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        self.step_count = torch.zeros((), dtype=torch.float32, device=self.params[0].device)
        self.lr_tensors = None   # {scheduler: its lr on the device} once use_lr_tensors is called
        # one scheduler per step count S: it steps a one-parameter optimizer whose lr the group reads
        self.schedulers = {S: self._scheduler(S) for S in sorted(set(totals))}
        self._group(totals)

    def _scheduler(self, total: int):
        return self.schedule(_LearningRate(self.lr), total)

    def _group(self, totals: list[int]) -> None:
        self.totals = list(totals)
        self.groups = [(a, b, self.schedulers[S]) for a, b, S in _runs(totals)]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """One Adam step of every model (their .grad set), then each schedule's step."""
        self.update()
        self.advance()

    @torch.no_grad()
    def update(self) -> None:
        """The device work of a step: the step count, then one fused Adam call per schedule group."""
        self.step_count.add_(1)
        beta1, beta2 = self.betas
        for a, b, sched in self.groups:
            lr = sched.optimizer.param_groups[0]["lr"] if self.lr_tensors is None else self.lr_tensors[sched]
            torch._fused_adam_([p[a:b] for p in self.params], [p.grad[a:b] for p in self.params],
                               [e[a:b] for e in self.exp_avg], [e[a:b] for e in self.exp_avg_sq], [],
                               [self.step_count] * len(self.params), lr=lr, beta1=beta1, beta2=beta2,
                               weight_decay=0.0, eps=self.eps, amsgrad=False, maximize=False)

    def advance(self) -> None:
        """Each schedule's step (host work: the next step's learning rates)."""
        for sched in self.schedulers.values():
            sched.step()

    def use_lr_tensors(self) -> None:
        """Read each group's learning rate from a device tensor that `write_lrs` fills, not from a
        Python float: a CUDA graph records a float as a constant (memcap.training.graphed).
        The same numbers: the fused kernel takes either (tests/test_mlt_train.py)."""
        self.lr_tensors = {}
        self.write_lrs()

    def write_lrs(self) -> None:
        """Copy the schedulers' current learning rates into the device tensors (no host sync)."""
        for a, b, sched in self.groups:   # float32: what the CUDA kernel reads (a float lr is cast to it too)
            t = self.lr_tensors.setdefault(sched, torch.zeros((), device=self.step_count.device))
            t.fill_(sched.optimizer.param_groups[0]["lr"])

    def keep(self, keep: list[int], params: list[torch.Tensor]) -> None:
        """Only the models at positions `keep` (in order) go on, as `params` (the caller cut them)."""
        self.params = list(params)
        index = torch.tensor(keep, device=self.step_count.device)
        self.exp_avg = [e.index_select(0, index) for e in self.exp_avg]
        self.exp_avg_sq = [e.index_select(0, index) for e in self.exp_avg_sq]
        totals = [self.totals[k] for k in keep]
        self.schedulers = {S: s for S, s in self.schedulers.items() if S in set(totals)}
        self._group(totals)

    def state_dict(self) -> dict:
        return {"exp_avg": self.exp_avg, "exp_avg_sq": self.exp_avg_sq, "step": self.step_count,
                "totals": self.totals, "schedulers": {S: s.state_dict() for S, s in self.schedulers.items()}}

    def load_state_dict(self, state: dict) -> None:
        device = self.step_count.device
        self.exp_avg = [e.to(device) for e in state["exp_avg"]]
        self.exp_avg_sq = [e.to(device) for e in state["exp_avg_sq"]]
        self.step_count = state["step"].to(device)
        self.schedulers = {S: self._scheduler(S) for S in state["schedulers"]}
        for S, s in state["schedulers"].items():
            self.schedulers[S].load_state_dict(s)
            # LRScheduler.load_state_dict restores its counters, not the lr it last set
            self.schedulers[S].optimizer.param_groups[0]["lr"] = s["_last_lr"][0]
        self._group(state["totals"])


class _LearningRate(torch.optim.Optimizer):
    """What a torch LR scheduler drives: one parameter group holding a learning rate, no parameters.
    A scheduler reads and writes only `param_groups`; Optimizer.__init__ is not called because its
    add_param_group imports torch._dynamo."""

    def __init__(self, lr: float):
        self.defaults = {"lr": lr}
        self.param_groups = [{"params": [], "lr": lr}]
        self.state = {}
        self._opt_called = True   # never stepped itself: no "scheduler before optimizer" warning


def _runs(totals: list[int]) -> list[tuple[int, int, int]]:
    """(start, stop, S) of each run of equal values."""
    runs, start = [], 0
    for i in range(1, len(totals) + 1):
        if i == len(totals) or totals[i] != totals[start]:
            runs.append((start, i, totals[start]))
            start = i
    return runs
