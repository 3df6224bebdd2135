"""MLT synthetic sweeps (Mahdavi et al. 2024, Figs 2a/2b/2c, 3, 4, 5): one-layer multi-head attention.

grid.py       params preset -> sweeps -> grid points (sweep, value, T) and their resolved settings
train.py      one job, or a pack of a sweep's jobs, through memcap.training; Fig 3's attention maxima
packing.py    which missing runs of a sweep form a pack (torch-free, for Snakemake)
aggregate.py  the family table and its DVC metrics
figures.py    Figs 2a/2b/2c/4/5, the Fig 2a linear fits and the markdown summary
checks.py     what JSON Schema cannot say about the `mlt_synthetic` section (torch-free)

Public to the rest of memcap:
`grid` (the sweeps, their jobs and run names: the rules, the bundle, the suite and theory's Fig 3 read
them), `packing` (the rules and the bundle plan packs with it) and `checks` (memcap.params validates
with it); the other modules are the family's own.
"""
