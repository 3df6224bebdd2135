"""The assumptions family's tracks (torch-free): one job per track."""

from __future__ import annotations

from pathlib import Path

FAMILY = "assumptions"
# imagenet: the 1300-image ImageNet validation sample (tools/fetch-imagenet-sample.sh) at ViT-B/16 geometry;
# its rows say SKIPPED when the folder is absent. photos stays as the code-path check that always runs.
VISION_TRACKS = ("photos", "digits", "imagenet")
TEXT_TRACKS = ("gpt2", "bert")
TRACKS = (*VISION_TRACKS, *TEXT_TRACKS)
# the trained stand-ins' rows (memcap.assumptions.stand_ins): the ViT's model and layers in Table 1, the
# causal LM's model name in Table 3 (params text.gpt2.models)
VIT_STAND_IN = "trained ViT (DINOv2-S/14 stand-in)"
VIT_STAND_IN_LAYERS = ("embedding layer", "first block")
LM_STAND_IN = "trained causal LM (SmolLM2-135M stand-in)"
STAND_IN_STAMP = "memcap-stand-in.json"   # written last by tools/fetch-stand-ins.sh (memcap.assumptions.stand_ins)
MINILM_MAX_N = 383             # d = 384: Asm 2 (rank n) needs n <= d - 1 with [CLS] among the rows


def track_settings(preset: dict, track: str) -> dict:
    """The params one track reads (its rule's params: it reruns when they change)."""
    section = preset["vision" if track in VISION_TRACKS else "text"][track]
    return {k: preset[k] for k in ("seed", "threshold", "trials", "fig1")} | {track: section}


def data_inputs(preset: dict, track: str) -> list[str]:
    """The on-disk image folder and stand-in checkpoints a track reads, when present (its rule's input: the job
    reruns when one appears, changes or goes). An absent one is no input: the job still runs and says SKIPPED."""
    return _image_folder(preset, track) + _stand_in_stamps(preset, track)


def _image_folder(preset: dict, track: str) -> list[str]:
    if track not in VISION_TRACKS:
        return []
    src = preset["vision"][track]["source"]
    if src["kind"] != "folder" or not Path(src["root"]).is_dir():
        return []
    manifest = Path(src["root"]) / "SHA256SUMS"          # written last by tools/fetch-imagenet-sample.sh
    return [str(manifest if manifest.is_file() else Path(src["root"]))]


def _stand_in_stamps(preset: dict, track: str) -> list[str]:
    """The fetched stand-ins' stamps (tools/fetch-stand-ins.sh), when present: the job reruns when one appears."""
    dirs = ([preset["vision"][track].get("stand_in", {}).get("dir")] if track in VISION_TRACKS else
            [m.get("dir") for m in preset["text"][track]["models"] if m["weights"] == "smollm2"])
    return [str(Path(d) / STAND_IN_STAMP) for d in dirs if d and (Path(d) / STAND_IN_STAMP).is_file()]
