"""DPC's attention-only transformer (Dana, Pydi, Chevaleyre 2025), as the original code computes it.

The model (DPC §2; `Transformer`/`AoT` in the original `models.py`; docs/method.md, "DPC: Model"), for tokens t_{1:S}:
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

All H heads run as a few batched GEMMs, and every parameter has a leading "models" dimension M, so
M independent models (repetitions) train in one computation; each model draws its initialisation
from its own generator, so model m is the same whether it trains alone or batched with others.
For the task's two-token contexts, `attend_pair` computes the same attention in closed form (position
0 sees only itself; position 1 mixes two keys through a sigmoid); `attend` is the general masked form
for longer inputs, and the tests hold each to the other and to the original's loop of modules.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from memcap.models.aot_count import param_count   # noqa: F401  (the model's count, beside the model)


def _uniform(shape, bound: float, gen: torch.Generator) -> torch.Tensor:
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1).mul_(bound).float()


def causal_mask(length: int, device=None) -> torch.Tensor:
    """True where attention is forbidden: the original's tril(ones(S, S)) == 0 (S x S)."""
    return torch.ones(length, length, device=device).tril() == 0


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

        # PyTorch's default initialisations, as the original modules get them.
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

    def _attention_input(self, res: torch.Tensor, S: int) -> torch.Tensor:
        """u = C·res + P[:S] (res + P when d = d_h): (M, B, S, d_h), or (M, B, S, H, d_h) per head."""
        pos = self.pos[:, None, :S]                                           # (M, 1, S, d_h)
        if self.per_head_proj:
            return torch.einsum("mbsd,mhde->mbshe", res, self.compress) + pos[:, :, :, None]
        return (bmm(res, self.compress[:, 0]) if self.project else res) + pos

    def _decompress(self, o: torch.Tensor) -> torch.Tensor:
        """The shared D (d_h -> d) on the summed heads; identity when d = d_h."""
        return bmm(o, self.decompress[:, 0]) if self.project and not self.per_head_proj else o

    def _mlp(self, res: torch.Tensor, layer: int) -> torch.Tensor:
        """res + W_2 GELU(W_1 res + b_1) on every row of res (M, ..., d)."""
        if not self.width:
            return res
        M, d = res.shape[0], res.shape[-1]
        out = ResidualMLP.apply(res.reshape(M, -1, d), self.w1[:, layer], self.b1[:, layer], self.w2[:, layer])
        return out.view(res.shape)

    def attend_pair(self, u: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Σ_h W_O^h·head_h at positions 0 and 1 of a two-token input, all heads batched.

        u: (M, B, 2, d_h), or (M, B, 2, H, d_h) per head. Exact rewrites of the causal two-key
        attention (the task's case), chosen because they turn per-head work into a few GEMMs:
          - position 0 sees only itself, so its output is u_0·Σ_h VO_h with VO_h = W_V^h W_O^h;
          - position 1's softmax over two keys is a_h = σ(gap_h), gap_h = u_1ᵀ A_h δ with
            A_h = W_Q^h W_K^hᵀ/√d_h and δ = u_1 − u_0 (scores differ only through the key);
          - its output is u_0·Σ_h VO_h + Σ_h a_h·δ·VO_h.
        Returns (M, B, d_h) twice; (M, B, d) with the per-head D_h already applied when per_head_proj.
        """
        M, B, H, dh = u.shape[0], u.shape[1], self.heads, self.head_dim
        w_q, w_k, w_v, w_o = (w[:, layer] for w in (self.w_q, self.w_k, self.w_v, self.w_out))  # (M, H, d_h, d_h)
        A = w_q @ w_k.transpose(-1, -2) / math.sqrt(dh)                       # (M, H, d_h, d_h)
        VO = w_v @ w_o                                                        # (M, H, d_h, d_h)
        u0, u1 = u[:, :, 0], u[:, :, 1]
        delta = u1 - u0
        if self.per_head_proj:                                                # u0, u1: (M, B, H, d_h)
            VO = VO @ self.decompress                                         # (M, H, d_h, d): VO_h D_h
            gap = (torch.einsum("mbhe,mhef->mbhf", u1, A) * delta).sum(-1)   # (M, B, H)
            base = torch.einsum("mbhe,mhed->mbd", u0, VO)
            mix = torch.einsum("mbhe,mhed->mbd", torch.sigmoid(gap)[..., None] * delta, VO)
            return base, base + mix
        base = bmm(u0, VO.sum(1))                                             # (M, B, d_h)
        if H >= dh:   # per-example work of size d_h² (outer products), fewer than H·d_h values
            mix = OuterPairMix.apply(u1, delta, A, VO)
        else:         # per-example work of size H·d_h (per-head projections)
            heads_of = lambda W: W.transpose(1, 2).reshape(M, dh, H * dh)      # (M, d_h, H·d_h)
            gap = (bmm(u1, heads_of(A)).view(M, B, H, dh) * delta[:, :, None]).sum(-1)
            mix = (torch.sigmoid(gap)[..., None] * bmm(delta, heads_of(VO)).view(M, B, H, dh)).sum(-2)
        return base, base + mix

    def attend(self, u: torch.Tensor, layer: int) -> torch.Tensor:
        """Any length S: H causal heads as the original computes them, (M, B, S, d_h | d); the reference
        form of `attend_pair`, for inputs longer than the task's two tokens."""
        S, dh = u.shape[2], self.head_dim
        spec = "mbshe,mhef->mbshf" if self.per_head_proj else "mbse,mhef->mbshf"
        q, k, v = (torch.einsum(spec, u, w[:, layer]) for w in (self.w_q, self.w_k, self.w_v))
        scores = torch.einsum("mbihe,mbjhe->mbhij", q, k) / math.sqrt(dh)
        att = scores.masked_fill(causal_mask(S, u.device), float("-inf")).softmax(-1)
        heads = torch.einsum("mbhij,mbjhe->mbihe", att, v)
        heads = torch.einsum("mbshe,mhef->mbshf", heads, self.w_out[:, layer])   # W_O^h per head
        if self.per_head_proj:
            return torch.einsum("mbshe,mhed->mbsd", heads, self.decompress)
        return heads.sum(3)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (M, B, S) -> next-token logits at the last position (M, B, N)."""
        S = tokens.shape[2]
        res = self._gather(self.emb, tokens)                                  # (M, B, S, d)
        for layer in range(self.layers):
            last = layer == self.layers - 1
            u = self._attention_input(res, S)
            if S == 2:
                o0, o1 = self.attend_pair(u, layer)
                o = o1[:, :, None] if last else torch.stack([o0, o1], 2)      # the last layer: position 1 only
            else:
                o = self.attend(u, layer)[:, :, -1:] if last else self.attend(u, layer)
            res = res[:, :, -o.shape[2]:] + self._decompress(o)
            res = self._mlp(res, layer)
        return bmm(res[:, :, -1], self.unemb.transpose(1, 2))                 # (M, B, N)


def bmm(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """Per-model product x (M, ..., k) @ w (M, k, n) -> (M, ..., n), as ONE batched GEMM.

    `x @ w[:, None]` would broadcast w over the middle dims and run M·B tiny products (and a huge
    expanded gradient): 70x slower for the MLP. bias (M, n) is added in the same call.
    """
    M, k = x.shape[0], x.shape[-1]
    flat = x.reshape(M, -1, k)
    out = torch.bmm(flat, w) if bias is None else torch.baddbmm(bias[:, None], flat, w)
    return out.view(*x.shape[:-1], w.shape[-1])


class ResidualMLP(torch.autograd.Function):
    """x + W_2 GELU(W_1 x + b_1) (exact erf GELU) per model: x (M, R, d), w1 (M, d, W), b1 (M, W), w2 (M, W, d).

    The same function autograd would differentiate, with the backward written out so that every
    GEMM has a wide output: MKL runs (R x W)·(W x d) products at half speed when d is small, and
    autograd's own backward has three of them (the MLP arms of Exp 5 and the depth group: 1.3x faster).
    """

    @staticmethod
    def forward(ctx, x, w1, b1, w2):
        hidden = torch.baddbmm(b1[:, None], x, w1)                         # (M, R, W)
        act = F.gelu(hidden)
        ctx.save_for_backward(x, w1, w2, hidden, act)
        return x + torch.bmm(w2.transpose(1, 2), act.transpose(1, 2)).transpose(1, 2)

    @staticmethod
    def backward(ctx, grad):
        x, w1, w2, hidden, act = ctx.saved_tensors
        d_w2 = torch.bmm(grad.transpose(1, 2).contiguous(), act).transpose(1, 2)   # (M, W, d)
        d_hidden = torch.ops.aten.gelu_backward(torch.bmm(grad, w2.transpose(1, 2)), hidden)
        d_w1 = torch.bmm(x.transpose(1, 2), d_hidden)                      # (M, d, W)
        d_x = grad + torch.bmm(w1, d_hidden.transpose(1, 2)).transpose(1, 2)
        return d_x, d_w1, d_hidden.sum(1), d_w2


class OuterPairMix(torch.autograd.Function):
    """Σ_h σ(u_1ᵀ A_h δ)·δ VO_h per example, through d_h x d_h outer products (`attend_pair`, H ≥ d_h).

    u_1, δ (M, B, d_h); A, VO (M, H, d_h, d_h). gap = (u_1 δᵀ)·A_h as one GEMM over flattened d_h²,
    and the gated sum Σ_h a_h VO_h as another. The backward is written out so that the gates stay
    heads-major (M, H, B) and every GEMM has a wide output: 1.3-1.7x faster than autograd's.
    """

    @staticmethod
    def forward(ctx, u1, delta, A, VO):
        M, B, dh = u1.shape
        outer = (u1[..., :, None] * delta[..., None, :]).view(M, B, dh * dh)            # u_1 δᵀ
        gate = torch.sigmoid(torch.bmm(A.flatten(2), outer.transpose(1, 2)))           # (M, H, B)
        mixed = torch.bmm(gate.transpose(1, 2), VO.flatten(2)).view(M, B, dh, dh)      # Σ_h a_h VO_h
        ctx.save_for_backward(u1, delta, A, VO, outer, gate, mixed)
        return (delta[..., :, None] * mixed).sum(-2)

    @staticmethod
    def backward(ctx, grad):
        u1, delta, A, VO, outer, gate, mixed = ctx.saved_tensors
        M, B, dh = u1.shape
        d_mixed = (delta[..., :, None] * grad[..., None, :]).view(M, B, dh * dh)          # δ gᵀ
        d_VO = torch.bmm(gate, d_mixed).view_as(VO)
        d_gap = torch.bmm(VO.flatten(2), d_mixed.transpose(1, 2)) * gate * (1 - gate)   # (M, H, B)
        d_A = torch.bmm(d_gap, outer).view_as(A)
        d_outer = torch.bmm(d_gap.transpose(1, 2), A.flatten(2)).view(M, B, dh, dh)
        d_u1 = (d_outer * delta[..., None, :]).sum(-1)
        d_delta = (mixed * grad[..., None, :]).sum(-1) + (d_outer * u1[..., :, None]).sum(-2)
        return d_u1, d_delta, d_A, d_VO
