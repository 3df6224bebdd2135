#!/usr/bin/env bash
# Get cached results instead of retraining (`make pull`, or `tools/dvc-pull.sh [family ...]`).
# dvc pull, check that the outputs match dvc.lock, then let Snakemake record them: DVC restores files
# with arbitrary mtimes and Snakemake keeps no metadata for them, so without the touch `snakemake -n`
# would want to rerun aggregation steps and would silently miss later params changes (pipeline.md §4).
# Stage names are the Snakemake target names, so one list serves both tools (default: everything).
set -euo pipefail
dvc pull "$@"
dvc status --quiet "$@" || { echo "pulled outputs do not match dvc.lock; run dvc repro" >&2; exit 1; }
targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(all)
snakemake --cores 1 --touch --forceall --quiet progress -- "${targets[@]}" > /dev/null
snakemake --cores 1 --dry-run --quiet progress -- "${targets[@]}" | tail -n 1
