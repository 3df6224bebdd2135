"""DPC's attention-only transformer (Dana, Pydi, Chevaleyre 2025), as the original code computes it.

The model (spec dana.md §1.2, `Transformer`/`AoT` in the original `models.py`), for tokens t_{1:S}:
    res = E[t]                                         (B, S, d)      no position in the residual
    per layer ℓ:
        u   = C·res + P[:S]   (u = res + P if d = d_h)  (B, S, d_h)    P: position embedding of width d_h
        o   = Σ_h MHA_h(u, u, u, causal)               (B, S, d_h)    1/√d_h scaling, no bias
        res = res + D·o       (res + o if d = d_h)
        res = res + W_2 GELU(W_1 res + b_1)            if width W > 0
    logits = U·res[S-1]                                (B, N)         read at the last input position
C (d→d_h) and D (d_h→d) are ONE pair shared by all heads and layers, so the attention's contribution
has rank ≤ d_h whatever H is. `per_head_proj=True` gives the paper's variant instead (every head has
its own d→d_h and d_h→d maps, rank up to H·d_h). No LayerNorm anywhere (the original's docstring
says there is one; the code has none).

All H heads run as one batched product, and every parameter has a leading "models" dimension M, so
M independent models (repetitions) train in one computation; each model draws its initialisation
from its own generator, so model m is the same whether it trains alone or batched with others.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def _uniform(shape, bound: float, gen: torch.Generator) -> torch.Tensor:
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(bound).float()


def causal_mask(length: int, device=None) -> torch.Tensor:
    """True where attention is forbidden: the original's tril(ones(S, S)) == 0 (S x S)."""
    return torch.ones(length, length, device=device).tril() == 0


def param_count(vocab: int, dim: int, head_dim: int, heads: int, width: int = 0, layers: int = 1,
                per_head_proj: bool = False) -> int:
    """Parameters the original allocates (spec §1.3): N·d + 3·d_h + L·H·4·d_h² + 2·d·d_h + L(2dW+W) + N·d.

    C and D (2·d·d_h) are allocated even when d = d_h, where they are unused; P has 3 rows, 2 used.
    """
    proj = 2 * dim * head_dim * (heads if per_head_proj else 1)
    return 2 * vocab * dim + 3 * head_dim + layers * heads * 4 * head_dim ** 2 + proj \
        + layers * (2 * dim * width + width)


