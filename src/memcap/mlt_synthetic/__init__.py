"""MLT synthetic sweeps (Mahdavi et al. 2024, Figs 2a/2b/2c, 3, 4, 5): one-layer multi-head attention.

grid.py       params preset -> sweeps -> grid points (sweep, value, T) and their resolved settings
train.py      one grid point or a pack of jobs: every seed trained together; Fig 3's attention maxima
schedule.py   step count and the warm-up + cosine learning rate (torch's SequentialLR)
pack.py       a pack: many jobs' models of one sweep stacked, padded and trained as one
packing.py    which missing runs of a sweep form a pack (torch-free, for Snakemake)
batches.py    each model's epochs and short last batches, for a whole pack
graphed.py    a pack's step replayed from CUDA graphs (on with --cuda-graphs; benchmarks/graph_check.py)
aggregate.py  the family table and its DVC metrics
figures.py    Figs 2a/2b/2c/4/5, the Fig 2a linear fits and the markdown summary
checks.py     what JSON Schema cannot say about the `mlt_synthetic` section (torch-free)
"""
