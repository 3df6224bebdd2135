# Shared helpers: params validation (before any job), the resolved params every job reads, resources.
import sys

from memcap import params as memcap_params

try:
    memcap_params.validate(config)
except memcap_params.ParamsError as err:
    # Stop before the DAG is built: the message names each bad key, its value and what is allowed.
    sys.exit(f"memcap: {err}")

# The interpreter running Snakemake has memcap installed; jobs use the same one (also under SLURM).
MEMCAP = f"{sys.executable} -m memcap"
# Jobs run exactly the config this DAG was built from (params.yaml + --configfile + --config): it is
# written once, named by its hash, and passed to every job. No job reads params.yaml on its own.
RESOLVED_PARAMS = memcap_params.write_resolved(config, ".snakemake/memcap")
PARAMS_ARGS = f"--params {RESOLVED_PARAMS}"


def res(kind, family=None):
    """Resources of a job class ('train' or 'light') at the family's scale (params.yaml `resources`);
    family None (the report): the largest scale any family runs at."""
    scales = memcap_params.scales(config)
    scale = scales[family] if family else max(scales.values(), key=memcap_params.SCALES.index)
    return config["resources"][scale][kind]


def never_match(names):
    """A wildcard regex matching exactly `names` (or nothing when the list is empty)."""
    return "|".join(names) if names else "(?!x)x"
