"""Capacity by search: per architecture, T₅₀, the dataset size at which half the trained models memorize
(MLT's layer with C classes or a scalar output; DPC's transformer on random associations).

subjects/     the models measured, one module each (MLT's layer, DPC's transformer): the one interface
grid.py       params preset -> the architectures, what a probe trains, where probes and rows live (torch-free)
settings.py   what a preset measures: its model family and output, its bound, a composite's presets (torch-free)
search.py     each seed's bracket [T_pass, T_fail), the next probes, when seeds join and a search ends (torch-free)
transition.py  T₅₀ with its profile-likelihood interval, T₉₀ and the width, fitted to every seed's bracket
probes.py     a round's probes trained as one pack: MLT's model through memcap.training
associations.py  a DPC preset's probes: DPC's transformer on T random associations, through DPC's loop
rounds.py     the search in rounds, resumable from the probe files and the round's checkpoint
store.py      one Parquet a probe
summary.py    an architecture's row: T₅₀ and its fit, the seeds' brackets, the budget check, the budget curve
convergence.py  the rise of T₅₀ per doubling of the steps, and its equivalence test (converged, still rising)
curve.py      the budget curve's fitted limit T∞
morris.py     memorized bits without a threshold (Morris et al.): the curve against T, its maximum and plateau
aggregate.py  the family's tables, numbers only (bounds, bits per parameter, the laws, the readout's rank, every probe)
laws.py       power laws over a grid's rows, lower bounds as censored observations (Tobit), profile intervals
words.py      the tables in words: the table as shown, its sentences, the markdown
figures.py    T₅₀ vs H and vs d_h beside both bounds and the fitted law; bits per parameter; T₅₀ vs the budget; bits vs T
checks.py     what JSON Schema cannot say about the `capacity` section (torch-free)
"""
