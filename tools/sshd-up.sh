#!/usr/bin/env bash
# Start an SSH server on this machine for the lab-remote test (tests/test_infra_dvc.py: a DVC remote
# over ssh://, as a lab's would be): Debian's openssh-server, installed if missing, listening on
# 127.0.0.1 only, key login only, for this user with a key of its own. Idempotent (~0.1 s when running).
#   bash tools/sshd-up.sh        # prints nothing new when it already runs; `make test` calls it
# State (host key, user key, config, pid) in $MEMCAP_SSHD_DIR (default /tmp/memcap-sshd); port
# $MEMCAP_SSHD_PORT (default 2222). Stop it: kill "$(cat /tmp/memcap-sshd/sshd.pid)".
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
DIR=${MEMCAP_SSHD_DIR:-/tmp/memcap-sshd}
PORT=${MEMCAP_SSHD_PORT:-2222}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

if ! command -v sshd >/dev/null; then
  echo "sshd-up: installing openssh-server (apt)" >&2
  $SUDO apt-get update -q >/dev/null
  $SUDO apt-get install -y -q --no-install-recommends openssh-server >/dev/null
fi
if [ -f "$DIR/sshd.pid" ] && kill -0 "$(cat "$DIR/sshd.pid")" 2>/dev/null; then
  exit 0
fi
mkdir -p "$DIR"
chmod 700 "$DIR"
[ -f "$DIR/host_key" ] || ssh-keygen -q -t ed25519 -N "" -f "$DIR/host_key"
[ -f "$DIR/id_ed25519" ] || ssh-keygen -q -t ed25519 -N "" -f "$DIR/id_ed25519"
cp "$DIR/id_ed25519.pub" "$DIR/authorized_keys"
cat > "$DIR/sshd_config" <<CONF
# Written by memcap tools/sshd-up.sh: localhost only, this user's key only.
Port $PORT
ListenAddress 127.0.0.1
HostKey $DIR/host_key
AuthorizedKeysFile $DIR/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $(id -un)
StrictModes no
UsePAM no
PidFile $DIR/sshd.pid
Subsystem sftp internal-sftp
CONF
$SUDO mkdir -p /run/sshd   # sshd's privilege-separation directory
$SUDO "$(command -v sshd)" -f "$DIR/sshd_config" -E "$DIR/sshd.log"
for _ in $(seq 50); do [ -f "$DIR/sshd.pid" ] && break; sleep 0.1; done
[ -f "$DIR/sshd.pid" ] || { echo "sshd-up: sshd did not start; see $DIR/sshd.log" >&2; exit 1; }
ssh -q -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -i "$DIR/id_ed25519" \
  -p "$PORT" "$(id -un)@127.0.0.1" true || { echo "sshd-up: cannot log in; see $DIR/sshd.log" >&2; exit 1; }
echo "sshd-up: ssh://$(id -un)@127.0.0.1:$PORT (key $DIR/id_ed25519)"
