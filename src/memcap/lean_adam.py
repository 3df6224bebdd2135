"""torch's fused Adam, stepped without the optimizer's per-call bookkeeping.

A small model's step is a few hundred microseconds, and `torch.optim.Adam(fused=True).step()` spends
about 100 of them in Python (hooks, grouping the tensors by device, checks) around one fused kernel.
LeanAdam is that optimizer — same state, same state_dict, same LR scheduler interface — whose `step`
calls the kernel torch's own fused path calls (`torch._fused_adam_`) on tensor lists gathered once,
with one step count for all parameters and without the optimizer's step hooks.
tests/test_mlt_train.py checks it step for step against torch.optim.Adam(fused=True).
"""

from __future__ import annotations

import torch


class LeanAdam(torch.optim.Adam):
    """Adam(fused=True) for one parameter group on one device, no weight decay, no AMSGrad."""

    def __init__(self, params, lr: float):
        super().__init__(params, lr=lr, fused=True)
        if len(self.param_groups) != 1:
            raise ValueError("LeanAdam: one parameter group")
        self._lists = None

    def _gather(self) -> tuple[list, ...]:
        group = self.param_groups[0]
        params = group["params"]
        for p in params:   # the state torch's Adam would create at its first step
            state = self.state[p]
            if not state:
                state["step"] = torch.zeros((), dtype=torch.float32, device=p.device)
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        # Every parameter steps together, so their step counts are one tensor (one add a step, not
        # one per parameter); state_dict still lists it per parameter, as torch's Adam does.
        step = self.state[params[0]]["step"]
        if any(bool(self.state[p]["step"] != step) for p in params):
            raise ValueError("LeanAdam: the parameters' step counts differ (not a state this optimizer made)")
        for p in params:
            self.state[p]["step"] = step
        return (params, [self.state[p]["exp_avg"] for p in params],
                [self.state[p]["exp_avg_sq"] for p in params], step)

    def load_state_dict(self, state_dict) -> None:
        super().load_state_dict(state_dict)
        self._lists = None   # the state tensors were replaced

    @torch.no_grad()
    def step(self, closure=None):
        if closure is not None:
            raise ValueError("LeanAdam: no closure")
        if self._lists is None:
            self._lists = self._gather()
        params, exp_avgs, exp_avg_sqs, step = self._lists
        group = self.param_groups[0]
        beta1, beta2 = group["betas"]
        step.add_(1)
        torch._fused_adam_(params, [p.grad for p in params], exp_avgs, exp_avg_sqs, [], [step] * len(params),
                           lr=group["lr"], beta1=beta1, beta2=beta2, weight_decay=0.0, eps=group["eps"],
                           amsgrad=False, maximize=False)

    # torch.optim.Optimizer wraps a class's `step` in a profiler label and step hooks (~50 µs a call)
    # unless it is marked as wrapped already: LeanAdam has no step hooks.
    step.hooked = True
