# Shared helpers: params validation (before any job), the memcap command line, per-job resources.
import sys

from memcap import config as memcap_config

try:
    memcap_config.validate(config)
except memcap_config.ParamsError as err:
    # Stop before the DAG is built: the message names each bad key, its value and what is allowed.
    sys.exit(f"memcap: {err}")

SCALE = config["scale"]
# The interpreter running Snakemake has memcap installed; jobs use the same one (also under SLURM).
MEMCAP = f"{sys.executable} -m memcap"
# Overrides given with `snakemake --config scale=... device=...` reach every job through these flags.
PARAMS_ARGS = f"--params params.yaml --scale {SCALE} --device {config['device']}"


def res(kind):
    """Resources of a job class ('train' or 'light') at the active scale (params.yaml `resources`)."""
    return config["resources"][SCALE][kind]


def never_match(names):
    """A wildcard regex matching exactly `names` (or nothing when the list is empty)."""
    return "|".join(names) if names else "(?!x)x"
