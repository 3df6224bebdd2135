"""Assumption checks of Mahdavi et al. 2024 (Table 1, Fig 1, Table 3, Assumption 3), spec mahdavi.md §4.

checks.py      rank of each context (Asm 2), Kruskal-rank sampling with a Wilson interval, k-search
images.py      image sources: package photos (seeded crops), sklearn digits, ImageNet folder, HF parquet
wikitext.py    Wikipedia sources: ovos extracts, gensim enwiki articles, datasets on disk (three forms)
hf.py          offline Hugging Face loading (local cache by repo id) and the GPT-2 BPE file
vision.py      ViT tracks: embedding layer, random attention, random/trained first block
digits_vit.py  the small ViT the pipeline trains on sklearn digits (random vs trained, for real)
text.py        GPT-2 (last token) and BERT two-segment ([CLS]) tracks, layers L0 and L1
suite.py       one track's features -> one row per check (the family's Parquet schema)
report.py      Table 1, Table 3 (markdown + LaTeX) and Fig 1
"""
