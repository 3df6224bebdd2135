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
        rows = torch.arange(idx.shape[0], device=idx.device)[:, None]
        ctx = self.contexts if self.shared else self.contexts[rows, idx]
        return self.queries[rows, idx], ctx, self.labels[rows, idx]


def draw_one(seed: int, dataset_size: int, context_size: int, input_dim: int, context: str,
             task: str, num_classes: int = 100):
    """One dataset as numpy arrays (queries, context(s), labels)."""
    if context not in CONTEXTS or task not in TASKS:
        raise ValueError(f"context must be one of {CONTEXTS}, task one of {TASKS}")
    rs = np.random.RandomState(seed)
    T, n, d = dataset_size, context_size, input_dim
    ctx = rs.uniform(size=(n, d) if context == "shared" else (T, n, d)).astype(np.float32)
    queries = rs.uniform(size=(T, d)).astype(np.float32)
    if task == "classification":
        labels = rs.multinomial(1, [1.0 / num_classes] * num_classes, size=T).argmax(1).astype(np.int64)
    else:
        labels = rs.uniform(size=T).astype(np.float32)
    return queries, ctx, labels


def make_data(seeds: list[int], **kwargs) -> MLTData:
    """Stack one dataset per seed (each from its own RandomState, independent of the others)."""
    parts = [draw_one(s, **kwargs) for s in seeds]
    q, c, y = (torch.from_numpy(np.stack(x)) for x in zip(*parts))
    return MLTData(q, c, y, shared=kwargs["context"] == "shared")
