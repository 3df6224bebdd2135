"""MLT's one-layer multi-head attention (Mahdavi et al. 2024), as the original code trains it.

The model (MLT §3 eqs (1)-(6) as `BaselineAttention` in the original code trains it;
docs/method.md, "MLT: Model"):
    x_0 = e (query), x_1..x_n = E (context), all raw rows of width d
    emb_i = W_emb x_i + b_emb + pe[i]             sinusoidal PE, query at position 0
    s_h   = emb_{1..n} W_K^h (W_Q^h)^T emb_0 / sqrt(d)   the query attends only to the n context rows
    α_h   = softmax(s_h);   p_h = α_h^T (emb_{1..n} W_V^h)   d_v values per head (the paper's: 1)
    ŷ     = W_D^T (W_O^T [p_1..p_H]) + b_D        readout from the query row, no skip/LN/FFN

With d_v values a head, W_V^h is d x d_v and the readout sees H·d_v numbers (its rank up to H·d_v, not
H). They are stored as H·d_v rows of width d, head h's the rows h·d_v .. h·d_v + d_v − 1, so w_v and
w_o are (M, H·d_v, d): at d_v = 1 exactly the paper's (M, H, d), drawn in the same order.

Only the query row is ever read, so this module computes attention for that row alone, and orders
the products by cost: with a shared context, K_h = E·W_K^h·(W_Q^h)^T (n x d) is formed once per step and
every logit is one GEMM against the queries; with a context per example, s_h = E·(A_h e) with
A_h = W_K^h (W_Q^h)^T when d_h is near d, else E·(W_K^h ((W_Q^h)^T e)). A context per example is not
even embedded where that costs less (most H < d): emb_j = x_j W_emb + b + pe_j, so
s_h = E (W_emb A_h e) + (b + pe_j) A_h e and p_h = α_h^T (E W_emb w_v^h + (b + pe_j) w_v^h): the B·n rows
and their gradient are never formed (`_folds_embedding` compares the multiply-adds).

Every parameter has a leading "models" dimension M: M independent models (e.g. seeds of one grid
point) train in one batched computation. Adam is elementwise and the loss is a sum of per-model
losses, so batching changes nothing about each model's training.

`MLTAttention.stack` packs models of different shapes (a pack of a sweep's grid points): heads and
head columns beyond a model's own are zero, and stay zero (with W_V^h = W_O^h = 0 a head adds nothing
and gets no gradient; a zero W_Q/W_K column gets none either), and context tokens beyond a model's n
are masked out of the softmax (weight exactly 0, so no gradient). Each model computes what it alone
would, up to the order of float sums.
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn

from memcap.models import mlt_work
from memcap.models.mlt_work import param_count  # noqa: F401 (the model's own count, torch-free there)


def sinusoidal_pe(positions: int, width: int) -> torch.Tensor:
    """pe[p, 2i] = sin(p / 10000^(2i/width)), pe[p, 2i+1] = cos(...), as in the original code."""
    pos = torch.arange(positions, dtype=torch.float64)[:, None]
    freq = torch.exp(torch.arange(0, width, 2, dtype=torch.float64) * (-math.log(10000.0) / width))
    pe = torch.zeros(positions, width, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq[: width // 2])
    return pe.float()


def _uniform(shape, bound: float, gen: torch.Generator) -> torch.Tensor:
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(bound).float()


def _xavier_bound(fan_in: int, fan_out: int) -> float:
    return math.sqrt(6.0 / (fan_in + fan_out))


class MLTAttention(nn.Module):
    """M independent MLT attention models in one module; parameters are (M, ...)."""

    def __init__(self, seeds: list[int], input_dim: int = 64, heads: int = 20, context_size: int = 32,
                 head_dim: int | None = None, out_dim: int = 100, value_dim: int = 1):
        super().__init__()
        d, dh, H, M, dv = input_dim, head_dim or input_dim, heads, len(seeds), value_dim
        self.input_dim, self.head_dim, self.heads, self.out_dim, self.value_dim = d, dh, H, out_dim, dv
        self.context_size, self.num_models = context_size, M
        self.register_buffer("pe", sinusoidal_pe(context_size + 1, d))  # (n+1, d)

        # Each model draws its initialisation from its own generator, so model m is the same
        # whether it trains alone or batched with others.
        tensors = {k: [] for k in ("emb_w", "emb_b", "w_q", "w_k", "w_v", "w_o", "dec_w", "dec_b")}
        for seed in seeds:
            g = torch.Generator().manual_seed(int(seed))
            lin = 1 / math.sqrt(d)  # nn.Linear default bound for fan_in = d
            tensors["emb_w"].append(_uniform((d, d), lin, g))                     # x @ emb_w
            tensors["emb_b"].append(_uniform((d,), lin, g))
            tensors["w_q"].append(_uniform((H, d, dh), _xavier_bound(dh, d), g))  # Wq[h]: d x dh
            tensors["w_k"].append(_uniform((H, d, dh), _xavier_bound(dh, d), g))
            tensors["w_v"].append(_uniform((H * dv, d), _xavier_bound(dv, d), g))       # Wv[h]: d x d_v
            tensors["w_o"].append(_uniform((H * dv, d), _xavier_bound(d, H * dv), g))   # Wo: H·d_v x d
            tensors["dec_w"].append(_uniform((d, out_dim), lin, g))
            tensors["dec_b"].append(_uniform((out_dim,), lin, g))
        for name, parts in tensors.items():
            setattr(self, name, nn.Parameter(torch.stack(parts)))
        # each model's own (heads, head_dim, n), and d_v when it is not 1 (a d_v = 1 model's shape as ever)
        self.shapes = [(H, dh, context_size, *([dv] if dv != 1 else []))] * M
        self.register_buffer("context_mask", None, persistent=False)   # (M, n): 0, or -inf: a padded token

    @classmethod
    def stack(cls, models: list["MLTAttention"]) -> "MLTAttention":
        """One module holding every model of `models` (in order), padded to the largest heads, head
        size and context size (see the module docstring). Same d and outputs required."""
        first = models[0]
        if {(m.input_dim, m.out_dim) for m in models} != {(first.input_dim, first.out_dim)}:
            raise ValueError("MLTAttention.stack: every model needs the same input_dim and out_dim")
        H = max(m.heads for m in models)
        dh = max(m.head_dim for m in models)
        n = max(m.context_size for m in models)
        dv = max(m.value_dim for m in models)
        out = cls.__new__(cls)
        nn.Module.__init__(out)
        out.input_dim, out.head_dim, out.heads, out.out_dim = first.input_dim, dh, H, first.out_dim
        out.value_dim = dv
        out.context_size, out.num_models = n, sum(m.num_models for m in models)
        out.register_buffer("pe", sinusoidal_pe(n + 1, first.input_dim))   # row p depends on p alone
        for name, _ in first.named_parameters():
            parts = []
            for m in models:
                t = getattr(m, name).detach()
                pad = {"w_q": (0, dh - m.head_dim, 0, 0, 0, H - m.heads),
                       "w_k": (0, dh - m.head_dim, 0, 0, 0, H - m.heads)}.get(name)
                if name in ("w_v", "w_o"):   # a head's d_v rows padded to dv, then the heads to H
                    rows = t.view(t.shape[0], m.heads, m.value_dim, -1)
                    t = nn.functional.pad(rows, (0, 0, 0, dv - m.value_dim, 0, H - m.heads)).flatten(1, 2)
                parts.append(nn.functional.pad(t, pad) if pad else t)
            setattr(out, name, nn.Parameter(torch.cat(parts)))
        out.shapes = [shape for m in models for shape in m.shapes]
        mask = torch.zeros(out.num_models, n)
        for i, shape in enumerate(out.shapes):
            mask[i, shape[2]:] = float("-inf")
        out.register_buffer("context_mask", mask if bool(mask.isinf().any()) else None, persistent=False)
        return out

    def select(self, keep: list[int]) -> "MLTAttention":
        """The models at positions `keep` as a module of their own (a copy of their parameters)."""
        out = copy.copy(self)
        out._parameters, out._buffers = dict(self._parameters), dict(self._buffers)
        index = torch.tensor(keep, device=self.pe.device)
        for name, p in self.named_parameters():
            out._parameters[name] = nn.Parameter(p.detach().index_select(0, index))
        if self.context_mask is not None:
            out._buffers["context_mask"] = self.context_mask.index_select(0, index)
        out.shapes, out.num_models = [self.shapes[k] for k in keep], len(keep)
        return out

    @torch.no_grad()
    def keep(self, keep: list[int]) -> None:
        """In place: only the models at positions `keep` remain (a pack whose other models finished)."""
        index = torch.tensor(keep, device=self.pe.device)
        for name, p in list(self.named_parameters()):   # new leaves: autograd keeps a leaf's old shape
            setattr(self, name, nn.Parameter(p.detach().index_select(0, index)))
        if self.context_mask is not None:
            self.context_mask = self.context_mask.index_select(0, index)
        self.shapes, self.num_models = [self.shapes[k] for k in keep], len(keep)

    @torch.no_grad()
    def restore(self, params: dict[str, torch.Tensor], shapes: list, context_mask) -> None:
        """In place: every model back, with these parameters (M, ...) (the trainer's best checkpoint)."""
        for name, _ in list(self.named_parameters()):
            setattr(self, name, nn.Parameter(params[name]))
        self.shapes, self.num_models, self.context_mask = list(shapes), len(shapes), context_mask

    def param_count(self, m: int = 0) -> int:
        """Parameters of model m as it stands alone (the paper's P)."""
        H, dh, _, *dv = self.shapes[m]
        return param_count(self.input_dim, H, dh, self.out_dim, *dv)

    @property
    def shared_params(self) -> int:
        """Parameters of one model of a grid point (every model has the same shape)."""
        return self.param_count(0)

    def masked(self, logits: torch.Tensor) -> torch.Tensor:
        """logits (M, B, H, n) with a padded context token's logit at -inf (in place)."""
        if self.context_mask is not None:
            logits.add_(self.context_mask[:, None, None, :])
        return logits

    def embed(self, x: torch.Tensor, positions: slice) -> torch.Tensor:
        """x: (M, ..., L, d) raw rows -> embedded rows + PE at `positions` (L of them).

        The rows of each model go through one (rows x d) @ (d x d) product: a weight broadcast over a
        batch dimension instead would make autograd form one d x d outer product per example."""
        M, d = self.num_models, self.input_dim
        rows = torch.baddbmm(self.emb_b[:, None, :], x.reshape(M, -1, d), self.emb_w)
        return rows.view(*x.shape[:-1], d) + self.pe[positions]

    def attention(self, queries: torch.Tensor, contexts: torch.Tensor) -> torch.Tensor:
        """Attention weights of the query row: (M, B, H, n). contexts: (M, n, d) shared or (M, B, n, d)."""
        q = self.embed(queries[:, :, None, :], slice(0, 1))[:, :, 0]          # (M, B, d)
        return self._attend(q, contexts)[0]

    def _attend(self, q: torch.Tensor, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(α (M, B, H, n), values (M, n, H·d_v) shared | (M, B, n, H·d_v)) of the embedded queries q
        (M, B, d) over the raw context rows."""
        if contexts.dim() == 4 and self._folds_embedding(contexts.shape[1]):
            return self._attend_raw_rows(q, contexts)
        ctx = self.embed(contexts, slice(1, self.context_size + 1))           # (M, n, d) | (M, B, n, d)
        eq = "mnd,mhd->mnh" if ctx.dim() == 3 else "mbnd,mhd->mbnh"
        return self._softmax_logits(q, ctx), torch.einsum(eq, ctx, self.w_v)

    def per_value(self, alpha: torch.Tensor) -> torch.Tensor:
        """α (..., H, n) as each of a head's d_v values reads it: (..., H·d_v, n) (itself at d_v = 1)."""
        return alpha if self.value_dim == 1 else alpha.repeat_interleave(self.value_dim, dim=-2)

    def _uses_a(self, batch: int) -> bool:
        """A context per example: form A_h = W_K^h (W_Q^h)^T (d_h near d), else go through (W_Q^h)^T e."""
        return mlt_work.uses_a(self.input_dim, self.heads, self.head_dim, batch)

    def _a(self) -> torch.Tensor:
        """A_h = W_K^h (W_Q^h)^T of every model and head: (M, H, d, d)."""
        return torch.einsum("mhde,mhfe->mhdf", self.w_k, self.w_q)

    def formulation(self, batch: int) -> tuple[bool, bool]:
        """The products a batch of this many examples takes (A_h formed, rows left raw): two batch sizes
        with the same formulation give each example the same numbers."""
        return self._uses_a(batch), self._folds_embedding(batch)

    def _folds_embedding(self, batch: int) -> bool:
        """A context per example, A_h formed: leave its rows raw where that takes fewer multiply-adds."""
        return mlt_work.folds_embedding(self.input_dim, self.heads, self.context_size, self.head_dim, batch)

    def _attend_raw_rows(self, q: torch.Tensor, contexts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """_attend for a context per example without embedding it (module docstring): the same sums."""
        n = self.context_size
        a = self._a()                                                              # A_h (M, H, d, d)
        rows = self.emb_b[:, None, :] + self.pe[1:n + 1]                          # b + pe_j (M, n, d)
        u = torch.einsum("mbf,mhcf->mbhc", q, torch.einsum("mcd,mhdf->mhcf", self.emb_w, a))   # W_emb A_h e
        table = torch.einsum("mnd,mhdf->mhnf", rows, a)                           # (b + pe_j) A_h (M, H, n, d)
        logits = torch.einsum("mbnc,mbhc->mbhn", contexts, u) + torch.einsum("mbf,mhnf->mbhn", q, table)
        alpha = self.masked(logits * (1 / math.sqrt(self.input_dim))).softmax(-1)
        v = torch.einsum("mcd,mhd->mch", self.emb_w, self.w_v)                    # W_emb w_v^h (M, d, H)
        values = torch.einsum("mbnc,mch->mbnh", contexts, v) + torch.einsum("mnd,mhd->mnh", rows, self.w_v)[:, None]
        return alpha, values

    def _softmax_logits(self, q: torch.Tensor, ctx: torch.Tensor) -> torch.Tensor:
        """softmax over the context of s_h = E·W_K^h·(W_Q^h)^T·e / sqrt(d), the products in the cheapest order."""
        M, B, d = q.shape
        H, n = self.heads, self.context_size
        scale = 1 / math.sqrt(self.input_dim)
        if ctx.dim() == 3:
            # shared context: each head's keys composed with its query map, K_h = E W_K^h (W_Q^h)^T (n x d),
            # once per step; then one GEMM for every example and head (n < batch: fewer FLOPs)
            kq = torch.einsum("mnd,mhde->mhne", ctx, self.w_k)                 # (M, H, n, dh)
            keys = torch.einsum("mhne,mhfe->mhnf", kq, self.w_q)               # (M, H, n, d)
            logits = (q @ keys.reshape(M, H * n, d).transpose(1, 2)).view(M, B, H, n)
        else:
            if self._uses_a(B):                                                 # d_h near d: A_h = W_K W_Q^T
                u = torch.einsum("mbf,mhdf->mbhd", q, self._a())                # (M, B, H, d)
            else:
                qh = torch.einsum("mbd,mhde->mbhe", q, self.w_q)               # (M, B, H, dh)
                u = torch.einsum("mbhe,mhde->mbhd", qh, self.w_k)
            logits = torch.einsum("mbnd,mbhd->mbhn", ctx, u)
        return self.masked(logits * scale).softmax(-1)

    def forward(self, queries: torch.Tensor, contexts: torch.Tensor, return_attention: bool = False):
        """queries (M, B, d); contexts (M, n, d) shared or (M, B, n, d) -> outputs (M, B, out_dim)."""
        q = self.embed(queries[:, :, None, :], slice(0, 1))[:, :, 0]          # (M, B, d)
        alpha, values = self._attend(q, contexts)                              # (M, B, H, n), values
        weights = self.per_value(alpha)                                        # (M, B, H·d_v, n)
        if values.dim() == 3:                                                  # shared: values once
            heads = torch.einsum("mbhn,mnh->mbh", weights, values)
        else:   # a dot product per example and head: elementwise, not B·H matmuls of 1 x n (~12% of a CPU step)
            heads = (weights * values.transpose(-1, -2)).sum(-1)
        o = torch.einsum("mbh,mhd->mbd", heads, self.w_o)                      # (M, B, d)
        out = torch.baddbmm(self.dec_b[:, None, :], o, self.dec_w)             # (M, B, out_dim)
        return (out, alpha) if return_attention else out
