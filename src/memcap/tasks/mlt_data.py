"""MLT's synthetic memorization data (spec mahdavi.md §2.1, `RandomDataset` in the original code).

Draw order, from numpy.random.RandomState(seed): context(s), then queries, then labels.
  context 'shared' (the original's "fixed"): one E ~ U[0,1)^{n x d} used by every example (Prop 2)
  context 'random': independent E^(t) ~ U[0,1)^{n x d} (general position, App I.1 / Fig 4)
  labels: classification y ~ Uniform{0..C-1} (argmax of multinomial(1, 1/C)); regression y ~ U[0,1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

CONTEXTS = ("shared", "random")
TASKS = ("classification", "regression")


@dataclass
class MLTData:
    """M datasets stacked: queries (M, T, d); contexts (M, n, d) if shared else (M, T, n, d)."""

    queries: torch.Tensor
    contexts: torch.Tensor
    labels: torch.Tensor          # (M, T) long for classification, float for regression
    shared: bool

    @property
    def size(self) -> int:
        return self.queries.shape[1]

    def to(self, device) -> "MLTData":
        return MLTData(self.queries.to(device), self.contexts.to(device), self.labels.to(device), self.shared)

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Rows idx (M, B) of each model's dataset -> queries, contexts, labels."""
        M, B = idx.shape
        T = self.queries.shape[1]
        flat = (idx + torch.arange(M, device=idx.device)[:, None] * T).reshape(-1)   # rows of (M*T, ...)

        def rows(x: torch.Tensor) -> torch.Tensor:   # index_select: one copy, no advanced-indexing setup
            return x.reshape(M * T, *x.shape[2:]).index_select(0, flat).view(M, B, *x.shape[2:])
        return rows(self.queries), self.contexts if self.shared else rows(self.contexts), rows(self.labels)


from memcap.mlt_synthetic.grid import CHUNK_ROWS   # rows drawn at a time: the only scratch beside the data


def _uniform_rows(rs: np.random.RandomState, out: np.ndarray) -> None:
    """Fill `out` (float32) with rs.uniform draws, CHUNK_ROWS rows at a time: the same numbers in the
    same order as one rs.uniform(size=out.shape) call, without its float64 copy of the whole array."""
    for i in range(0, out.shape[0], CHUNK_ROWS):
        out[i:i + CHUNK_ROWS] = rs.uniform(size=(min(CHUNK_ROWS, out.shape[0] - i), *out.shape[1:]))


def fill_one(seed: int, queries: np.ndarray, ctx: np.ndarray, labels: np.ndarray, task: str,
             num_classes: int) -> None:
    """One seed's dataset written into preallocated arrays, in the original's draw order."""
    rs = np.random.RandomState(seed)
    _uniform_rows(rs, ctx)
    _uniform_rows(rs, queries)
    if task == "classification":
        p = [1.0 / num_classes] * num_classes
        for i in range(0, labels.shape[0], CHUNK_ROWS):
            labels[i:i + CHUNK_ROWS] = rs.multinomial(1, p, size=min(CHUNK_ROWS, labels.shape[0] - i)).argmax(1)
    else:
        _uniform_rows(rs, labels)


def draw_one(seed: int, dataset_size: int, context_size: int, input_dim: int, context: str,
             task: str, num_classes: int = 100):
    """One dataset as numpy arrays (queries, context(s), labels)."""
    data = make_data([seed], dataset_size=dataset_size, context_size=context_size, input_dim=input_dim,
                     context=context, task=task, num_classes=num_classes)
    return data.queries[0].numpy(), data.contexts[0].numpy(), data.labels[0].numpy()


def make_data(seeds: list[int], dataset_size: int, context_size: int, input_dim: int, context: str,
              task: str, num_classes: int = 100) -> MLTData:
    """One dataset per seed (each from its own RandomState, independent of the others), written in
    place into the stacked arrays: no per-seed copies to stack, so the host peak is the data's size."""
    if context not in CONTEXTS or task not in TASKS:
        raise ValueError(f"context must be one of {CONTEXTS}, task one of {TASKS}")
    M, T, n, d = len(seeds), dataset_size, context_size, input_dim
    q = np.empty((M, T, d), np.float32)
    c = np.empty((M, n, d) if context == "shared" else (M, T, n, d), np.float32)
    y = np.empty((M, T), np.int64 if task == "classification" else np.float32)
    for m, seed in enumerate(seeds):
        fill_one(seed, q[m], c[m], y[m], task, num_classes)
    return MLTData(torch.from_numpy(q), torch.from_numpy(c), torch.from_numpy(y), shared=context == "shared")
