"""`snakemake --touch ...` without the touch executor's 0.1 s pause before each job; then, after `++`,
another Snakemake command in the same process (dvc_pull.py: the dry run that says what is left, one
Snakemake start fewer).

    python tools/snakemake_touch.py TOUCH_ARGS... [++ OTHER_ARGS...]

tools/dvc_pull.py records every restored output in Snakemake's metadata by touching the whole DAG
(hundreds of jobs for the published results): Snakemake sleeps 0.1 s per job there, most of the time
the step took. The pause keeps a job's outputs from sharing an mtime with its inputs on filesystems
with coarse timestamps; Snakemake only reruns a job whose input is strictly newer than its output, and
the jobs are touched in DAG order, so an equal mtime is never stale. dvc_pull.py also gives it many
cores, so that every job whose inputs are touched is scheduled at once, not one job per round. The
exit status is the touch's; the second command's output follows the touch's (also after a touch
that failed under --keep-going: a partial pull's absent files, whose jobs cannot be touched).
"""

import sys

from snakemake.cli import args_to_api, parse_args
from snakemake.executors import touch

touch.Executor.SLEEPING_TIME = 0


def run(argv: list[str]) -> bool:
    parser, args = parse_args(argv)
    return args_to_api(args, parser)


if __name__ == "__main__":
    argv = sys.argv[1:]
    touch_argv, then = (argv[:argv.index("++")], argv[argv.index("++") + 1:]) if "++" in argv else (argv, [])
    touched = run(touch_argv)
    if then and (touched or "--keep-going" in touch_argv):   # a partial pull still wants what is left
        run(then)
    sys.exit(0 if touched else 1)
