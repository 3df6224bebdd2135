#!/usr/bin/env bash
# Restore cached results instead of retraining: `make pull`, the first half of `make reproduce`, or
# `tools/dvc-pull.sh [stage ...]` (stage names are the Snakemake target names; default: everything).
#
#  1. `dvc pull` from the default DVC remote: the repository's own read-only published remote
#     (published/dvc-remote) unless you set another (README "Your lab's remote"). A missing remote or
#     object stops with a short message instead of DVC's traceback.
#  2. Check that every restored output is the one dvc.lock records (a params change since is fine:
#     `dvc repro` retrains what it made stale).
#  3. Let Snakemake record the restored files as made from the params they were made from (the
#     committed params.yaml). DVC restores files with arbitrary mtimes and no Snakemake metadata:
#     without this step `snakemake -n` would rerun aggregation steps, or miss a params change and
#     silently reuse runs made from other settings.
set -euo pipefail
targets=("$@")
remote="$(dvc remote default 2>/dev/null || true)"
url="$( [ -n "$remote" ] && dvc config "remote.$remote.url" 2>/dev/null || true)"
where="DVC remote '${remote:-<none>}'${url:+ ($url)}"

if [ -z "$remote" ]; then
    echo "memcap: no default DVC remote; add one (README \"Your lab's remote\") or retrain: make retrain" >&2
    exit 1
fi
if ! log="$(dvc pull "${targets[@]}" 2>&1)"; then
    echo "memcap: could not restore the cached results from the $where." >&2
    grep -m 3 -E "^(ERROR|WARNING)" <<<"$log" | cut -c 1-300 | sed 's/^/  dvc: /' >&2 || true
    if grep -qiE "missing cache files|not exist neither locally nor on remote|checkout failed" <<<"$log"; then
        echo "  Some results of this commit's dvc.lock are not on that remote: it was not pushed after" >&2
        echo "  the last run, or dvc.lock changed since. Retrain instead (make retrain: the quick preset)," >&2
        echo "  or pull from a remote that has them: dvc remote default --local <name>." >&2
    fi
    exit 1
fi

# Outputs must match dvc.lock; changed deps or params only mean `dvc repro` has work to do.
bad="$(dvc status --json "${targets[@]}" | python -c '
import json, sys
status = json.load(sys.stdin)
for stage, changes in status.items():
    for change in changes:
        outs = change.get("changed outs") if isinstance(change, dict) else None
        if outs:
            print(stage, outs)
')"
if [ -n "$bad" ]; then
    echo "memcap: pulled outputs do not match dvc.lock:" >&2
    sed 's/^/  /' <<<"$bad" >&2
    exit 1
fi

# Snakemake's metadata from the committed params (what dvc.lock's outputs were made from).
config=()
if git rev-parse --verify -q HEAD >/dev/null && ! git diff --quiet HEAD -- params.yaml 2>/dev/null; then
    mkdir -p .snakemake/memcap
    git show HEAD:params.yaml > .snakemake/memcap/committed-params.yaml
    config=(--configfile .snakemake/memcap/committed-params.yaml)
    echo "params.yaml differs from the commit: restored results are recorded as made from the committed"
    echo "params, so the next run retrains exactly the jobs your changes make stale."
fi
smk_targets=("${targets[@]}"); [ ${#smk_targets[@]} -gt 0 ] || smk_targets=(all)
mkdir -p .snakemake/memcap
if ! snakemake --cores 1 --touch --forceall --quiet all "${config[@]}" -- "${smk_targets[@]}" \
        > .snakemake/memcap/pull-touch.log 2>&1; then
    echo "memcap: restored the files, but Snakemake could not record them (.snakemake/memcap/pull-touch.log):" >&2
    tail -n 5 .snakemake/memcap/pull-touch.log >&2
    exit 1
fi
echo "restored from the $where"
snakemake --cores 1 --dry-run --quiet all -- "${smk_targets[@]}" 2>&1 | tail -n 1
