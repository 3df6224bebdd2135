"""Synthetic tasks: MLT's random contexts/queries/labels and DPC's random look-up tables."""
