"""Capacity by search: the largest dataset size T that every seed of an MLT architecture memorizes.

grid.py       params preset -> the architectures searched (H grid at fixed d_h, d_h grid at fixed H)
search.py     the bracketing search over T, each step trained by the MLT family's grid-point trainer
aggregate.py  the family table (bracket, both papers' bounds)
figures.py    capacity vs H and vs d_h beside both bounds
checks.py     what JSON Schema cannot say about the `capacity` section (torch-free)
"""
