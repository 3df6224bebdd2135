#!/usr/bin/env bash
# Restore cached results instead of retraining: `make pull`, the first half of `make reproduce`, or
# `tools/dvc-pull.sh [stage ...]` (stage names are the Snakemake target names; default: everything).
#
#  1. `dvc fetch` + `dvc checkout` (= dvc pull) from the default DVC remote: the repository's own
#     read-only published remote (published/dvc-remote) unless you set another (README "Your lab's
#     remote"). A missing remote or object stops with a short message before the workspace changes;
#     run files of other settings are kept, never deleted.
#  2. Check that every restored output is the one dvc.lock records (a params change since is fine:
#     `dvc repro` retrains what it made stale).
#  3. Let Snakemake record the restored files as made from the params they were made from (the
#     committed params.yaml). DVC restores files with arbitrary mtimes and no Snakemake metadata:
#     without this step `snakemake -n` would rerun aggregation steps, or miss a params change and
#     silently reuse runs made from other settings.
set -euo pipefail
targets=("$@")
runs=""
# The default remote and its URL (relative paths resolved, ~ expanded) from one DVC start (~0.5 s each)
conf="$(dvc config --list 2>/dev/null || true)"
setting() { awk -v key="$1=" 'index($0, key) == 1 { value = substr($0, length(key) + 1) } END { print value }' <<<"$conf"; }
remote="$(setting core.remote)"
url="$( [ -n "$remote" ] && setting "remote.$remote.url" || true)"
where="DVC remote '${remote:-<none>}'${url:+ ($url)}"

if [ -z "$remote" ]; then
    echo "memcap: no default DVC remote; add one (README \"Your lab's remote\") or retrain: make retrain" >&2
    exit 1
