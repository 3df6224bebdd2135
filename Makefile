# memcap: the two commands of the README, plus helpers. Every target sets itself up on a fresh machine.
#   make reproduce   # set up, then run every family on the quick preset (dvc repro -> snakemake)
#   make test        # set up, start a local single-node SLURM, run the test suite
SHELL := /bin/bash
VENV ?= .venv
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# Nothing downloads from a model or dataset hub at run time (and a miss fails fast instead of retrying).
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup reproduce pull test benchmarks clean

setup: $(VENV)/.memcap-installed

# torch first, pinned, so pip takes the local CPU wheel instead of a CUDA build (see README on GPUs).
$(VENV)/.memcap-installed: pyproject.toml tools/setup.sh
	bash tools/setup.sh $(VENV)
	touch $@

reproduce: setup
	dvc repro

# Cached results instead of retraining: dvc pull, then make Snakemake agree that nothing is stale.
pull: setup
	bash tools/dvc-pull.sh

# SLURM jobs outlive a killed snakemake: whatever ends the tests (failure, CI timeout), cancel ours.
test: setup
	bash tools/slurm-up.sh
	bash tools/install-chromium.sh   # headless Chromium for the HTML report test
	trap 'scancel --user "$$(id -un)" >/dev/null 2>&1 || true' EXIT; pytest -q -ra

benchmarks: setup
	python benchmarks/train_throughput.py

clean:
	rm -rf results figures logs checkpoints .snakemake
