"""Models: MLT's one-layer multi-head attention (and its reference form), DPC's attention-only transformer.

mlt_attention.py    MLT's attention layer as the original trains it, M models batched, packs of shapes
mlt_reference.py    the original's full (n+1)x(n+1) masked attention, one model: the tests' reference
mlt_shared_grad.py  the shared-context training gradient of MLTAttention, written out by hand
mlt_work.py         parameter and multiply-add counts of MLT attention (torch-free)
aot.py              DPC's attention-only transformer (+ MLP), M models batched
aot_count.py        parameters of DPC's transformer (torch-free)
"""
