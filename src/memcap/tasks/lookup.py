"""DPC's random look-up table task (DPC §5.1, App. B; the original's `power_unif_law` + `generate_data`).

Trigrams (t_1, t_2, t_3): t_1, t_2 uniform and independent on [N], t_3 = g(t_1, t_2) with g: [N]² → [N]
a uniformly random function (each of the N² entries an independent uniform draw; not a bijection).
So π satisfies Assumption 1 (zero conditional entropy), the prior over pairs is uniform and
T_0 = N² (the number of contexts to memorise).

A fixed sample of batch_size·batches trigrams is drawn once (with replacement) and reshuffled every
epoch. Both the table and the sample come from the group seed (2222 in the original), so every run of
a group (and Exps 1, 2, 3, which share N) sees the same table and the same sample.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class LookupTask:
    table: torch.Tensor      # g: (N, N) long, table[t1, t2] = t3; or (M, N, N), one table a model
    samples: torch.Tensor    # (n_samples, 3) long trigrams (t1, t2, t3); or (M, n_samples, 3)

    @property
    def vocab(self) -> int:
        return self.table.shape[-1]

    @property
    def contexts(self) -> int:
        """T_0 = N² contexts, all with prior mass 1/N²."""
        return self.vocab ** 2

    def to(self, device) -> "LookupTask":
        return LookupTask(self.table.to(device), self.samples.to(device))

    def all_contexts(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Every context (N², 2) and its answer (N²,) (or (M, N²), a table a model): the full table,
        for the exact accuracy."""
        N = self.vocab
        t1, t2 = torch.meshgrid(torch.arange(N, device=self.table.device),
                                torch.arange(N, device=self.table.device), indexing="ij")
        ctx = torch.stack([t1.reshape(-1), t2.reshape(-1)], 1)                # (N², 2)
        return ctx, self.table.reshape(*self.table.shape[:-2], -1)


def make_task(vocab: int, n_samples: int, seed: int) -> LookupTask:
    """Table g, then n_samples i.i.d. trigrams, from one generator (vectorized, no per-sample loop)."""
    gen = torch.Generator().manual_seed(int(seed))
    N = vocab
    table = torch.randint(N, (N, N), generator=gen)                           # g(t1, t2), (N, N)
    t12 = torch.randint(N, (n_samples, 2), generator=gen)                     # uniform prior on pairs
    t3 = table[t12[:, 0], t12[:, 1]]
    return LookupTask(table, torch.cat([t12, t3[:, None]], 1))
