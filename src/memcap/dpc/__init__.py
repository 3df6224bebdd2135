"""Dana, Pydi, Chevaleyre (AISTATS 2025): attention-only transformers memorising a look-up table.

grid.py       the preset's experiments -> jobs (experiment, series) and the settings of one job (torch-free)
checks.py     cross-field checks of the `dpc` params section (torch-free)
schedule.py   the effective learning-rate rule the original ran
train.py      the training loop (batched repetitions, accuracy window, full-table accuracy) and one job
reference.py  the original code's computation, for tests and the benchmark
kl.py         the KL theory in computable form (Prop 3, Theorem 2, LS vs weighted LS)
fits.py       the original's regressions
published.py  the authors' published means (reference/dpc-published/), placed on memcap's grid
fidelity.py   memcap's means beside the authors', point by point
aggregate.py  runs -> summary, fitted slopes (Parquet + markdown), DVC metrics
figures.py    tables -> the accuracy figures and the KL figure
Corollary 2's accuracy bound and the previous (MLT) bound live in memcap.bounds.
"""
