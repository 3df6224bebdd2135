#!/usr/bin/env bash
# Start a real single-node SLURM on this machine (for the `slurm` tests and for trying the SLURM profile
# locally). Debian 12 packages (slurmctld, slurmd, slurm-client, munge), installed if missing; no
# systemd: the daemons are started directly and stopped by pid with tools/slurm-down.sh.
#   sudo bash tools/slurm-up.sh          # idempotent; ~0.2 s when already installed and running
#   snakemake --profile slurm --profile tests/profiles/slurm-local ...   # then submit through sbatch
# Needs root (apt-get, daemons, /etc/slurm). Four fake GPUs (gres backed by /dev/null, /dev/zero,
# /dev/full, /dev/urandom) so that `--gpus`/`--gres=gpu` requests schedule and jobs see
# CUDA_VISIBLE_DEVICES. Traps found on this kind of machine:
#   - without slurmdbd, sacct fails (and the plugin's sacct status checks would wait forever): the
#     tests add tests/profiles/slurm-local (`slurm-status-command: squeue`) to the shipped profile;
#     squeue only sees finished jobs for MinJobAge seconds (>= 120 needed; 600 here);
#   - a gpu gres without File= is dropped by slurmd and the node drains;
#   - without DefMemPerCPU a job with no --mem takes all the node's memory;
#   - the hostname is not "localhost": slurmd runs with -N localhost;
#   - munged must run as the munge user.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
# The daemons and runuser live in sbin, which a bare PATH (env -i, cron, some CI runners) leaves out.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
[ "$(id -u)" -eq 0 ] || { echo "slurm-up: run as root (sudo bash tools/slurm-up.sh)" >&2; exit 1; }

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
   || ! command -v sbatch >/dev/null; then
  echo "slurm-up: installing slurmctld slurmd slurm-client munge (apt)" >&2
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

# Twice the machine's cores (SlurmdParameters=config_overrides: slurmd takes the configured count):
# the tests' tiny jobs are mostly Python starting up, so twice as many at once run in about the
# same time as half of them, instead of queueing in pairs on a 2-core machine.
NCPU=$(( 2 * $(nproc) ))
MEM_MB=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 2048 ))   # leave 2 GB to the OS
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge

conf=$(cat <<CONF
# Written by memcap tools/slurm-up.sh: single node, no accounting, four fake GPUs, partitions cpu and gpu.
ClusterName=local
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=10
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
# squeue (the profile's status command) sees finished jobs only this long after they end.
MinJobAge=600
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=localhost NodeAddr=127.0.0.1 CPUs=${NCPU} RealMemory=${MEM_MB} Gres=gpu:4 State=UNKNOWN
# Two partitions on the one node, as a site has a CPU and a GPU partition: the SLURM profile sends
# jobs that ask for a GPU to \`gpu\` and the others to \`cpu\` (profiles/slurm/partitions.yaml).
PartitionName=cpu Nodes=localhost Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=localhost MaxTime=INFINITE State=UP
CONF
)
gres=$(printf 'NodeName=localhost Name=gpu File=%s\n' /dev/null /dev/zero /dev/full /dev/urandom)

# Rewrite the config only when it changed; a running SLURM with another config is restarted.
changed=0
if [ "$(cat /etc/slurm/slurm.conf 2>/dev/null)" != "$conf" ]; then printf '%s\n' "$conf" > /etc/slurm/slurm.conf; changed=1; fi
if [ "$(cat /etc/slurm/gres.conf 2>/dev/null)" != "$gres" ]; then printf '%s\n' "$gres" > /etc/slurm/gres.conf; changed=1; fi
if [ "$changed" = 1 ] && [ -s /run/slurmctld.pid ]; then
  echo "slurm-up: configuration changed, restarting SLURM" >&2
  bash "$(dirname "$0")/slurm-down.sh" --keep-munge
fi

# munge: the Debian postinst normally creates the key; make one if it did not.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
mkdir -p /var/log/munge /var/lib/munge
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
chmod 0400 /etc/munge/munge.key
chmod 0755 /run/munge

alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
alive /run/munge/munged.pid || runuser -u munge -- /usr/sbin/munged
munge -n | unmunge >/dev/null
alive /run/slurmctld.pid || slurmctld        # daemonizes, writes its pid file
alive /run/slurmd.pid || slurmd -N localhost  # -N: the machine's hostname is not "localhost"

state=""
for _ in $(seq 1 120); do
  state=$(sinfo -h -N -o %T 2>/dev/null | head -n 1 || true)
  case "$state" in
    idle|mixed|allocated|completing) break ;;
    drain*|drained|inval*|down*)
      # Left over from an earlier bad config or an unclean stop: clear it.
      scontrol update nodename=localhost state=resume 2>/dev/null || true ;;
  esac
  sleep 0.5
done
case "$state" in
  idle|mixed|allocated|completing) ;;
  *) echo "slurm-up: node did not become ready (state '${state}'); see /var/log/slurm/*.log" >&2
     tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
     exit 1 ;;
esac
sinfo
