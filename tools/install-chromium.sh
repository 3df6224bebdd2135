#!/usr/bin/env bash
# Debian's headless-capable Chromium for the HTML report test (tests/test_report_html.py).
# Idempotent: does nothing when `chromium` is already on PATH. Needs root (or sudo) for apt-get.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
