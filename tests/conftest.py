"""Shared fixtures: offline HF settings, and a throw-away copy of the project for end-to-end runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

# Nothing may download from a model or dataset hub during tests (and a miss must fail fast).
for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[var] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Each test project is a fresh copy of src/: with PYTHONDONTWRITEBYTECODE (set on some machines) every
# job of every copy would compile memcap's modules again; let the first process of a copy cache them.
# The jobs then also do what Python does by default on a user's machine (the DVC tests rely on it).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent          # the venv's bin: snakemake, dvc


# The slowest tests (seconds in one `make test` on 2 cores, docs/tests.md) are spread over the pytest-xdist
# workers, longest first, so that each worker starts with its share and none of them begins near the
# end while the other worker idles (the suite is CPU-bound). `--dist worksteal` hands worker k the k-th
# contiguous block of the collection (then an idle worker steals from the end of a busy one's), so each
# block here is its worker's slow tests, then the rest in collection order.
SLOWEST = {
    # builds the shared tiny pipeline (conftest.pipeline, ~70 s in the suite) that the family
    # end-to-end tests and the DVC round trip read
    "test_report_pipeline.py::test_report_target_end_to_end": 74,
    "test_infra_slurm.py::test_snakemake_profile_slurm_two_families": 70,      # mostly waits on SLURM
    "test_infra_dvc.py::test_dvc_round_trip_incremental_and_run_cache": 49,      # AFTER_PIPELINE
    "test_infra_crash.py::test_slurm_sigkill_and_requeue_resume_to_identical_results": 39,   # waits, too
    # the first of these builds the session's published clone (conftest.published_clone, ~9 s)
    "test_nothing_lost.py::test_a_grid_of_your_own_trains_beside_the_published_results_and_pull_keeps_it": 30,
    "test_dpc_pipeline.py::test_paper_suite_resumes_in_a_fresh_clone_from_the_snapshot": 30,
    "test_bundle.py::test_a_pack_stopped_midway_then_resumed_from_the_bundles_gives_the_runs_snakemake_trains": 15,
    "test_capacity.py::test_a_pack_preset_searches_every_architecture_in_one_job_to_the_rows_of_one_job_each": 10,
    "test_nothing_wrong.py::test_an_interrupted_pull_then_a_pull_restores_exactly_the_published_state": 9,
    "test_infra_dvc.py::test_a_run_pushed_to_a_lab_remote_over_ssh_is_pulled_into_a_fresh_clone_and_nothing_retrains": 8,
    "test_infra_crash.py::test_sigkill_mid_run_then_rerun_resumes_to_identical_results": 10,
    "test_mlt_pipeline.py::test_a_gpu_preset_trains_the_missing_runs_as_packs_and_never_touches_a_run_that_exists": 9,
    "test_configfile.py::test_configfile_seeds_and_steps_reach_the_job_and_never_overwrite": 9,
}

# The test whose set-up builds the shared pipeline (conftest.pipeline) goes first in worker 0's block, and
# the slow tests that start from its results right after it on the same worker: they never wait for the
# build, and they keep a core busy while the other worker's first tests (SLURM's) mostly wait on polling.
PIPELINE_BUILDER = "test_report_pipeline.py::test_report_target_end_to_end"
AFTER_PIPELINE = ("test_infra_dvc.py::test_dvc_round_trip_incremental_and_run_cache",
                  "test_capacity.py::test_a_pack_preset_searches_every_architecture_in_one_job_to_the_rows_of_one_job_each")


def pytest_collection_modifyitems(items: list) -> None:
    def name(item) -> str:
        return item.nodeid.rsplit("/", 1)[-1]

    def seconds(item) -> float:
        return SLOWEST.get(name(item), 0)

    def first_in_block_0(item) -> int:
        return 0 if name(item) == PIPELINE_BUILDER else 1 if name(item) in AFTER_PIPELINE else 2

    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    sizes, left = [], len(items)
    for k in range(workers):              # worksteal's first split: worker k gets left // (workers - k)
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    blocks, load = [[] for _ in sizes], [0.0] * workers
    for item in sorted((i for i in items if seconds(i)), key=lambda i: (first_in_block_0(i), -seconds(i))):
        room = [k for k in range(workers) if len(blocks[k]) < sizes[k]]
        k = 0 if first_in_block_0(item) < 2 and 0 in room else min(room, key=lambda k: load[k])
        blocks[k].append(item)
        load[k] += seconds(item)
    rest = [i for i in items if not seconds(i)]
    for k, block in enumerate(blocks):
        n = sizes[k] - len(block)
        block += rest[:n]
        rest = rest[n:]
    items[:] = [i for block in blocks for i in block]


def repo_files() -> list[str]:
    """Tracked and untracked-but-not-ignored files: what a fresh clone plus the working changes holds."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    # published/ (the in-repo DVC remote) is read in place by the test that restores from it; the
    # .gitignore files DVC keeps next to its outputs come along, as in a clone
    generated = ("results/", "figures/", "logs/", "checkpoints/", "data/", ".dvc/cache/", ".dvc/tmp/", "published/")
    return [f for f in out.splitlines()
            if ((REPO / f).is_file() or (REPO / f).is_symlink())
            and (not f.startswith(generated) or (f.endswith("/.gitignore") and not f.startswith("published/")))]


