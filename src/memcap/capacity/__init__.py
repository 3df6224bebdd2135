"""Capacity by search: per architecture and seed, the largest dataset size T a model memorizes (MLT's
layer with C classes or a scalar output; DPC's transformer on random associations).

grid.py       params preset -> the architectures, what a probe trains, where probes and rows live (torch-free)
settings.py   what a preset measures: its model family and output, its bound, a composite's presets (torch-free)
search.py     a seed's bracket [T_pass, T_fail) and its next probes (torch-free)
probes.py     a round's probes trained as one pack: MLT's model through memcap.training
associations.py  a DPC preset's probes: DPC's transformer on T random associations, through DPC's loop
rounds.py     the search in rounds, resumable from the probe files and the round's checkpoint
store.py      one Parquet a probe
summary.py    an architecture's row: the seeds' capacities, T* with its t interval, the budget check, the budget curve
curve.py      the budget curve's verdict (converged, still rising) and its fitted limit T∞
morris.py     memorized bits without a threshold (Morris et al.): the curve against T, its maximum and plateau
aggregate.py  the family's tables (bounds, bits per parameter, the fitted laws, the readout's rank, every probe)
figures.py    T* vs H and vs d_h beside both bounds and the fitted law; bits per parameter; T* vs the budget; bits vs T
checks.py     what JSON Schema cannot say about the `capacity` section (torch-free)
"""
