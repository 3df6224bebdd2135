#!/usr/bin/env bash
# The paper-scale runs of the published reproduction (config/published.yaml): the DPC paper suite
# (1285 runs) and the theory paper preset (16 GD cases x 50,000 steps), hours on 2 CPU cores,
# resumable across machines and sessions.
#
#   tools/paper-suite.sh run [CORES] [TARGET ...]  # restore what earlier sessions finished, then train
#                                                  # the rest (targets: default `dpc theory`)
#   tools/paper-suite.sh snapshot                  # DVC-track what is finished and push it (published remote)
#   tools/paper-suite.sh finish [CORES] [TARGET ...]  # every curve done: make them the pipeline's results
#
# Each curve (experiment, series value) is one Snakemake job writing one Parquet; within a job every
# finished grid point is saved at once (checkpoints/dpc/paper/*.done.pt), so a kill loses at most the point
# in training (itself checkpointed every 5 minutes); theory GD keeps its finished (H, T) cases the same
# way. `snapshot` copies the paper-scale Parquets and the finished points into wip/paper-suite/, tracked
# by wip/paper-suite.dvc: commit that file, and the next
# session (any machine) continues with `run` (checkpoints of points in training go along and resume).
# Once every curve is done, `finish` sets params.yaml's `scale` to config/published.yaml's for the
# targets, aggregates and records them in dvc.lock; then `dvc repro` (the report), `make publish`, and
# wip/paper-suite.dvc can go (dvc.lock holds the runs now).
set -euo pipefail
CONFIG=config/published.yaml
WIP=wip/paper-suite
cmd="${1:-run}"

restore() {   # earlier sessions' finished curves and points, over local results not at paper scale
    [ -f "$WIP.dvc" ] || return 0
    dvc pull --quiet "$WIP.dvc"
    mkdir -p checkpoints/dpc/paper checkpoints/theory
    replaced="$(python tools/paper_suite.py restore "$WIP")"
    if [ -n "$replaced" ]; then   # theory's quick tables of a `make pull` under the same names
        echo "replaced $(wc -l <<<"$replaced") results not at paper scale"
        # shellcheck disable=SC2086
        snakemake --cleanup-metadata $replaced --quiet all >/dev/null
    fi
    [ -d "$WIP/points" ] && cp -n "$WIP/points/"* checkpoints/dpc/paper/ 2>/dev/null || true
    [ -d "$WIP/theory-points" ] && cp -n "$WIP/theory-points/"* checkpoints/theory/ 2>/dev/null || true
    echo "restored $(find "$WIP/runs" -name '*.parquet' | wc -l) finished curves from $WIP"
    echo "restored $(find "$WIP" -path '*theory*' -type f | wc -l) theory tables and finished GD cases"
}

case "$cmd" in
run)
    restore
    # One thread per job, as many jobs as cores: the models are too small for threads to pay.
    shift; cores="${1:-all}"; shift || true
    targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(dpc theory)
    # A session's end kills the run and leaves Snakemake's lock behind; only this script runs here.
    snakemake --unlock --configfile "$CONFIG" --quiet all >/dev/null
    snakemake --cores "$cores" --set-threads dpc_train=1 --configfile "$CONFIG" --keep-going \
        --rerun-incomplete -- "${targets[@]}"
    ;;
snapshot)
    rm -rf "$WIP" && mkdir -p "$WIP/runs" "$WIP/points" "$WIP/theory" "$WIP/theory-points"
    python tools/paper_suite.py snapshot "$WIP"
    # finished points (*.done.pt) and the last checkpoint of each point in training (*_x<N>.pt)
    cp checkpoints/dpc/paper/*.pt "$WIP/points/" 2>/dev/null || true
    cp checkpoints/theory/*.pt "$WIP/theory-points/" 2>/dev/null || true
    echo "$(ls "$WIP/theory-points" | wc -l) finished GD cases"
    echo "$(ls "$WIP/points" | grep -c 'done.pt$' || true) finished grid points and" \
         "$(ls "$WIP/points" | grep -vc 'done.pt$' || true) checkpoints of points in training"
    # published results name the code that made them: refuse a snapshot of untraceable ones
    find "$WIP" -name '*.parquet' -print0 | xargs -0 -r memcap provenance check --quiet
    dvc add --quiet "$WIP"
    dvc push --quiet --remote published "$WIP.dvc"
    echo "tracked by $WIP.dvc and pushed to the published remote: commit $WIP.dvc"
    ;;
finish)
    restore
    shift; cores="${1:-all}"; shift || true
    targets=("$@"); [ ${#targets[@]} -gt 0 ] || targets=(dpc theory)
    # Refuse while any training job is left: finish only aggregates what the runs produced.
    left="$(snakemake -n --configfile "$CONFIG" --quiet rules -- "${targets[@]}" \
            | grep -E '^(dpc_train|theory_(gd|construct|bounds)) ' | sort -u || true)"
    if [ -n "$left" ]; then
        echo "paper-suite: not finished; training jobs left (rule, count):" >&2
        sed 's/^/  /' <<<"$left" >&2
        echo "  continue with: tools/paper-suite.sh run [CORES] ${targets[*]}" >&2
        exit 1
    fi
    python tools/paper_suite.py set-scale "$CONFIG" "${targets[@]}"   # params.yaml: the published scale for the targets
    # `dvc repro` would delete theory's (non-persist) tables and retrain the GD cases: Snakemake
    # aggregates the finished runs and `dvc commit` records exactly what it made.
    snakemake --cores "$cores" --quiet rules -- "${targets[@]}"
    dvc repro --quiet params            # the params check every stage depends on (validation only)
    dvc commit --force --quiet "${targets[@]}"
    echo "recorded ${targets[*]} at the published scale in dvc.lock; next: dvc repro (the report), make publish," \
         "then commit params.yaml, dvc.lock and published/"
    ;;
*)
    echo "usage: tools/paper-suite.sh run [CORES] [TARGET ...] | snapshot | finish [CORES] [TARGET ...]" >&2
    exit 2
    ;;
esac
