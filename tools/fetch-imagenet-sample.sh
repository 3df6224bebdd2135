#!/usr/bin/env bash
# Fetch the 1300-image ImageNet validation sample (the `imagenet` track of the assumption checks, MLT
# Table 1 and Fig 1) into DEST (default data/imagenet-sample/), sha256-checked.
#
#   tools/fetch-imagenet-sample.sh [DEST]
#
# The images: 1300 ILSVRC2012 validation images (227×227 RGB JPEG, 725 classes) as published in the public
# GitHub repository VeriSilicon/acuity-dataset, folder ILSVRC2012_VAL_SET/, commit $COMMIT below.
# ImageNet's terms of access apply (non-commercial research); they are fetched, never committed.
#
# Where from, in this order:
#   1. a local copy, $MEMCAP_IMAGENET_SAMPLE_SRC, when it is set and that folder exists;
#   2. otherwise that repository at that commit ($MEMCAP_IMAGENET_SAMPLE_URL overrides the base URL).
# Either way every image is checked against tools/imagenet-sample/SHA256SUMS, which ships in the repository
# with labels.txt (the repository's dataset.txt: file, class index) and synset_words.txt
# ($MEMCAP_IMAGENET_SAMPLE_MANIFEST names another folder holding these three files). Nothing is installed
# unless every file matches. Idempotent: when DEST already holds every file with the right sha256, it says
# so and exits 0. DEST/SHA256SUMS is written last: its presence means the sample is complete.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
DEST="${1:-data/imagenet-sample}"
DEST="${DEST%/}"
COMMIT="aded2e9f22cd8fe0745aa57356c68cb95457aad9"
MANIFEST="${MEMCAP_IMAGENET_SAMPLE_MANIFEST:-$HERE/imagenet-sample}"
SRC="${MEMCAP_IMAGENET_SAMPLE_SRC:-}"
URL="${MEMCAP_IMAGENET_SAMPLE_URL:-https://raw.githubusercontent.com/VeriSilicon/acuity-dataset/$COMMIT/ILSVRC2012_VAL_SET/data}"
SUMS="$MANIFEST/SHA256SUMS"
TEXT_FILES=(labels.txt synset_words.txt)
me="fetch-imagenet-sample"

die() { echo "$me: $*" >&2; exit 1; }

[[ -f "$SUMS" ]] || die "no $SUMS: the manifest that every image is checked against is missing"
SUMS="$(cd "$(dirname "$SUMS")" && pwd)/SHA256SUMS"
mapfile -t NAMES < <(awk 'NF { sub(/^\*/, "", $2); print $2 }' "$SUMS")
[[ ${#NAMES[@]} -gt 0 ]] || die "$SUMS lists no files"

# check DIR: every file of SHA256SUMS present in DIR with its sha256. Prints the failures (at most 10),
# returns 1 if any.
check() {
    local dir="$1" out bad
    out="$(cd "$dir" && sha256sum -c "$SUMS" 2>/dev/null | grep -v ': OK$' || true)"
    [[ -z "$out" ]] && return 0
    bad="$(printf '%s\n' "$out" | grep -c . || true)"
    echo "$me: $bad of ${#NAMES[@]} file(s) in $dir are missing or fail the sha256 check against $SUMS:" >&2
    printf '%s\n' "$out" | head -10 | sed 's/^/    /' >&2
    if [[ "$bad" -gt 10 ]]; then echo "    ... and $((bad - 10)) more" >&2; fi
    return 1
}

# complete DIR: the images check, the text files equal the manifest's, and no image outside the manifest
# (the track reads every image of the folder).
complete() {
    local dir="$1" f extra
    [[ -f "$dir/SHA256SUMS" ]] && cmp -s "$dir/SHA256SUMS" "$SUMS" || return 1
    for f in "${TEXT_FILES[@]}"; do
        [[ ! -f "$MANIFEST/$f" ]] || cmp -s "$dir/$f" "$MANIFEST/$f" || return 1
    done
    extra="$(comm -13 <(printf '%s\n' "${NAMES[@]}" | sort) \
             <(cd "$dir" && find . -maxdepth 1 -type f \( -iname '*.jpeg' -o -iname '*.jpg' -o -iname '*.png' \) \
               | sed 's|^\./||' | sort))"
    [[ -z "$extra" ]] || die "$dir holds images that are not in $SUMS (the track would read them too): \
$(echo "$extra" | head -5 | tr '\n' ' ')— remove them or use another DEST"
    check "$dir" 2>/dev/null
}

if [[ -d "$DEST" ]] && complete "$DEST"; then
    echo "$DEST already holds the ImageNet sample (${#NAMES[@]} images, sha256 OK)"
    exit 0
fi

mkdir -p "$(dirname "$DEST")"
stage="$(mktemp -d "$DEST.partial.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

if [[ -d "$SRC" ]]; then
    from="$SRC"
    echo "$me: copying ${#NAMES[@]} images from $SRC"
    for name in "${NAMES[@]}"; do
        if [[ -f "$SRC/$name" ]]; then       # a missing one is named by the check below
            cp "$SRC/$name" "$stage/$name"
        fi
    done
else
    from="$URL"
    echo "$me: ${SRC:-no local copy named (MEMCAP_IMAGENET_SAMPLE_SRC)}${SRC:+ absent}; downloading ${#NAMES[@]} images from $URL"
    command -v curl >/dev/null || die "curl is needed to download the images"
    conf="$stage/.curl"
    for name in "${NAMES[@]}"; do
        printf 'url = "%s/%s"\noutput = "%s/%s"\n' "$URL" "$name" "$stage" "$name"
    done > "$conf"
    parallel=()
    curl --help all 2>/dev/null | grep -q -- '--parallel-max' && parallel=(--parallel --parallel-max 8)
    # a failed file is left out and named by the check below
    curl --fail --silent --show-error --location --retry 3 "${parallel[@]}" --config "$conf" \
        || echo "$me: some downloads failed (curl exit $?)" >&2
    rm -f "$conf"
fi

if ! check "$stage"; then
    die "the sample from $from does not match $SUMS; nothing was installed in $DEST"
fi

mkdir -p "$DEST"
rm -f "$DEST/SHA256SUMS"                 # incomplete until the last line below
for name in "${NAMES[@]}"; do
    chmod 0644 "$stage/$name"             # the source may be read-only
    mv -f "$stage/$name" "$DEST/$name"
done
for f in "${TEXT_FILES[@]}" README.md; do
    if [[ -f "$MANIFEST/$f" ]]; then
        cp "$MANIFEST/$f" "$DEST/$f.tmp" && chmod 0644 "$DEST/$f.tmp" && mv -f "$DEST/$f.tmp" "$DEST/$f"
    fi
done
# The images are fetched, not versioned (ImageNet's terms): keep them out of git wherever DEST is.
[[ -f "$DEST/.gitignore" ]] || printf '*\n' > "$DEST/.gitignore"
cp "$SUMS" "$DEST/SHA256SUMS.tmp" && chmod 0644 "$DEST/SHA256SUMS.tmp" && mv -f "$DEST/SHA256SUMS.tmp" "$DEST/SHA256SUMS"
complete "$DEST" || die "$DEST failed its check after installing"
echo "wrote $DEST: ${#NAMES[@]} ImageNet validation images (sha256 OK against $SUMS)"
