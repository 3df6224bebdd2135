#!/usr/bin/env bash
# One lent GPU machine's session (torch there, no Snakemake): the graph check, the step's profile and the
# benchmark, then paper-settings MLT sweeps as packs with the rules' own commands (tools/train_jobs.py),
# stopped by SIGTERM at the deadline (each pack saves its checkpoint; the next call on the same machine
# resumes it). Results, logs and the benchmark come back as one tarball in $OUT (the loan returns at
# most 8 files, 2 levels); here, tools/take_loan.py puts its runs into the project.
# --graphs: first benchmarks/graph_check.py (CUDA graphs against the eager step, ~1 min); the packs
# replay their steps from graphs only if it says SAME for both of its packs, else the specs after
# --eager run instead (sweeps that finish in one call stepping eagerly). --graphs-checked: graph_check
# said SAME in an earlier call on this machine (a second call resuming the first one's checkpoints).
#   bash tools/gpu_loan.sh DEADLINE_S [--no-bench] [--graphs|--graphs-checked] [SWEEP:SEEDS ...] [--eager SWEEP:SEEDS ...]
#   e.g. 560 --no-bench --graphs scale_dh_shared:0,1 --eager scale_head_shared:2,3
# PACK_MODELS=N in the environment: at most N models a pack (default: the scale's resources, 256); a
# pack's checkpoint cannot come back (16 MiB a file), but the jobs it finished can (they wait under
# checkpoints/mlt_synthetic/finished until the pack is done; the tarball holds them). WORKERS=N processes
# side by side per sweep (default 2: processes take turns on the GPU, so more packs side by side do not
# train faster, they only leave more of them unfinished at the loan's end; docs/speed.md 2026-11-28). BENCH_SECONDS: the benchmark's timing window (default 1).
# ONLY="SWEEP/VALUE/T ..." in the environment: just those jobs of their sweeps (train_jobs.py --only); a
# sweep that ONLY does not name trains all its missing jobs beside them.
set -uo pipefail
DEADLINE=${1:?seconds}; shift
BENCH=1
if [ "${1:-}" = "--no-bench" ]; then BENCH=0; shift; fi
GRAPHS=0
if [ "${1:-}" = "--graphs" ]; then GRAPHS=1; shift; fi
if [ "${1:-}" = "--graphs-checked" ]; then GRAPHS=2; shift; fi
specs=(); eager=()
while [ $# -gt 0 ]; do   # SWEEP:SEEDS ... [--eager SWEEP:SEEDS ...]
  if [ "$1" = "--eager" ]; then shift; eager=("$@"); break; fi
  specs+=("$1"); shift
done
START=$(date +%s)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if [ -d .whl ]; then   # what memcap needs beyond the machine's image (jsonschema for params validation)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
export PYTHONPATH=src:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 10 > "$OUT/gpu_busy.csv" 2>&1 &
busy=$!   # the GPU's busy share every 10 s, until the tarball is made
graphs=()
if [ "$GRAPHS" = 1 ]; then
  timeout 180 python3 benchmarks/graph_check.py --steps 300 --seconds 3 2>&1 | tee "$OUT/graph_check.log"
  [ "$(grep -c 'SAME bit for bit' "$OUT/graph_check.log")" = 2 ] && graphs=(--cuda-graphs)
  if [ ${#graphs[@]} = 0 ] && [ ${#eager[@]} -gt 0 ]; then specs=("${eager[@]}"); fi
fi
[ "$GRAPHS" = 2 ] && graphs=(--cuda-graphs)
if [ "$BENCH" = 1 ]; then   # packs' speed and the paper grid's projection, stepping as the packs will
  # first where a random-context pack's step spends its GPU time, kernel by kernel (~30 s)
  timeout 120 python3 benchmarks/step_profile.py --device cuda --models 256 --n 32 --steps 10 2>&1 | tee "$OUT/step_profile.log"
  timeout 300 python3 benchmarks/train_throughput.py --device cuda --seconds ${BENCH_SECONDS:-1} --project-seconds 0.25 \
    --no-reference "${graphs[@]}" 2>&1 | tee "$OUT/bench.log"
fi
echo "packs step ${graphs[*]:-eagerly}: ${specs[*]}"
pids=()
for spec in "${specs[@]}"; do   # each sweep's packs in its own runner, all at once
  sweep=${spec%%:*}; seeds=${spec#*:}
  only=""; for job in ${ONLY:-}; do [ "${job%%/*}" = "$sweep" ] && only+=" $job"; done
  left=$(( DEADLINE - ($(date +%s) - START) ))
  python3 tools/train_jobs.py --scale paper --sweeps "$sweep" --seeds ${seeds//,/ } --workers ${WORKERS:-2} \
    ${PACK_MODELS:+--pack-models $PACK_MODELS} ${only:+--only $only} --deadline "$left" "${graphs[@]}" > "logs-$sweep.txt" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
cat logs-*.txt 2>/dev/null
find logs/train_jobs -name "*.log" 2>/dev/null | sort | xargs -r tail -n 2 | tail -n 80
kill "$busy" 2>/dev/null
tar czf "$OUT/results.tgz" results/mlt_synthetic/runs results/mlt_synthetic/attention checkpoints/mlt_synthetic/finished \
  logs/train_jobs logs-*.txt 2>/dev/null
ls checkpoints/mlt_synthetic/packs checkpoints/mlt_synthetic/finished 2>/dev/null | head -50
echo "gpu_loan: $(( $(date +%s) - START )) s"
