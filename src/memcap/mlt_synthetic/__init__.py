"""MLT synthetic sweeps (Mahdavi et al. 2024, Figs 2a/2b/2c, 3, 4, 5): one-layer multi-head attention.

grid.py       params preset -> sweeps -> grid points (sweep, value, T) and their resolved settings
train.py      one grid point: every seed trained together; Fig 3's attention maxima
schedule.py   step count and the warm-up + cosine learning rate (torch's SequentialLR)
aggregate.py  the family table and its DVC metrics
figures.py    Figs 2a/2b/2c/4/5, the Fig 2a linear fits and the markdown summary
checks.py     what JSON Schema cannot say about the `mlt_synthetic` section (torch-free)
"""
