#!/usr/bin/env bash
# What `make test` needs before it starts anything: root, because tools/slurm-up.sh installs and starts
# Debian's SLURM and munge, tools/sshd-up.sh its openssh-server and tools/install-chromium.sh chromium
# (apt-get, daemons, /etc/slurm). Without root it says so in one line and how to run the rest.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "make test: needs root (SLURM, munge, sshd and chromium come from Debian's packages); without root run" \
       "\`make test-fast\` (unit tests) or \`pytest -m \"not slurm and not sshd and not chromium\"\` (the rest)" >&2
  exit 1
fi
