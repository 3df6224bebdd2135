"""Mahdavi et al. Theorem 1's bound, the one place it is written: H(min(n, d_h) − 1) + 1 examples.

Props 2 and 5 (rank_bounds.py) and DPC's "previous bound" (dpc/bounds.py) are this expression with
r = n, r = d or r = d_h; the capacity search and the MLT tables draw it next to trained results.
"""

from __future__ import annotations

import numpy as np


def memorization_bound(heads, context_size, head_dim):
    """H(r − 1) + 1 with r = min(n, d_h); scalars give an int, arrays give an array."""
    out = np.asarray(heads) * (np.minimum(context_size, head_dim) - 1) + 1
    return int(out) if np.ndim(out) == 0 else out
