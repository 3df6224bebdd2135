"""Parameters of DPC's attention-only transformer (torch-free, so capacity tables and the Snakefile can
count them without importing torch)."""

from __future__ import annotations


def param_count(vocab: int, dim: int, head_dim: int, heads: int, width: int = 0, layers: int = 1,
                per_head_proj: bool = False) -> int:
    """Parameters the original `models.py` allocates: N·d + 3·d_h + L·H·4·d_h² + 2·d·d_h + L(2dW+W) + N·d.

    C and D (2·d·d_h) are allocated even when d = d_h, where they are unused; P has 3 rows, 2 used.
    """
    proj = 2 * dim * head_dim * (heads if per_head_proj else 1)
    return 2 * vocab * dim + 3 * head_dim + layers * heads * 4 * head_dim ** 2 + proj \
        + layers * (2 * dim * width + width)
