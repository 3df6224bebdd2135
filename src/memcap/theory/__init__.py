"""MLT theory made executable (Mahdavi et al. 2024): constructions and bounds, checked numerically.

features.py       the attention features Z of eq (7), numerical rank and conditioning (float64)
construct.py      CONSTRUCT, Theorem 1's constructive memorizer (FIT-HEAD, suppressor, scale c)
mlt_weights.py    a construction as the weights of the trained model MLTAttention
rank_bounds.py    Props 2 and 5: upper bounds on rank(Z); Z of random and trained weights
saturation.py     Fig 3's numbers: saturated heads per example of trained models
grid.py           params preset -> the cases of each experiment (torch-free)
exp_construct.py  experiment (a): CONSTRUCT over the grid, verified through MLTAttention
exp_gd.py         experiment (b): gradient descent (the MLT trainer) vs construction vs bound
exp_bounds.py     experiment (c): rank(Z) under random and constructed weights vs Props 2, 5
aggregate.py      the saturation table and the markdown summary; TABLES names the tables
figures.py        construct, capacity, rank_bounds, fig3; FIGURES names them
checks.py         what JSON Schema cannot say about the `theory` section (torch-free)
Theorem 1's bound H(min(n, d_h) − 1) + 1 is written once, in memcap.bounds.
"""
