"""MLT's synthetic memorization data (MLT §5.2, App. A; `RandomDataset` in the original code).

Draw order, from numpy.random.RandomState(seed): context(s), then queries, then labels.
  context 'shared' (the original's "fixed"): one E ~ U[0,1)^{n x d} used by every example (Prop 2)
  context 'random': independent E^(t) ~ U[0,1)^{n x d} (general position, App I.1 / Fig 4)
  labels: classification y ~ Uniform{0..C-1} (argmax of multinomial(1, 1/C)); regression y ~ U[0,1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from memcap.tasks.mlt_sizes import CHUNK_ROWS   # rows drawn at a time: the only scratch beside the data

CONTEXTS = ("shared", "random")
TASKS = ("classification", "regression")


@dataclass
class MLTData:
    """The datasets of M models, one after the other along the rows: model m's T_m examples are rows
    offsets[m] .. offsets[m] + T_m of query_rows (ΣT, d), label_rows (ΣT,) and, for random contexts,
    context_rows (ΣT, n, d); a shared context is context_rows (M, n, d). Models of one grid point have
    equal T (then .queries, .contexts, .labels are the (M, T, ...) views); a pack
    (memcap.training.pack) mixes sizes, and no model's rows are padded to another's T (random
    contexts are GBs a model). A pack's random contexts may be shared: model m's rows start at row
    context_starts[m] of context_rows (make_pack_data), else at offsets[m]."""

    query_rows: torch.Tensor
    context_rows: torch.Tensor
    label_rows: torch.Tensor      # long for classification, float for regression
    shared: bool
    sizes: tuple[int, ...]        # T of each model
    context_starts: tuple[int, ...] | None = None   # random contexts: each model's first row, if shared

    def __post_init__(self):
        starts = [0]
        for T in self.sizes[:-1]:
            starts.append(starts[-1] + T)
        self.offsets = torch.tensor(starts, device=self.query_rows.device)
        self.size_of = torch.tensor(self.sizes, device=self.query_rows.device)
        self.context_offsets = (self.offsets if self.context_starts is None
                                else torch.tensor(self.context_starts, device=self.query_rows.device))

    @property
    def size(self) -> int:
        """T, when every model has the same."""
        if len(set(self.sizes)) != 1:
            raise ValueError(f"models of different dataset sizes {sorted(set(self.sizes))}: use .sizes")
        return self.sizes[0]

    def _stacked(self, rows: torch.Tensor) -> torch.Tensor:
        return rows.view(len(self.sizes), self.size, *rows.shape[1:])

    @property
    def queries(self) -> torch.Tensor:
        return self._stacked(self.query_rows)

    @property
    def contexts(self) -> torch.Tensor:
        if self.context_starts is not None:
            raise ValueError("these models share context rows (make_pack_data): use .batch")
        return self.context_rows if self.shared else self._stacked(self.context_rows)

    @property
    def labels(self) -> torch.Tensor:
        return self._stacked(self.label_rows)

    def to(self, device) -> "MLTData":
        return MLTData(self.query_rows.to(device), self.context_rows.to(device), self.label_rows.to(device),
                       self.shared, self.sizes, self.context_starts)

    def select(self, keep: list[int]) -> "MLTData":
        """The datasets of models `keep` (positions), sharing these rows (a shared context is copied)."""
        out = MLTData.__new__(MLTData)
        out.query_rows, out.label_rows, out.shared = self.query_rows, self.label_rows, self.shared
        out.sizes = tuple(self.sizes[k] for k in keep)
        out.context_starts = None if self.context_starts is None else tuple(self.context_starts[k] for k in keep)
        index = torch.tensor(keep, device=self.offsets.device)
        out.offsets, out.size_of = self.offsets[index], self.size_of[index]
        out.context_offsets = self.context_offsets[index]
        out.context_rows = self.context_rows.index_select(0, index) if self.shared else self.context_rows
        return out

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Rows idx (M, B) of each model's dataset -> queries, contexts, labels."""
        M, B = idx.shape
        flat = (idx + self.offsets[:, None]).reshape(-1)

        def rows(x: torch.Tensor, at: torch.Tensor) -> torch.Tensor:   # index_select: one copy, no indexing setup
            return x.index_select(0, at).view(M, B, *x.shape[1:])
        if self.shared:
            contexts = self.context_rows
        else:
            at = flat if self.context_starts is None else (idx + self.context_offsets[:, None]).reshape(-1)
            contexts = rows(self.context_rows, at)
        return rows(self.query_rows, flat), contexts, rows(self.label_rows, flat)


