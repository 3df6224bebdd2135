#!/usr/bin/env bash
# Stop the single-node SLURM of tools/slurm-up.sh: cancel this machine's jobs, then kill the daemons by
# their pid files (no pkill by name) and clear the state directories so the next start is clean.
#   sudo bash tools/slurm-down.sh               # everything, munged included
#   sudo bash tools/slurm-down.sh --keep-munge  # SLURM only (used by slurm-up.sh on a config change)
set -uo pipefail
keep_munge=0
[ "${1:-}" = "--keep-munge" ] && keep_munge=1

command -v scancel >/dev/null && [ -s /run/slurmctld.pid ] && scancel --full --quiet --user "$(id -un)" 2>/dev/null

stop() {  # stop <pidfile>: SIGTERM, wait up to 10 s, then SIGKILL
  local pidfile=$1 pid
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$pidfile"
}

stop /run/slurmd.pid
stop /run/slurmctld.pid
[ "$keep_munge" = 1 ] || stop /run/munge/munged.pid
rm -rf /var/spool/slurmctld/* /var/spool/slurmd/*
echo "slurm-down: stopped" >&2
