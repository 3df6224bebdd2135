"""memcap: how much do attention layers memorize?

A library (models, synthetic tasks, training, theory, assumption checks, results I/O, figures) that
the Snakemake workflow in this repository calls through ``python -m memcap``. Everything here works
without Snakemake.
"""

__version__ = "0.1.0"
