"""The reproduction report: reads the families' tables only (never trains, imports no trainer or torch).

claims/              one function per claim, its test against a named alternative and verdict -> the scorecard
shapes.py            shape statistics of measured curves (curvature, trend, slope, exponent) with a seed bootstrap
verdicts.py          reproduced / not reproduced / inconclusive from a statistic's 95% interval
bits.py              bits per parameter of every trained model of both families, beside published capacities
figures.py           the report's own figure (bits per parameter)
how_made.py          how each result was made (seeds, jobs, hours, packs, commits), from the run files
provenance_table.py  per family, the commits and package versions its results came from
headline.py          the first screen: per paper what reproduced and why not, the capacity sentence, the claims
html.py              one self-contained HTML page: scorecard, bits, capacity table, every family's figures
"""
