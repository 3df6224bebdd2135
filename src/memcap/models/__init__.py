"""Models: MLT's one-layer multi-head attention (and its reference form), DPC's attention-only transformer."""
