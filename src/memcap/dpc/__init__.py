"""Dana, Pydi, Chevaleyre (AISTATS 2025): attention-only transformers memorising a look-up table.

Modules:
  grid       the preset's experiments -> jobs (experiment, series) and the settings of one job (torch-free)
  checks     cross-field checks of the `dpc` params section (torch-free)
  schedule   the effective learning-rate rule the original ran
  train      the training loop (batched repetitions, accuracy window, full-table accuracy) and one job
  reference  the original code's computation, for tests and the benchmark
  bounds     Corollary 2's accuracy bound, the previous (MLT) bound, their slopes
  kl         the KL theory in computable form (Prop 3, Theorem 2, LS vs weighted LS)
  fits       the original's regressions
  aggregate  runs -> summary, fitted slopes (Parquet + markdown), DVC metrics
  figures    tables -> the accuracy figures and the KL figure
"""
