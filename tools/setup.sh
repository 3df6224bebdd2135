#!/usr/bin/env bash
# Create the virtual environment and install memcap with everything the pipeline and tests use.
# Idempotent: rerunning only installs what changed.
set -euo pipefail
VENV=${1:-.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP="$VENV/bin/pip --disable-pip-version-check -q"
# Pin torch explicitly: on a CPU machine 2.13.0 is the local CPU wheel; a bare `torch` (or a package
# that asks for a newer one) would bring several GB of CUDA wheels.
$PIP install "torch==2.13.0" 2> >(grep -v "WARNING: Location" >&2)
$PIP install -e ".[assumptions,test,ssh]" 2> >(grep -v "WARNING: Location" >&2)
# Real GPT-2 BPE ranks for the text assumption checks (sha256-checked), if the script is present.
if [ -x tools/fetch-gpt2-bpe.sh ] || [ -f tools/fetch-gpt2-bpe.sh ]; then
  bash tools/fetch-gpt2-bpe.sh data/gpt2-bpe
fi
# The 1300-image ImageNet validation sample of the `imagenet` assumption track (sha256-checked), copied from
# a local copy when MEMCAP_IMAGENET_SAMPLE_SRC names one; no download here (tools/fetch-imagenet-sample.sh
# downloads it from its public source).
IMAGENET_SRC="${MEMCAP_IMAGENET_SAMPLE_SRC:-}"
if [ -n "$IMAGENET_SRC" ] && [ -d "$IMAGENET_SRC" ]; then
  MEMCAP_IMAGENET_SAMPLE_SRC="$IMAGENET_SRC" bash tools/fetch-imagenet-sample.sh data/imagenet-sample \
    || echo "setup: the ImageNet sample was not installed (above); the imagenet rows of Table 1 will say SKIPPED"
else
  echo "setup: skipped the ImageNet sample (no MEMCAP_IMAGENET_SAMPLE_SRC): the imagenet rows of Table 1 will say" \
       "SKIPPED; to download it (GitHub VeriSilicon/acuity-dataset, sha256-checked): tools/fetch-imagenet-sample.sh"
fi
