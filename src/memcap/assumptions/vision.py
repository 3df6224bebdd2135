"""ViT tracks of Table 1 (MLT §5.1), on any ViT geometry (ViT-B/16 or the small digits ViT).

The four models, each giving a token matrix (B, n, d) per image, query = row 0 ([CLS]):
    Embedding Layer   vit.embeddings(pixels): patch projection + [CLS] + learned positions (random init)
    Random Attention  emb + Attn(LN(emb)): one random head, d_h = d_v = d, Xavier, 1/sqrt(d), pre-LN
                      residual, no FFN; the query attends to all n tokens (itself included)
    Random ViT        hidden_states[1] of the random ViT: its first full block (attention + MLP)
    Trained ViT       hidden_states[1] of trained weights (HF cache, or the digits ViT the pipeline trains)
and, where the track names it, the trained stand-in (memcap.assumptions.stand_ins) at its own geometry:
    trained ViT (DINOv2-S/14 stand-in)   embedding layer and first block (n = 257 at 224 px, d = 384)
Only the first block is ever read, so the ViT is built with one layer (hidden_states[1] of a ViT is
taken before the final layernorm, transformers' tie_last_hidden_states=False for ViT).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from memcap.assumptions.grid import VIT_STAND_IN_LAYERS


class RandomAttention(nn.Module):
    """The reference's random single-head attention with a pre-LN residual: out = x + Attn(LN(x))."""

    def __init__(self, width: int, seed: int):
        super().__init__()
        g = torch.Generator().manual_seed(int(seed))
        bound = math.sqrt(6.0 / (width + width))                       # Xavier uniform, fan_in = fan_out = d
        w = (torch.rand(4, width, width, generator=g) * 2 - 1) * bound
        self.register_buffer("w", w)                                    # (4, d, d): W_Q, W_K, W_V, W_O
        self.norm = nn.LayerNorm(width, elementwise_affine=False)
        self.scale = 1.0 / math.sqrt(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:                # x (B, n, d)
        h = self.norm(x)
        q, k, v = h @ self.w[0], h @ self.w[1], h @ self.w[2]           # (B, n, d) each
        att = torch.softmax(q @ k.mT * self.scale, dim=-1)              # (B, n, n), no mask
        return x + (att @ v) @ self.w[3]


def vit_config(geometry: dict):
    """A one-layer ViTConfig of the given geometry (keys of params `vision.<track>.geometry`)."""
    from transformers import ViTConfig

    return ViTConfig(image_size=geometry["image_size"], patch_size=geometry["patch_size"],
                     num_channels=geometry["channels"], hidden_size=geometry["hidden"],
                     num_attention_heads=geometry["heads"], intermediate_size=geometry["mlp"],
                     num_hidden_layers=geometry.get("layers", 1),
                     attn_implementation="eager")   # sdpa's CUDA backward is nondeterministic


def random_vit(geometry: dict, seed: int):
    from transformers import ViTModel

    torch.manual_seed(int(seed))                                        # HF init draws from the global RNG
    return ViTModel(vit_config({**geometry, "layers": 1}), add_pooling_layer=False).eval()


class VitTracks(nn.Module):
    """Layer outputs of the Table 1 models for one batch: name -> (B, n, d)."""

    def __init__(self, random_model, trained_model=None, attention_seed: int = 0):
        super().__init__()
        self.random_model, self.trained_model = random_model, trained_model
        self.attention = RandomAttention(random_model.config.hidden_size, attention_seed)

    @torch.no_grad()
    def forward(self, pixels: torch.Tensor) -> dict[str, torch.Tensor]:
        out = self.random_model(pixel_values=pixels, output_hidden_states=True)
        emb = out.hidden_states[0]                                      # (B, n, d) = embeddings(pixels)
        layers = {"Embedding Layer": emb, "Random Attention": self.attention(emb),
                  "Random ViT": out.hidden_states[1]}
        if self.trained_model is not None:
            layers["Trained ViT"] = self.trained_model(pixel_values=pixels, output_hidden_states=True).hidden_states[1]
        return layers



def load_dinov2(path):
    """The converted DINOv2-S/14 backbone, first block only (its hidden_states[1] is the block's output,
    before the final layernorm, as transformers' Dinov2Model records it)."""
    from transformers import Dinov2Model

    return Dinov2Model.from_pretrained(str(path), num_hidden_layers=1, attn_implementation="eager").eval()


@torch.no_grad()
def dinov2_layers(model, pixels: torch.Tensor) -> dict[str, torch.Tensor]:
    """{'embedding layer': (B, 257, 384), 'first block': (B, 257, 384)}; pixels normalised with ImageNet
    mean/std at 224 px (positions interpolated from the 37x37 grid it was trained at)."""
    out = model(pixel_values=pixels, output_hidden_states=True)
    return dict(zip(VIT_STAND_IN_LAYERS, out.hidden_states[:2]))
