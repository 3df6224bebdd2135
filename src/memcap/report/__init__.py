"""The reproduction report: reads the families' tables only (never trains, imports no trainer or torch).

claims.py   one function per paper claim, its written test and verdict -> the scorecard
bits.py     bits per parameter of every trained model of both families, beside published capacities
figures.py  the report's own figure (bits per parameter)
html.py     one self-contained HTML page: scorecard, bits, capacity table, every family's figures
"""