class Project:
    """A copy of the repository in a temp dir, with helpers to edit params.yaml and run tools."""

    def __init__(self, root: Path):
        self.root = root

    @property
    def params_path(self) -> Path:
        return self.root / "params.yaml"

    def params(self) -> dict:
        return yaml.safe_load(self.params_path.read_text())

    def edit_params(self, fn) -> None:
        """fn(params) mutates the dict; the file is rewritten (comments are lost, fine for tests)."""
        p = self.params()
        fn(p)
        self.params_path.write_text(yaml.safe_dump(p, sort_keys=False))

    def run_path(self, family: str, *point, scale: str | None = None, folder: str = "runs",
                 params_file: Path | None = None) -> str:
        """The file a training job of `family` writes for `point` (MLT: sweep, value, T; DPC: experiment,
        series label; capacity: H, d_h), from this project's validated params as the DAG names it."""
        from memcap import params as memcap_params
        from memcap.capacity import grid as capacity_grid
        from memcap.dpc import grid as dpc_grid
        from memcap.mlt_synthetic import grid as mlt_grid

        params = memcap_params.load(params_file or self.params_path, {"scale": scale} if scale else None)
        grid = {"mlt_synthetic": mlt_grid, "dpc": dpc_grid, "capacity": capacity_grid}[family]
        name = memcap_params.scale_of(params, family)
        if family == "mlt_synthetic":   # each sweep resolved (a composite preset takes them from others)
            return f"results/{family}/{folder}/{grid.run_name(grid.resolve(params[family], name), *point)}"
        return f"results/{family}/{folder}/{grid.run_name(name, memcap_params.preset(params, family), *point)}"

    def run(self, *args: str, check: bool = True, env: dict | None = None, timeout: int = 900):
        """Run a command in the project; tools from the venv first on PATH."""
        full_env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", **(env or {})}
        proc = subprocess.run(list(args), cwd=self.root, capture_output=True, text=True, env=full_env,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n"
                                 f"{proc.stderr[-8000:]}")
        return proc

    def snakemake(self, *targets: str, check: bool = True, extra: tuple = (), env: dict | None = None):
        args = ("--cores", "2", "--nocolor", "--show-failed-logs", *extra, *targets)
        if check and "-n" in args and self._runs_this_code(env):
            return self._dry_run_here(args)
        return self.run(str(BIN / "snakemake"), *args, check=check, env=env)

    def _runs_this_code(self, env: dict | None) -> bool:
        """Whether a job of this copy would import the code this test process runs: its src/ and its
        schemas are the repository's, and the command gets no environment but the copy's own."""
        from infra_helpers import code_env

        if env not in (None, code_env(self.root)) or "SNAKEMAKE_PROFILE" in os.environ:
            return False
        def files(tree: Path) -> dict[Path, bytes]:
            return {p.relative_to(tree): p.read_bytes() for p in tree.rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts}

        return all(files(self.root / tree) == files(REPO / tree) for tree in ("src/memcap", "workflow/schemas"))

    def _dry_run_here(self, args: tuple) -> subprocess.CompletedProcess:
        """`snakemake -n ARGS` through Snakemake's own command-line entry (snakemake.cli), in this process:
        the same DAG and output as the command, without a new interpreter importing Snakemake and memcap
        again (~0.9 CPU-s of each start). Only for a copy that runs this process's code (_runs_this_code);
        the environment, working directory, sys.path and signal handlers are put back afterwards."""
        import contextlib
        import io
        import signal

        from infra_helpers import code_env
        from snakemake.cli import args_to_api, parse_args

        out, cwd, environ, path = io.StringIO(), os.getcwd(), dict(os.environ), list(sys.path)
        handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            os.environ.update({"PATH": f"{BIN}:{os.environ['PATH']}", **code_env(self.root)})
            os.chdir(self.root)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                try:
                    parser, parsed = parse_args(list(args))
                    ok = args_to_api(parsed, parser)
                except SystemExit as stop:
                    ok = stop.code in (0, None)
                    print(stop.code if isinstance(stop.code, str) else "", file=out)
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(environ)
            sys.path[:] = path
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
        if not ok:
            raise AssertionError(f"snakemake {' '.join(args)} failed (dry run in the test process):\n"
                                 f"{out.getvalue()[-8000:]}")
        return subprocess.CompletedProcess(["snakemake", *args], 0, stdout=out.getvalue(), stderr="")


