"""Synthetic tasks: MLT's random contexts/queries/labels and DPC's random look-up tables.

mlt_data.py   MLT's random contexts, queries and labels, drawn as the original draws them
mlt_sizes.py  the host memory of MLT's datasets (torch-free, for Snakemake's memory requests)
lookup.py     DPC's random look-up table and its fixed training sample
"""
