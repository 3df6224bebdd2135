# memcap: how much do attention layers memorize? (Mahdavi et al. 2024; Dana et al. 2025)
#
#   snakemake --profile profiles/local      # this machine (each `make reproduce` / dvc repro stage runs
#                                           # `snakemake --cores all <family>`, with no profile)
#   snakemake --profile slurm               # a SLURM cluster (./slurm -> profiles/slurm)
#   snakemake --config scale=quick ...      # one preset for every family instead of params.yaml's `scale`
#
# params.yaml is the configfile and the one source of truth; it is validated before any job starts, and
# every job reads the resolved config this DAG was built from (workflow/rules/common.smk).
import sys
import time

from snakemake.utils import min_version, update_config

from memcap import params as memcap_params
from memcap import results, run_lock, run_summary

min_version("9.27")
RUN_STARTED = time.time()

# Snakemake's own YAML reading names no line and keeps the last of two equal keys: read each config
# file strictly first, so a syntax error or a key written twice stops with the file and the line.
try:
    PARAMS_YAML = memcap_params.read_yaml("params.yaml")
    for config_path in workflow.overwrite_configfiles or []:
        memcap_params.read_yaml(config_path)
except memcap_params.ParamsError as err:
    sys.exit(f"memcap: {err}")

# The configfile, merged as `configfile: "params.yaml"` merges it (--configfile and --config on top,
# or alone with --replace-workflow-config), from the strict read above: Snakemake's own read of it
# (yte's pure-Python YAML) took ~0.13 s of every start, and SLURM starts Snakemake twice a job.
workflow.configfiles.append("params.yaml")
if not workflow.config_settings.replace_workflow_config:
    update_config(config, PARAMS_YAML)
update_config(config, workflow.config_settings.overwrite_config)


include: "workflow/rules/common.smk"
include: "workflow/rules/mlt_synthetic.smk"
include: "workflow/rules/theory.smk"
include: "workflow/rules/dpc.smk"
include: "workflow/rules/assumptions.smk"
include: "workflow/rules/capacity.smk"
include: "workflow/rules/report.smk"


# Before any job, in the process that schedules them (not in a SLURM job's own Snakemake): a result
# file that exists but cannot be read stops the run naming the file, instead of being taken as done and
# failing deep inside an aggregation.
if workflow.is_main_process:
    unreadable = results.unreadable([*MLT_RUNS, *MLT_ATTENTION, *DPC_RUNS, *CAP_RUNS, *(
        path for table in (MLT_TABLE, TH_TABLE, DPC_TABLE, ASM_TABLE, CAP_TABLE)
        for path in table.values() if path.endswith(".parquet"))])
    if unreadable:
        sys.exit("memcap: " + "\nmemcap: ".join(unreadable))
    # A job that cannot finish within its runtime limit, said before it is submitted (not an error:
    # a retry resumes from its checkpoint, and a local run has no limit).
    for line in memcap_params.slow_jobs(config):
        print(f"memcap: note: {line}", file=sys.stderr)


rule all:
    default_target: True
    input:
        rules.mlt_synthetic.input,
        rules.theory.input,
        rules.dpc.input,
        rules.assumptions.input,
        rules.capacity.input,
        rules.report.input,  # last: the report reads every family's results


# One run at a time in a project, whatever its targets (two runs share logs, checkpoints and the
# resolved params, and DVC records what the last one left): taken when jobs are about to start, so dry
# runs and "nothing to be done" never wait.
onstart:
    if workflow.is_main_process:
        run_lock.acquire(".snakemake/memcap/run.lock")   # held until this process ends


# After the run: logs/summary/latest.md (jobs, wall time, the slowest jobs).
onsuccess:
    print(f"run summary: {run_summary.write(log, RUN_STARTED, ok=True)}")


onerror:
    print(f"run summary: {run_summary.write(log, RUN_STARTED, ok=False)}")