fi
# A remote that is a folder must exist (DVC would only say that the results are not there).
case "$url" in
    *://*) ;;
    "~"*|/*) [ -d "${url/#\~/$HOME}" ] || { echo "memcap: the $where does not exist (no such folder); see: dvc remote list" >&2; exit 1; } ;;
    *) if [ -n "$url" ] && [ ! -d ".dvc/$url" ]; then   # relative to .dvc/, where DVC's config lives
           echo "memcap: the $where does not exist (no such folder); see: dvc remote list" >&2
           exit 1
       fi ;;
esac

# Temp files of an interrupted pull or run (DVC's `.<token>.tmp`, memcap's `.<name>.<random>.tmp`) are
# junk: removed here (and invisible to DVC anyway, .dvcignore), so nothing records them.
clean_tmp() { find results figures -name '*.tmp' -type f -delete 2>/dev/null || true; }
clean_tmp
trap clean_tmp EXIT

# 1. Fetch everything into DVC's cache first: if anything is missing on the remote, the workspace is
#    left exactly as it was (no half-restored family that Snakemake would then retrain).
#    (dvc fetch exits 0 when an object is missing on the remote, with a warning: that is a failure too.)
if ! log="$(dvc fetch "${targets[@]}" 2>&1)" || grep -qiE "missing cache files|do not exist" <<<"$log"; then
    echo "memcap: could not fetch the cached results from the $where; nothing in your workspace changed." >&2
    grep -m 3 -E "^(ERROR|WARNING)" <<<"$log" | cut -c 1-300 | sed 's/^/  dvc: /' >&2 || true
    if grep -qiE "missing cache files|not exist neither locally nor on remote|checkout failed|missing" <<<"$log"; then
        echo "  Some results of this commit's dvc.lock are not on that remote: it was not pushed after" >&2
        echo "  the last run, or dvc.lock changed since. Retrain instead (make retrain: the quick preset)," >&2
        echo "  or pull from a remote that has them: dvc remote default --local <name>." >&2
    fi
    exit 1
fi

# 1b. No byte is trusted without its hash: every object dvc.lock names is hashed against its md5 name
#     (a corrupted one is dropped from the cache: DVC's `verify` drops it on download, this catches the
#     rest). A mismatch stops here, naming the file, before anything reaches the workspace.
if ! bad="$(python tools/dvc_verify.py "${targets[@]}")"; then
    echo "memcap: $(wc -l <<<"$bad") files of dvc.lock have no verified object (missing, or bytes that do not match their hash); nothing in your workspace changed:" >&2
    sed -n '1,20s/^/  /p' <<<"$bad" >&2
    case "$url" in
        *://*) ;;
        *) dir="$url"; case "$dir" in "~"*) dir="${dir/#\~/$HOME}" ;; /*) ;; *) dir=".dvc/$dir" ;; esac
           corrupt="$(python tools/dvc_verify.py --remote "$dir" "${targets[@]}" | grep 'does not match' || true)"
           [ -z "$corrupt" ] || { echo "  corrupted on the $where:" >&2; sed -n '1,20s/^/    /p' <<<"$corrupt" >&2; } ;;
    esac
    echo "  Restore those objects on the remote from a good copy (or pull from another remote:" >&2
    echo "  dvc remote default --local <name>), then run make pull again." >&2
    exit 1
fi

# 2. Check out. DVC refuses to replace files that differ from dvc.lock ("unsaved"). Run files
#    (results/<family>/runs|attention/...) are results of other settings, under names of their own: they
#    are kept, put back after the checkout. Tables and figures are derived: they are replaced by the
#    published ones (your own grid's are rebuilt from its kept runs by running it again).
if ! log="$(dvc checkout "${targets[@]}" 2>&1)"; then
    unsaved="$(sed -n '/unsaved files/,$p' <<<"$log" | grep '^/' | sed "s|^$PWD/||" || true)"
    if [ -z "$unsaved" ]; then
        echo "memcap: dvc checkout failed:" >&2; tail -n 5 <<<"$log" | sed 's/^/  dvc: /' >&2; exit 1
    fi
    kept_dir=.snakemake/memcap/kept-runs
    runs="$(grep -E '^results/[^/]+/(runs|attention)/' <<<"$unsaved" || true)"
    derived="$(grep -vE '^results/[^/]+/(runs|attention)/' <<<"$unsaved" || true)"
    [ -z "$runs" ] || echo "keeping $(wc -l <<<"$runs") run files that dvc.lock does not record (other settings):"
    [ -z "$runs" ] || sed -n '1,20s/^/  /p' <<<"$runs"   # (not `| head`: under pipefail its SIGPIPE ended the script)
    [ -z "$derived" ] || echo "replacing $(wc -l <<<"$derived") tables/figures that differ from the published ones:"
    [ -z "$derived" ] || sed -n '1,20s/^/  /p' <<<"$derived"
    while read -r f; do [ -z "$f" ] || { mkdir -p "$kept_dir/$(dirname "$f")"; mv "$f" "$kept_dir/$f"; }; done <<<"$runs"
    dvc checkout --force "${targets[@]}" >/dev/null
    while read -r f; do
        [ -z "$f" ] && continue
        if [ -e "$f" ]; then   # the published result has this very name: both kept, yours beside it
            echo "  $f: the published file has this name; yours is kept as $kept_dir/$f" >&2
        else
            mkdir -p "$(dirname "$f")" && mv "$kept_dir/$f" "$f"
        fi
    done <<<"$runs"
fi

# Outputs must match dvc.lock; changed deps or params only mean `dvc repro` has work to do. A run
# folder where run files of other settings were kept differs by those files only.
bad="$(dvc status --json "${targets[@]}" | KEPT="${runs:-}" python -c '
import json, os, sys
kept = {"/".join(f.split("/")[:3]) for f in os.environ["KEPT"].split()}
status = json.load(sys.stdin)
for stage, changes in status.items():
    for change in changes:
        outs = change.get("changed outs") if isinstance(change, dict) else None
        outs = {path: what for path, what in (outs or {}).items() if not (path in kept and what == "modified")}
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
# Then, in the same process, the dry run of the current params.yaml: its last line says what is left.
if ! python tools/snakemake_touch.py --cores 1024 --touch --forceall --quiet all "${config[@]}" -- "${smk_targets[@]}" \
        ++ --cores 1 --dry-run --quiet all -- "${smk_targets[@]}" > .snakemake/memcap/pull-touch.log 2>&1; then
    echo "memcap: restored the files, but Snakemake could not record them (.snakemake/memcap/pull-touch.log):" >&2
    tail -n 5 .snakemake/memcap/pull-touch.log >&2
    exit 1
fi
echo "restored from the $where"
tail -n 1 .snakemake/memcap/pull-touch.log