def copy_project(root: Path) -> Project:
    """A fresh copy of the repository at `root`, every family at quick."""
    for f in repo_files():
        dest = root / f
        dest.parent.mkdir(parents=True, exist_ok=True)
        if (REPO / f).is_symlink():
            dest.symlink_to(os.readlink(REPO / f))
        else:
            shutil.copy2(REPO / f, dest)
    project = Project(root)
    # Tests shrink the quick presets: every family at quick, whatever the published scales are
    project.edit_params(lambda p: p.update(scale={family: "quick" for family in p["scale"]}))
    return project


@pytest.fixture
def project(tmp_path) -> Project:
    return copy_project(tmp_path / "memcap")


def built_once(tmp_path_factory, name: str, build) -> Path:
    """A folder that `build(folder)` fills once per test session, shared by the pytest-xdist workers:
    the first that asks builds it under a file lock, the others wait there and reuse it (or fail
    with the builder's error). Tests only read it; one that changes anything works on a copy."""
    import fcntl
    import time

    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)                 # the other worker waits here while one builds
        failed = shared / "failed"
        if failed.exists():
            pytest.fail(f"{name} failed to build (in the other worker):\n{failed.read_text()}")
        if not (shared / "built").exists():
            start = time.perf_counter()
            try:
                build(shared)
            except BaseException as e:
                failed.write_text(str(e)[-6000:])
                raise
            (shared / "built").write_text(f"{time.perf_counter() - start:.1f} s\n")
    return shared


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory) -> Project:
    """One `snakemake report` on a tiny grid of every family (test_report_pipeline.tiny_report), shared
    by the end-to-end tests that only read its outputs and ask Snakemake what is left (`-n`). A test
    that changes anything works on a copy (`shutil.copytree(pipeline.root, ...)`), never on it."""
    from test_assumptions_pipeline import BPE

    if not (BPE / "gpt2.tiktoken").exists():
        pytest.skip("SKIPPED: data/gpt2-bpe not fetched (tools/fetch-gpt2-bpe.sh); the assumptions family needs it")

    def build(shared: Path) -> None:
        from fixtures_assumptions import hf_cache
        from infra_helpers import code_env
        from test_report_pipeline import tiny_report

        project = copy_project(shared / "memcap")
        cache = str(hf_cache(shared / "hub"))
        project.edit_params(lambda p: tiny_report(p, cache))
        project.snakemake("report", env=code_env(project.root))

    return Project(built_once(tmp_path_factory, "shared-pipeline", build) / "memcap")


