"""`snakemake --touch ...` without the touch executor's 0.1 s pause before each job.

tools/dvc-pull.sh records every restored output in Snakemake's metadata by touching the whole DAG
(hundreds of jobs for the published results): Snakemake sleeps 0.1 s per job there, most of the time
the step took. The pause keeps a job's outputs from sharing an mtime with its inputs on filesystems
with coarse timestamps; Snakemake only reruns a job whose input is strictly newer than its output, and
the jobs are touched in DAG order, so an equal mtime is never stale. dvc-pull.sh also gives it many
cores, so that every job whose inputs are touched is scheduled at once, not one job per round. Same
arguments as snakemake.
"""

import sys

from snakemake.cli import main
from snakemake.executors import touch

touch.Executor.SLEEPING_TIME = 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
