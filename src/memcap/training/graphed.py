"""A pack's training step replayed from CUDA graphs: one launch a step instead of ~100.

On a GPU a pack's eager step waits on the host: Python and kernel launches, the GPU busy about half
the time (docs/speed.md, Fig 2c's pack on an H200). A CUDA graph records the kernels of one step at
fixed addresses and replays them with one launch, so what changes between steps lives in tensors the
graph reads: the batch rows are copied into static buffers, the learning rates are device tensors
(StackedAdam.use_lr_tensors; the schedules step on the host between replays) and the step count is
already one. The kernels are the eager step's (memcap.training.step.step_kernels), so a replayed
step gives the numbers of an eager step that reads its learning rate from the same tensors, and
differs from the eager step (a float lr, read as float64) by the lr's float32 rounding only.
benchmarks/graph_check.py checks both on a GPU (docs/speed.md: SAME bit for bit on an H200); graphs are
off unless asked for (train(..., cuda_graphs=True); `memcap bundle train --graph-check` asks for them
where the check says SAME).

One graph per batch shape: a full step, or an epoch's short last batch (its width, masked or not).
The first step of a shape runs eagerly (it warms the libraries up, outside any capture), the next is
captured and then replayed. When models leave the pack their tensors are cut, so the graphs go
(`reset`) and are captured again. Evaluation stays eager between replays.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class _Graph:
    graph: "torch.cuda.CUDAGraph"
    idx: torch.Tensor
    valid: torch.Tensor | None
    rows: torch.Tensor | None


class GraphedStep:
    """kernels(idx, valid, rows): the device work of one step on the models still training (the trainer
    passes memcap.training.step.step_kernels bound to its model, data and optimizer)."""

    def __init__(self, kernels, opt, device):
        if torch.device(device).type != "cuda":
            raise ValueError(f"CUDA graphs need the pack on a CUDA device, not {device}")
        self.kernels, self.opt = kernels, opt
        self.reset()

    def reset(self) -> None:
        """The pack changed (models left): capture again on its new tensors."""
        self.graphs, self.seen = {}, set()
        self.opt.use_lr_tensors()

    def __call__(self, batches) -> None:
        """One step of every model on its next batch, then the schedules' step (as train_step)."""
        idx, valid, rows = batches.next()
        key = (idx.shape[1], valid is not None)
        self.opt.write_lrs()
        if key not in self.seen:   # first of its shape: eager, as a warm-up
            self.seen.add(key)
            self.kernels(idx, valid, rows)
        else:
            g = self.graphs.get(key) or self._capture(key, idx, valid, rows)
            g.idx.copy_(idx)
            if valid is not None:
                g.valid.copy_(valid)
                g.rows.copy_(rows)
            g.graph.replay()
        self.opt.advance()

    def _capture(self, key, idx, valid, rows) -> _Graph:
        static = _Graph(torch.cuda.CUDAGraph(), idx.clone(), None if valid is None else valid.clone(),
                        None if rows is None else rows.clone())
        torch.cuda.synchronize()
        with torch.cuda.graph(static.graph):   # recorded, not run: the caller replays it
            self.kernels(static.idx, static.valid, static.rows)
        self.graphs[key] = static
        return static
