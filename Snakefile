# memcap: how much do attention layers memorize? (Mahdavi et al. 2024; Dana et al. 2025)
#
#   snakemake --profile profiles/local      # this machine (the README's main command wraps it)
#   snakemake --profile slurm               # a SLURM cluster (./slurm -> profiles/slurm)
#   snakemake --config scale=paper ...      # the papers' grids instead of the quick preset
#
# params.yaml is the configfile and the one source of truth; it is validated before any job starts, and
# every job reads the resolved config this DAG was built from (workflow/rules/common.smk).
import time

from snakemake.utils import min_version

from memcap import run_summary

min_version("9.27")
RUN_STARTED = time.time()


configfile: "params.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/mlt_synthetic.smk"
include: "workflow/rules/theory.smk"
include: "workflow/rules/dpc.smk"
include: "workflow/rules/assumptions.smk"
include: "workflow/rules/capacity.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        rules.mlt_synthetic.input,
        rules.theory.input,
        rules.dpc.input,
        rules.assumptions.input,
        rules.capacity.input,
        rules.report.input,  # last: the report reads every family's results


# After the run: logs/summary/latest.md (jobs, wall time, the slowest jobs).
onsuccess:
    print(f"run summary: {run_summary.write(log, RUN_STARTED, ok=True)}")


onerror:
    print(f"run summary: {run_summary.write(log, RUN_STARTED, ok=False)}")
