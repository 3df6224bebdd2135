# Shared helpers: params validation (before any job), the resolved params every job reads, resources.
import os
import sys

from memcap import params as memcap_params
from memcap.keys import KEY_PATTERN
from memcap.quick_exit import skip_final_collection

# Every Snakemake start (yours, DVC's, and two in each SLURM job) ends ~0.3 CPU-s sooner (memcap.quick_exit).
skip_final_collection()

# `dvc exp run --temp/--queue` runs in a copy of the git-tracked files only (.dvc/tmp/exps/...): no
# fetched data (data/), no Snakemake metadata (.snakemake/), so persisted runs could silently stand for
# other settings. Stop there and name what works.
if f"{os.sep}.dvc{os.sep}tmp{os.sep}exps{os.sep}" in f"{os.getcwd()}{os.sep}":
    sys.exit("memcap: `dvc exp run --temp` and `--queue` run in a copy without data/ and Snakemake's "
             "metadata, which memcap needs to rerun exactly the affected jobs. Run `dvc exp run -S "
             "key=value` in the workspace (one experiment at a time), or `snakemake --configfile` to try settings.")

# Jobs run exactly the config this DAG was built from (params.yaml + --configfile + --config): it is
# validated (defaults filled in), written once, named by its hash, and every job's `memcap` reads it from
# MEMCAP_PARAMS (the default of its --params). No job reads params.yaml on its own; a shell command
# changes with the config only through its resources (capacity's probes a round). (`resolve` remembers a config that passed: memcap.params.resolve.)
try:
    RESOLVED_PARAMS = memcap_params.resolve(config, ".snakemake/memcap")
except memcap_params.ParamsError as err:
    # Stop before the DAG is built: the message names each bad key, its value and what is allowed.
    sys.exit(f"memcap: {err}")
os.environ.update(MEMCAP_PARAMS=str(RESOLVED_PARAMS))

# Jobs run `memcap` from the environment running Snakemake (its bin/ first on PATH, also in the
# Snakemake that SLURM starts for each job, which evaluates this file again).
os.environ.update(PATH=os.pathsep.join([os.path.dirname(sys.executable), *os.get_exec_path()]))


def _sizes(kind, family):
    return memcap_params.job_sizes(config, kind, family)


# How jobs are packed (MLT) and how many probes a round trains (capacity): not what a job asks of the cluster.
PACK_SIZES = ("pack_models", "pack_mem_mb", "probes_per_round")


def pack_sizes(family):
    """(pack_models, pack_mem_mb) of the family's training jobs at its scale (no packing: (1, 0))."""
    sizes = _sizes("train", family)
    return sizes.get("pack_models", 1), sizes.get("pack_mem_mb", 0)


def threads_of(kind, family=None):
    return _sizes(kind, family)["threads"]


def res(kind, family=None, **override):
    """A rule's resources, said once: `resources: **res("train", "dpc")`. `runtime` is the time limit
    of a job's first attempt: a retry (`retries` in profiles/slurm) asks for attempt x runtime, so a
    job killed at its time limit gets longer and, if it trains, resumes from its checkpoint."""
    sizes = {k: v for k, v in _sizes(kind, family).items() if k not in ("threads", *PACK_SIZES)}
    first = sizes["runtime"]
    sizes["runtime"] = lambda wildcards, attempt: first * attempt
    return {**sizes, **override}


def never_match(names):
    """A wildcard regex matching exactly `names` (or nothing when the list is empty)."""
    return "|".join(names) if names else "(?!x)x"


def in_report(paths, family):
    """Outputs shown by `snakemake --report`: PNG figures and markdown tables, captioned by
    workflow/report/<family>.rst and grouped by family; other files (PDF, Parquet) as they are."""
    shown = (".png", ".md", ".html")
    return [report(p, caption=f"../report/{family}.rst", category=family) if str(p).endswith(shown) else p
            for p in ([paths] if isinstance(paths, str) else paths)]