@pytest.fixture(scope="session")
def pipeline_left(pipeline, tmp_path_factory) -> str:
    """What `snakemake -n all` says of the shared pipeline, asked once per session: every family's
    target (and the report's) is part of `all`, so each family's end-to-end test reads it for
    "Nothing to be done" instead of starting Snakemake on its own target (~2 CPU-s each)."""
    from infra_helpers import code_env

    def build(shared: Path) -> None:
        dry = pipeline.snakemake("-n", "all", env=code_env(pipeline.root))
        (shared / "dry-run.log").write_text(dry.stdout + dry.stderr)

    return (built_once(tmp_path_factory, "shared-pipeline-dry-run", build) / "dry-run.log").read_text()


@pytest.fixture(scope="session")
def published_clone(tmp_path_factory) -> Path:
    """A `git clone` of this repository restored from its published DVC remote by the project's pull
    command (`tools/dvc_pull.py`, as `make pull` runs it), once per session; its output is kept in
    `pull.log` beside the clone. Read it, or `cp -a` it (mtimes kept, so Snakemake agrees)."""
    from infra_helpers import code_env

    def build(shared: Path) -> None:
        clone = shared / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        shutil.copytree(REPO / "data" / "gpt2-bpe", clone / "data" / "gpt2-bpe")   # what make setup fetches
        pulled = Project(clone).run("python", "tools/dvc_pull.py", env=code_env(clone))
        (shared / "pull.log").write_text(pulled.stdout)

    return built_once(tmp_path_factory, "published-clone", build) / "clone"


@pytest.fixture
def restored(published_clone, tmp_path) -> Project:
    """A copy of the session's clone restored from the published remote, for a test that changes it."""
    root = tmp_path / "clone"
    subprocess.run(["cp", "-a", str(published_clone), str(root)], check=True)   # mtimes kept: Snakemake agrees
    return Project(root)


def log_of(run_path: str) -> str:
    """A training job's log: results/<family>/runs/<name>.parquet -> logs/<family>/<name>.log."""
    family, name = run_path.removeprefix("results/").split("/runs/")
    return f"logs/{family}/{name.removesuffix('.parquet')}.log"


def tiny_mlt(params: dict, sweeps: tuple[str, ...] = ("scale_head_shared",)) -> None:
    """Shrink the MLT quick preset to a few seconds: 2 seeds, 2 values, 1 dataset size per sweep."""
    q = params["mlt_synthetic"]["quick"]
    q["seeds"] = [0, 1]
    q["defaults"].update(input_dim=8, context_size=4, heads=2, min_steps=40, epochs=1, eval_every=20)
    q["sweeps"] = {name: {**q["sweeps"][name], "values": q["sweeps"][name]["values"][:2],
                          "dataset_sizes": [64]} for name in sweeps}


def tiny_capacity(p: dict) -> None:
    """Two architectures, two seeds, at most 4 probes a seed, a fraction of a second a probe."""
    training = {"lr": 2.0e-2, "batch_size": 64, "epochs": 1, "min_steps": 300, "eval_every": 50, "early_stop": True}
    p["capacity"]["quick"].update(seeds=[0, 1], heads=1, head_dim=2, heads_grid=[1, 2], head_dim_grid=[2],
                                  start_bits=0.05, pool=128, rel_tol=1.0, max_probes=4, training=training)


def preempted_on_call(n: int, real, calls: list, label):
    """A stand-in for `real` that records label(*args) of every call and raises KeyboardInterrupt (a
    SLURM preemption) on the n-th one."""
    def wrapper(*args, **kwargs):
        calls.append(label(*args))
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    return wrapper