def stack(datasets: list[MLTData], context_size: int = 0) -> MLTData:
    """Several models' datasets as one (a pack): rows one after the other; contexts of fewer tokens
    than the longest (or than context_size) are padded with zero rows, which the model masks out
    (MLTAttention.stack)."""
    n = max(context_size, *(d.context_rows.shape[-2] for d in datasets))

    def padded(c: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(c, (0, 0, 0, n - c.shape[-2])) if c.shape[-2] < n else c
    if any(d.context_starts is not None for d in datasets):
        raise ValueError("stack: datasets whose models share context rows are a pack already (make_pack_data)")
    return MLTData(torch.cat([d.query_rows for d in datasets]),
                   torch.cat([padded(d.context_rows) for d in datasets]),
                   torch.cat([d.label_rows for d in datasets]), datasets[0].shared,
                   tuple(T for d in datasets for T in d.sizes))


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
    _fill_after_contexts(rs, queries, labels, task, num_classes)


def _fill_after_contexts(rs: np.random.RandomState, queries: np.ndarray, labels: np.ndarray, task: str,
                         num_classes: int) -> None:
    """The queries, then the labels, drawn where the contexts' draws left `rs`."""
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
    return data.query_rows.numpy(), data.contexts[0].numpy(), data.label_rows.numpy()


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
    shared = context == "shared"
    return MLTData(torch.from_numpy(q).view(M * T, d), torch.from_numpy(c if shared else c.reshape(M * T, n, d)),
                   torch.from_numpy(y).view(M * T), shared, (T,) * M)


def make_pack_data(draws: list[tuple[int, int, int]], input_dim: int, context: str, task: str,
                   num_classes: int = 100, context_size: int = 0) -> MLTData:
    """The datasets of a pack's models, one (seed, T, n) each in order, every one as make_data draws it
    alone; contexts padded with zero rows to the longest n (or context_size), as `stack`.

    A random context set is drawn first (the original's order), so the contexts of one (seed, n) at a
    smaller T are the first rows of those at a larger T: they are stored once, at the largest, and each
    model's context_starts points at them (Fig 4 left: a seed's 48 models, six T and eight H, read one
    set of 130,000 contexts, 1 GB instead of 29). The queries and labels follow each model's own
    contexts in the stream: drawn from the generator's state saved where its T contexts end."""
    if context != "random":
        return stack([make_data([seed], T, n, input_dim, context, task, num_classes) for seed, T, n in draws],
                     context_size)
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}")
    n_pad, d = max(context_size, *(n for _, _, n in draws)), input_dim
    sizes = {}                                            # (seed, n) -> its models' T
    for seed, T, n in draws:
        sizes.setdefault((seed, n), set()).add(T)
    ctx = np.zeros((sum(max(Ts) for Ts in sizes.values()), n_pad, d), np.float32)   # zero: padded tokens
    start, state, at = {}, {}, 0
    for (seed, n), Ts in sizes.items():
        rs, done, start[seed, n] = np.random.RandomState(seed), 0, at
        for T in sorted(Ts):
            _uniform_rows(rs, ctx[at + done:at + T, :n])
            done, state[seed, n, T] = T, rs.get_state()
        at += done
    total = sum(T for _, T, _ in draws)
    q = np.empty((total, d), np.float32)
    y = np.empty(total, np.int64 if task == "classification" else np.float32)
    row = 0
    for seed, T, n in draws:
        rs = np.random.RandomState()
        rs.set_state(state[seed, n, T])
        _fill_after_contexts(rs, q[row:row + T], y[row:row + T], task, num_classes)
        row += T
    return MLTData(torch.from_numpy(q), torch.from_numpy(ctx), torch.from_numpy(y), False,
                   tuple(T for _, T, _ in draws), tuple(start[seed, n] for seed, _, n in draws))
