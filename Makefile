# memcap: the two commands of the README, plus helpers. Every target sets itself up on a fresh machine.
#   make reproduce   # set up, restore the published results (no training), retrain what params made stale
#   make test        # set up, start a local single-node SLURM and sshd (root), run the test suite
#   make retrain     # every family trained again from nothing at the quick preset (no cache)
SHELL := /bin/bash
VENV ?= .venv
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
# Nothing downloads from a model or dataset hub at run time (and a miss fails fast instead of retrying).
export HF_HUB_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup reproduce pull retrain publish test test-needs test-fast benchmarks clean

setup: $(VENV)/.memcap-installed

# torch first, pinned, so pip takes the local CPU wheel instead of a CUDA build (see README on GPUs).
$(VENV)/.memcap-installed: pyproject.toml tools/setup.sh
	bash tools/setup.sh $(VENV)
	touch $@

# The published results (published/dvc-remote, in the repository) first, then only what a params
# change made stale trains: on a fresh clone with unchanged params nothing trains.
reproduce: setup
	python tools/dvc_pull.py
	dvc repro

# Cached results instead of retraining: dvc pull, then make Snakemake agree that nothing is stale.
pull: setup
	python tools/dvc_pull.py

# Cold, every family at the quick preset (minutes on 2 cores): no cache, no published results. Quick
# stand-ins, not what dvc.lock records (DPC and theory at paper scale): `make clean pull` restores those.
# The published scales from nothing: `memcap suite run --scale dpc=paper --scale theory=paper` (hours on
# 2 cores, resumable job by job after a stop), or dvc repro after clean.
retrain: setup clean
	snakemake --cores all --config scale=quick -- all

# Maintainers: after a clean `dvc repro`, put exactly this commit's results into the published remote
# (refused while a result's code cannot be traced to a commit: `memcap provenance check`).
publish: setup
	@dvc status --quiet || { echo "publish: dvc status is not clean; run dvc repro first" >&2; exit 1; }
	memcap provenance check --quiet   # every result traced to a commit's code, or nothing is pushed
	python tools/dvc_verify.py     # every object pushed matches its hash, in the cache and then on the remote
	dvc push --remote published
	dvc gc --workspace --cloud --remote published --force
	python tools/dvc_verify.py --remote published/dvc-remote
	@du -sh published/dvc-remote

# `make test` starts SLURM and sshd from Debian's packages: without root, one line says how to run the rest.
test-needs:
	@bash tools/test-needs.sh

# SLURM jobs outlive a killed snakemake: whatever ends the tests (failure, CI timeout), cancel ours.
# Two pytest workers, one per core (a third gave nothing: the suite is CPU-bound); tests/conftest.py
# gives each worker's first block of tests its share of the slowest (worksteal: then an idle worker
# takes tests from the busy one).
test: test-needs setup
	bash tools/slurm-up.sh
	bash tools/sshd-up.sh            # a local SSH server: the lab remote's round trip over ssh://
	bash tools/install-chromium.sh   # headless Chromium for the HTML report test
	bash tools/fetch-stand-ins.sh    # the trained ViT and causal-LM stand-ins their tests check (~180 MB, once)
	trap 'scancel --user "$$(id -un)" >/dev/null 2>&1 || true' EXIT; pytest -q -ra -n 2 --dist worksteal --durations=25

# The inner loop (under 2 minutes): the unit tests of the math, params, verdicts and layout; no
# pipeline, DVC or SLURM run (those are marked e2e / slurm and run in `make test`, as in CI).
test-fast: setup
	pytest -q -ra -n 2 -m "not e2e and not slurm" --durations=10

benchmarks: setup
	python benchmarks/train_throughput.py

# Generated files only (git-ignored); the tracked .gitignore files and report metrics stay.
clean:
	git clean -fdqX -- results figures logs checkpoints
	rm -rf .snakemake