class AoT(nn.Module):
    """M independent attention-only transformers; parameters are (M, ...)."""

    def __init__(self, seeds: list[int], vocab: int, dim: int, head_dim: int, heads: int, width: int = 0,
                 layers: int = 1, positions: int = 3, per_head_proj: bool = False):
        super().__init__()
        N, d, dh, H, W, L, M = vocab, dim, head_dim, heads, width, layers, len(seeds)
        self.vocab, self.dim, self.head_dim, self.heads, self.width, self.layers = N, d, dh, H, W, L
        self.num_models, self.per_head_proj = M, per_head_proj
        self.project = per_head_proj or d != dh   # the original skips C and D when d = d_h
        P = H if per_head_proj else 1             # number of (C, D) pairs

        # PyTorch's default initialisations, as the original modules get them (spec §1.2).
        names = ("emb", "pos", "w_q", "w_k", "w_v", "w_out", "compress", "decompress", "w1", "b1", "w2", "unemb")
        t = {k: [] for k in names}
        for seed in seeds:
            g = torch.Generator().manual_seed(int(seed))
            t["emb"].append(_uniform((N, d), 1 / math.sqrt(d), g))                  # E: (N, d)
            t["pos"].append(_uniform((positions, dh), 1 / math.sqrt(dh), g))        # P: (3, d_h)
            # in_proj_weight (3d_h x d_h) is Xavier-uniform; stored as three transposed blocks: u @ w_q
            qkv = _uniform((L, H, 3, dh, dh), math.sqrt(6 / (4 * dh)), g)
            for i, name in enumerate(("w_q", "w_k", "w_v")):
                t[name].append(qkv[:, :, i])                                    # (L, H, d_h, d_h)
            t["w_out"].append(_uniform((L, H, dh, dh), 1 / math.sqrt(dh), g))       # out_proj, transposed
            t["compress"].append(_uniform((P, d, dh), 1 / math.sqrt(d), g))         # C: d -> d_h
            t["decompress"].append(_uniform((P, dh, d), 1 / math.sqrt(dh), g))      # D: d_h -> d
            t["w1"].append(_uniform((L, d, W), 1 / math.sqrt(d), g))                # MLP in (with bias)
            t["b1"].append(_uniform((L, W), 1 / math.sqrt(d), g))
            t["w2"].append(_uniform((L, W, d), 1 / math.sqrt(max(W, 1)), g))        # MLP out (no bias)
            t["unemb"].append(_uniform((N, d), 1 / math.sqrt(d), g))                # U: (N, d)
        for name, parts in t.items():
            setattr(self, name, nn.Parameter(torch.stack(parts)))
        if not self.project:   # allocated (they count) but never used, as in the original
            self.compress.requires_grad_(False)
            self.decompress.requires_grad_(False)
        if W == 0:
            for p in (self.w1, self.b1, self.w2):
                p.requires_grad_(False)

    @property
    def shared_params(self) -> int:
        """Parameters of one model, as the original's `model.parameters()` counts them."""
        return sum(p[0].numel() for p in self.parameters())

    def _gather(self, table: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """table (M, N, ...) rows at tokens (M, B, S) -> (M, B, S, ...); index_select backprops cheaply."""
        M, N = table.shape[:2]
        flat = (tokens + N * torch.arange(M, device=tokens.device)[:, None, None]).reshape(-1)
        return table.reshape(M * N, *table.shape[2:]).index_select(0, flat).view(*tokens.shape, *table.shape[2:])

    def qkv_first_layer(self, tokens: torch.Tensor, last_only: bool):
        """Layer 1's q, k, v by linearity: W(E[t]·C + P[s]) = (E·C·W)[t] + (P·W)[s].

        Tokens come from a vocabulary of N, so projecting the N embedding rows once and gathering is
        exact and much cheaper than projecting B·S rows through width-d_h products. Each (M, B, S, H, d_h).
        """
        S = tokens.shape[2]
        if self.per_head_proj:
            emb = torch.einsum("mnd,mhde->mnhe", self.emb, self.compress)     # (M, N, H, d_h)
            spec = "mnhe,mhef->mnhf"
        else:
            emb = self.emb @ self.compress[:, 0] if self.project else self.emb  # (M, N, d_h)
            spec = "mne,mhef->mnhf"
        out = []
        for w in (self.w_q[:, 0], self.w_k[:, 0], self.w_v[:, 0]):            # (M, H, d_h, d_h)
            table = torch.einsum(spec, emb, w)                                # (M, N, H, d_h)
            pos = torch.einsum("mse,mhef->mshf", self.pos[:, :S], w)         # (M, S, H, d_h)
            if last_only and not out:                                         # only the last query is read
                out.append(self._gather(table, tokens[:, :, -1:]) + pos[:, None, -1:])
            else:
                out.append(self._gather(table, tokens) + pos[:, None])
        return out

    def first_layer_last_pair(self, tokens: torch.Tensor) -> torch.Tensor:
        """One-layer models on (t_1, t_2), the task's case: Σ_h W_O^h·head_h at the last position,
        already through D (M, B, d) (per-head D_h when per_head_proj; shared D applied by the caller).

        Exact rewrites of the same function, chosen because tokens come from a vocabulary of N:
          - every head's q, k, v of a token is a row of an (N, H, d_h) table: (E·C·W)[t] + (P·W)[s];
          - softmax over two keys is σ(gap), gap = (q·k_1 − q·k_0)/√d_h, and q·k_1 depends on t_2 only;
          - out = Σ_h (1 − a_h)·VO_h(t_1) + a_h·VO_h(t_2) with VO = (value table)·W_O, one weighted
            (1 x 2H)·(2H x d_h) product over gathered table rows per example.
        """
        M, B, _ = tokens.shape
        N, H, dh = self.vocab, self.heads, self.head_dim
        if self.per_head_proj:
            emb = torch.einsum("mnd,mhde->mnhe", self.emb, self.compress)     # (M, N, H, d_h)
            spec = "mnhe,mhef->mnhf"
        else:
            emb = self.emb @ self.compress[:, 0] if self.project else self.emb  # (M, N, d_h)
            spec = "mne,mhef->mnhf"
        # tables with the position embedding folded in: q at position 1, k and v at positions 0 and 1
        pos = self.pos[:, :2]                                                 # (M, 2, d_h)
        q = torch.einsum(spec, emb, self.w_q[:, 0]) + torch.einsum("me,mhef->mhf", pos[:, 1], self.w_q[:, 0])[:, None]
        k = torch.einsum(spec, emb, self.w_k[:, 0])[:, None] + torch.einsum("mse,mhef->mshf", pos, self.w_k[:, 0])[:, :, None]
        v = torch.einsum(spec, emb, self.w_v[:, 0])[:, None] + torch.einsum("mse,mhef->mshf", pos, self.w_v[:, 0])[:, :, None]
        # q, k[:, 0], k[:, 1], v[...]: (M, N, H, d_h) / (M, 2, N, H, d_h)
        t1, t2 = tokens[:, :, 0], tokens[:, :, 1]                             # (M, B)
        self_score = (q * k[:, 1]).sum(-1)                                    # (M, N, H): q(t_2)·k_1(t_2)
        q2 = self._gather(q, t2[..., None])[:, :, 0]                          # (M, B, H, d_h)
        k1 = self._gather(k[:, 0], t1[..., None])[:, :, 0]                    # (M, B, H, d_h)
        gap = self._gather(self_score, t2[..., None])[:, :, 0] - (q2 * k1).sum(-1)   # (M, B, H)
        a1 = torch.sigmoid(gap / math.sqrt(dh))                               # weight on key t_2
        vo = torch.einsum("mjnhe,mhef->mjnhf", v, self.w_out[:, 0])           # (M, 2, N, H, d_h)
        if self.per_head_proj:
            vo = torch.einsum("mjnhf,mhfd->mjnhd", vo, self.decompress)       # (M, 2, N, H, d)
        heads = torch.arange(H, device=tokens.device)
        base = (torch.arange(M, device=tokens.device) * 2 * N * H)[:, None, None]
        rows = torch.cat([base + t1[..., None] * H + heads, base + N * H + t2[..., None] * H + heads], -1)
        weights = torch.cat([1 - a1, a1], -1)                                 # (M, B, 2H)
        rows_vo = vo.reshape(M * 2 * N * H, -1).index_select(0, rows.reshape(-1))   # (M·B·2H, d_h | d)
        out = torch.bmm(weights.reshape(M * B, 1, 2 * H), rows_vo.view(M * B, 2 * H, -1))
        return out.view(M, B, -1)                                             # (M, B, d_h or d)

    def qkv(self, u: torch.Tensor, layer: int, last_only: bool):
        """u: (M, B, S, d_h) shared by heads, or (M, B, S, H, d_h) per head -> q, k, v (M, B, S, H, d_h)."""
        M, B, S, dh, H = u.shape[0], u.shape[1], u.shape[2], self.head_dim, self.heads
        out = []
        for w in (self.w_q[:, layer], self.w_k[:, layer], self.w_v[:, layer]):  # (M, H, d_h, d_h)
            x = u[:, :, -1:] if last_only and not out else u
            if x.dim() == 5:
                out.append(torch.einsum("mbshe,mhef->mbshf", x, w))
            else:
                y = x.reshape(M, -1, dh) @ w.permute(0, 2, 1, 3).reshape(M, dh, H * dh)
                out.append(y.view(M, B, x.shape[2], H, dh))
        return out

    def attend(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """All H heads at once: q (M, B, Sq, H, d_h), k, v (M, B, S, H, d_h) -> (M, B, Sq, H, d_h).

        S is tiny (2), so scores and mixing are broadcast products over (query, key) pairs, which keeps
        heads in the last dims and avoids thousands of 1x2 matrix products. Queries are the last Sq
        positions; the causal mask lets query i see keys j <= i.
        """
        S, Sq = k.shape[2], q.shape[2]
        if S == 2 and Sq == 1:   # the task's case: softmax over 2 keys = sigmoid of the score gap
            gap = (q[:, :, 0] * (k[:, :, 1] - k[:, :, 0])).sum(-1, keepdim=True)   # (M, B, H, 1)
            a1 = torch.sigmoid(gap / math.sqrt(self.head_dim))
            return (v[:, :, 0] + a1 * (v[:, :, 1] - v[:, :, 0]))[:, :, None]   # (M, B, 1, H, d_h)
        scores = (q[:, :, :, None] * k[:, :, None]).sum(-1) / math.sqrt(self.head_dim)  # (M, B, Sq, S, H)
        mask = causal_mask(S, q.device)[S - Sq:]                              # (Sq, S)
        if bool(mask.any()):                                                  # the last row is unmasked
            scores = scores.masked_fill(mask[:, :, None], float("-inf"))
        att = scores.softmax(3)
        return (att[..., None] * v[:, :, None]).sum(3)                        # (M, B, Sq, H, d_h)

    def mix_heads(self, heads: torch.Tensor, layer: int) -> torch.Tensor:
        """Σ_h (D_h) W_O^h head_h: (M, B, Sq, H, d_h) -> (M, B, Sq, d); the shared D when d != d_h."""
        M, B, Sq = heads.shape[:3]
        if self.per_head_proj:
            o = torch.einsum("mbshe,mhef->mbshf", heads, self.w_out[:, layer])
            return torch.einsum("mbshf,mhfd->mbsd", o, self.decompress)
        w_out = self.w_out[:, layer].reshape(M, self.heads * self.head_dim, self.head_dim)
        o = (heads.reshape(M, B * Sq, -1) @ w_out).view(M, B, Sq, self.head_dim)
        return o @ self.decompress[:, 0][:, None] if self.project else o

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (M, B, S) -> next-token logits at the last position (M, B, N)."""
        M, B, S = tokens.shape
        res = self._gather(self.emb, tokens)                                  # (M, B, S, d)
        pos = self.pos[:, :S]                                                 # (M, S, d_h)
        for layer in range(self.layers):
            last = layer == self.layers - 1   # the last layer only needs the last position's output
            if layer == 0 and last and S == 2:                                # the task's case, fast
                o = self.first_layer_last_pair(tokens)[:, :, None]           # (M, B, 1, d_h | d)
                if self.project and not self.per_head_proj:
                    o = o @ self.decompress[:, 0][:, None]                    # (M, B, 1, d)
            else:
                if layer == 0:
                    q, k, v = self.qkv_first_layer(tokens, last)
                elif not self.project:
                    q, k, v = self.qkv(res + pos[:, None], layer, last)        # (M, B, S, d_h = d)
                elif self.per_head_proj:
                    u = torch.einsum("mbsd,mhde->mbshe", res, self.compress) + pos[:, None, :, None]
                    q, k, v = self.qkv(u, layer, last)
                else:
                    q, k, v = self.qkv(res @ self.compress[:, 0][:, None] + pos[:, None], layer, last)
                heads = self.attend(q, k, v)                                  # (M, B, Sq, H, d_h)
                o = self.mix_heads(heads, layer)                              # (M, B, Sq, d)
            Sq = o.shape[2]
            res = res[:, :, -Sq:] + o
            if self.width:
                hidden = F.gelu(res @ self.w1[:, layer][:, None] + self.b1[:, layer][:, None, None])
                res = res + hidden @ self.w2[:, layer][:, None]               # (M, B, Sq, d)
        return res[:, :, -1] @ self.unemb.transpose(1, 2)                     # (M, B, N)
