"""The original code's computation, written the way it was: a reference for tests and the benchmark.

`ReferenceAoT` holds H separate `nn.MultiheadAttention(d_h, 1, bias=False, batch_first=True)` modules per
layer and sums them in a Python loop, with the shared `linear_compress`/`linear_decompress` maps and
the position embedding added at the attention input only (original `models.py`). It copies the
weights of one model of a memcap `AoT`, so the two must agree to float precision.
`reference_data` draws trigrams one sample at a time in Python, as `utils.generate_data` does.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from memcap.models.aot import AoT


class ReferenceAoT(nn.Module):
    def __init__(self, fast: AoT, m: int = 0):
        super().__init__()
        d, dh, H, W, L = fast.dim, fast.head_dim, fast.heads, fast.width, fast.layers
        if fast.per_head_proj:
            raise ValueError("the reference is the original code, which has no per-head projection")
        self.d, self.dh, self.width, self.project = d, dh, W, fast.project
        self.word_emb = nn.Embedding(fast.vocab, d)
        self.pos_emb = nn.Embedding(fast.pos.shape[1], dh)
        self.linear_compress = nn.Linear(d, dh, bias=False)
        self.linear_decompress = nn.Linear(dh, d, bias=False)
        self.attn = nn.ModuleList([nn.ModuleList([nn.MultiheadAttention(dh, 1, bias=False, batch_first=True)
                                                  for _ in range(H)]) for _ in range(L)])
        self.mlp = nn.ModuleList([nn.Sequential(nn.Linear(d, W), nn.GELU(), nn.Linear(W, d, bias=False))
                                  for _ in range(L)]) if W else None
        self.unemb = nn.Linear(d, fast.vocab, bias=False)
        with torch.no_grad():
            self.word_emb.weight.copy_(fast.emb[m])
            self.pos_emb.weight.copy_(fast.pos[m])
            self.linear_compress.weight.copy_(fast.compress[m, 0].T)
            self.linear_decompress.weight.copy_(fast.decompress[m, 0].T)
            for ℓ, heads in enumerate(self.attn):
                for h, mha in enumerate(heads):
                    mha.in_proj_weight.copy_(torch.cat([fast.w_q[m, ℓ, h].T, fast.w_k[m, ℓ, h].T,
                                                        fast.w_v[m, ℓ, h].T]))
                    mha.out_proj.weight.copy_(fast.w_out[m, ℓ, h].T)
                if W:
                    self.mlp[ℓ][0].weight.copy_(fast.w1[m, ℓ].T)
                    self.mlp[ℓ][0].bias.copy_(fast.b1[m, ℓ])
                    self.mlp[ℓ][2].weight.copy_(fast.w2[m, ℓ].T)
            self.unemb.weight.copy_(fast.unemb[m])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, S) -> logits at every position (B, S, N), as the original returns them."""
        S = x.shape[1]
        res = self.word_emb(x)
        pos = self.pos_emb.weight[:S]
        mask = torch.tril(torch.ones(S, S)) == 0
        for ℓ, heads in enumerate(self.attn):
            u = (self.linear_compress(res) if self.project else res) + pos
            o = 0
            for mha in heads:                      # the original's loop over parallel heads
                o = o + mha(u, u, u, attn_mask=mask, need_weights=False)[0]
            res = res + (self.linear_decompress(o) if self.project else o)
            if self.mlp is not None:
                res = res + self.mlp[ℓ](res)
        return self.unemb(res)


def reference_data(table: torch.Tensor, n_samples: int) -> torch.Tensor:
    """(n_samples, 3) trigrams drawn one by one in Python (the original's `generate_data` loop)."""
    N = table.shape[0]
    rows = []
    for _ in range(n_samples):
        t1 = int(torch.randint(N, (1,)))
        t2 = int(torch.randint(N, (1,)))
        rows.append([t1, t2, int(table[t1, t2])])
    return torch.tensor(rows)


def reference_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The original's `compute_loss`: CrossEntropyLoss(log(softmax + 1e-12)) at position 1."""
    return F.cross_entropy(torch.log(logits[:, -1].softmax(-1) + 1e-12), target)
