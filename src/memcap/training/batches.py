"""Minibatch indices of every model of a pack, as the original's shuffled DataLoader draws them.

Model m's epochs are permutations of its own T_m rows, drawn from its own generator (seed + 1), cut
into batches of B rows, the last one short (T_m mod B). Models of different T step together, so each
epoch is laid out as ceil(T_m / B) slots of B entries, a short batch padded with -1: every model
then uses exactly B entries a step, and one (M, K, B) block serves K steps of the whole pack. A
block is drawn on the host and copied to the device once per K steps (about ROWS_AHEAD entries a
model), so a small dataset (T = 550: a new epoch every ~2 steps) costs the device no per-step copy.
Step k's batch is the block's column k, cut to the longest batch of that step: with equal T (one
grid point) that is exactly the batch a model alone would get. The layout of the draws does not
depend on the other models, so a model gets the same batches alone, in a pack, or resumed.
"""

from __future__ import annotations

import torch

ROWS_AHEAD = 1 << 16


class BatchStream:
    def __init__(self, seeds: list[int], sizes: list[int], batch_size: int, device):
        self.gens = [torch.Generator().manual_seed(int(s) + 1) for s in seeds]
        self.sizes, self.B, self.device = list(sizes), batch_size, device
        self.pending = [torch.empty(0, dtype=torch.long) for _ in seeds]   # drawn, not yet in a block
        self.steps_ahead = max(1, ROWS_AHEAD // batch_size)
        self.block, self.k = None, 0

    def _epoch(self, m: int) -> torch.Tensor:
        T, B = self.sizes[m], self.B
        slots = torch.full((-(-T // B) * B,), -1, dtype=torch.long)
        slots[:T] = torch.randperm(T, generator=self.gens[m])   # only the last batch is short: -1s after it
        return slots

    def _refill(self) -> None:
        need = self.steps_ahead * self.B
        rows = []
        for m in range(len(self.gens)):
            parts = [self.pending[m]]
            have = len(parts[0])
            while have < need:
                parts.append(self._epoch(m))
                have += len(parts[-1])
            flat = torch.cat(parts)
            rows.append(flat[:need])
            self.pending[m] = flat[need:]
        host = torch.stack(rows).view(len(rows), self.steps_ahead, self.B)    # (M, K, B)
        counts = (host >= 0).sum(-1)                                           # (M, K) rows a step
        self.width = counts.max(0).values.tolist()                             # longest batch a step
        self.ragged = (counts < counts.max(0).values).any(0).tolist()          # some model's is shorter
        self.block = host.to(self.device)
        self.counts = counts.to(self.device, torch.float32)
        self.k = 0

    def next(self):
        """(idx (M, w), valid (M, w) or None, rows (M, 1, 1) or None): the step's rows of each
        model; valid and rows only when some model's batch is shorter than the step's longest w."""
        if self.block is None or self.k == self.steps_ahead:
            self._refill()
        k, w = self.k, self.width[self.k]
        self.k += 1
        idx = self.block[:, k, :w]
        if not self.ragged[k]:
            return idx, None, None
        valid = idx >= 0
        return idx.clamp(min=0), valid, self.counts[:, k, None, None]

    def _unused(self) -> list[torch.Tensor]:
        """What each model has drawn and not used: the rest of the block, then its pending entries."""
        if self.block is None:
            return list(self.pending)
        rest = self.block[:, self.k:].reshape(len(self.gens), -1).cpu()
        return [torch.cat([rest[m], self.pending[m]]) for m in range(len(self.gens))]

    def keep(self, keep: list[int]) -> None:
        """Only the models at positions `keep` go on (the others finished)."""
        unused = self._unused()
        self.gens = [self.gens[k] for k in keep]
        self.sizes = [self.sizes[k] for k in keep]
        self.pending = [unused[k] for k in keep]
        self.block, self.k = None, 0

    def state(self) -> dict:
        return {"gens": [g.get_state() for g in self.gens], "pending": self._unused()}

    def load(self, s: dict) -> None:
        for g, st in zip(self.gens, s["gens"]):
            g.set_state(st)
        self.pending, self.block, self.k = list(s["pending"]), None, 0
