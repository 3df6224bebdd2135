"""Checks of the `assumptions` params section that JSON Schema cannot express (torch-free)."""

from __future__ import annotations

from memcap.assumptions.grid import FAMILY, MINILM_MAX_N, TEXT_TRACKS, VISION_TRACKS
from memcap.scales import active_preset


def problems(params: dict) -> list[str]:
    out = shape_problems(params)
    active = active_preset(params, FAMILY)
    return out + (memory_problems(params[FAMILY][active], active) if active in (params.get(FAMILY) or {}) and not out else [])


def memory_problems(p: dict, active: str) -> list[str]:
    """Each track's job at the active preset against the machine's memory (memcap.assumptions.sizes)."""
    from memcap.assumptions import sizes

    said = [sizes.problem(f"{FAMILY}.{active} (track {track})", p, track) for track in VISION_TRACKS + TEXT_TRACKS]
    return [s for s in said if s]


def shape_problems(params: dict) -> list[str]:
    problems = []
    for scale, p in (params.get(FAMILY) or {}).items():
        key = f"{FAMILY}.{scale}"
        for track in VISION_TRACKS:
            v = p["vision"][track]
            g = v["geometry"]
            if g["image_size"] % g["patch_size"]:
                problems.append(f"{key}.vision.{track}.geometry: image_size {g['image_size']} is not a multiple "
                                f"of patch_size {g['patch_size']}")
            if g["hidden"] % g["heads"]:
                problems.append(f"{key}.vision.{track}.geometry: hidden {g['hidden']} not divisible by heads {g['heads']}")
            if v["trained"]["kind"] == "pipeline" and "train" not in v:
                problems.append(f"{key}.vision.{track}: trained.kind pipeline needs a `train` section")
            if v["trained"]["kind"] == "hf_cache" and "repo_id" not in v["trained"]:
                problems.append(f"{key}.vision.{track}.trained: hf_cache needs repo_id")
            if v["source"]["kind"] in ("photos", "folder", "parquet") and not v["source"].get("count"):
                problems.append(f"{key}.vision.{track}.source: kind {v['source']['kind']} needs a count (T)")
            for kind, needed in (("folder", "root"), ("parquet", "pattern")):
                if v["source"]["kind"] == kind and not v["source"].get(needed):
                    problems.append(f"{key}.vision.{track}.source: kind {kind} needs {needed}")
        for track in TEXT_TRACKS:
            t = p["text"][track]
            if track == "gpt2" and "bpe_dir" not in t:
                problems.append(f"{key}.text.gpt2: bpe_dir is required (tools/fetch-gpt2-bpe.sh writes it)")
            for i, m in enumerate(t["models"]):
                n = m.get("context_size", t["context_size"])
                mk = f"{key}.text.{track}.models[{i}]"
                if m["weights"] in ("minilm", "random_minilm") and (track != "bert" or n > MINILM_MAX_N):
                    problems.append(f"{mk}: MiniLM is a BERT with d = 384; needs track bert and context_size "
                                    f"<= {MINILM_MAX_N}, got {track} n={n}")
                if m["weights"] == "random" and "config" not in m:
                    problems.append(f"{mk}: weights random needs config (hidden, heads, positions)")
                if m["weights"] == "random" and m.get("config", {}).get("positions", n) < n:
                    problems.append(f"{mk}: context_size {n} > config.positions {m['config']['positions']}")
                if m["weights"] == "hf_cache" and "repo_id" not in m:
                    problems.append(f"{mk}: hf_cache needs repo_id")
                if track == "bert" and m["weights"] == "random" and "mlp" not in m.get("config", {}):
                    problems.append(f"{mk}: a random BERT needs config.mlp")
    return problems
