"""Dana, Pydi, Chevaleyre (AISTATS 2025): attention-only transformers memorising a look-up table.

Modules: schedule (the effective learning-rate rule), train (batched repetitions, accuracy window and
full-table accuracy), experiments (params.yaml grids -> jobs -> runs), bounds (Corollary 2 and the
previous bound, the papers' parameter axes), fits (the original's regressions), figures and tables.
"""
