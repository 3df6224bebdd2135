#!/usr/bin/env bash
# Fetch the real GPT-2 BPE ranks into DEST (default data/gpt2-bpe/).
#
# Nothing importable ships them: the openai-whisper sdist on PyPI carries whisper/assets/gpt2.tiktoken,
# byte-identical to tiktoken's r50k_base (the GPT-2 vocabulary). We download that sdist without its
# dependencies (numba, triton), extract the one file, and check its sha256 before installing it.
#
#   tools/fetch-gpt2-bpe.sh [DEST]
set -euo pipefail

DEST="${1:-data/gpt2-bpe}"
VERSION="20250625"
SHA256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
FILE="gpt2.tiktoken"
PYTHON="${PYTHON:-python}"

if [[ -f "$DEST/$FILE" ]] && echo "$SHA256  $DEST/$FILE" | sha256sum -c --status; then
    echo "$DEST/$FILE already present (sha256 OK)"
    exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$PYTHON" -m pip download --quiet --no-deps --no-binary :all: "openai-whisper==$VERSION" -d "$tmp"
sdist="$(find "$tmp" -maxdepth 1 -name "openai[-_]whisper-$VERSION.tar.gz" | head -1)"
[[ -n "$sdist" ]] || { echo "fetch-gpt2-bpe: no openai-whisper $VERSION sdist downloaded" >&2; exit 1; }
member="$(tar -tzf "$sdist" | grep "whisper/assets/$FILE\$" | head -1)"
tar -xzf "$sdist" -C "$tmp" "$member"

if ! echo "$SHA256  $tmp/$member" | sha256sum -c --status; then
    echo "fetch-gpt2-bpe: sha256 mismatch for $member (expected $SHA256)" >&2
    exit 1
fi
mkdir -p "$DEST"
cp "$tmp/$member" "$DEST/$FILE.tmp" && mv "$DEST/$FILE.tmp" "$DEST/$FILE"
# The file is fetched, not versioned: keep it out of git wherever DEST is.
[[ -f "$DEST/.gitignore" ]] || printf '*\n' > "$DEST/.gitignore"
echo "wrote $DEST/$FILE (sha256 $SHA256)"
