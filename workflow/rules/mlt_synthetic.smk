# MLT synthetic sweeps (Mahdavi et al. 2024): Figs 2a, 2b, 2c, 4, 5 and the raw data of Fig 3.
# One training job per (sweep, value, T, seed group): a grid point's seeds in jobs of seeds_per_job.
# Paths come from the library's names (memcap.mlt_synthetic.grid, .aggregate, .figures).
from memcap.mlt_synthetic import aggregate as mlt_aggregate
from memcap.mlt_synthetic import figures as mlt_figures
from memcap.mlt_synthetic import grid as mlt_grid
from memcap.mlt_synthetic import packing as mlt_packing

MLT = "results/mlt_synthetic"
MLT_PRESET_NAME = memcap_params.scale_of(config, mlt_grid.FAMILY)
# Each sweep resolved: its settings and the preset they come from (a composite preset takes sweeps
# from quick and paper; its runs keep those presets' names, so one run serves every preset naming it).
MLT_SWEEPS = mlt_grid.resolve(config[mlt_grid.FAMILY], MLT_PRESET_NAME)
MLT_ANALYSIS = mlt_grid.analysis_sweeps(MLT_SWEEPS)
# runs/<source preset>/<sweep>/<value>/T<T>-<settings key>.parquet, one per job (grid point and seed
# group): other settings or seeds never share a path
MLT_NAMES = {job: mlt_grid.run_name(MLT_SWEEPS, *job) for job in mlt_grid.jobs(MLT_SWEEPS)}
MLT_RUNS = [f"{MLT}/runs/{name}" for name in MLT_NAMES.values()]
MLT_ATTENTION = [f"{MLT}/attention/{name}" for job, name in MLT_NAMES.items() if job[0] in MLT_ANALYSIS]
MLT_ATTENTION_RUNS = [f"{MLT}/runs/{name}" for job, name in MLT_NAMES.items() if job[0] in MLT_ANALYSIS]
# Packs (a GPU preset: resources pack_models > 1): the runs missing when the run starts, a sweep's
# grid points and seeds trained as one job each (memcap.mlt_synthetic.packing). A run that exists is in
# no pack, so no pack retrains or deletes it. The process that schedules plans once; a SLURM job's own
# Snakemake reads that plan (MEMCAP_PACK_PLAN) instead of planning from files written since.
MLT_PACKS = mlt_packing.packs_of_run(MLT_SWEEPS, f"{MLT}/runs", f"{MLT}/attention", *pack_sizes(mlt_grid.FAMILY),
                                     main_process=workflow.is_main_process)
MLT_TABLE = {name: f"{MLT}/tables/{file}" for name, file in mlt_aggregate.TABLES.items()}
# A training job's memory: its class's request, or more when its data needs it (memcap.mlt_synthetic.grid.job_mem_mb).
MLT_TRAIN_MEM_MB = lambda w: mlt_grid.job_mem_mb(  # noqa: E731
    mlt_grid.sweep_settings(MLT_SWEEPS, w.sweep), int(w.value), int(w.T), res("train", "mlt_synthetic")["mem_mb"])
MLT_FIGURES = [f"figures/mlt_synthetic/{name}.{ext}" for name in mlt_figures.NAMES for ext in mlt_figures.FORMATS]


wildcard_constraints:
    value=r"\d+",
    T=r"\d+",
    preset=r"[a-z][a-z0-9_]*",
    key=KEY_PATTERN,


rule mlt_synthetic:
    """Target of the family (DVC stage `mlt_synthetic`): every run, the tables, metrics and figures."""
    input:
        MLT_RUNS,
        MLT_ATTENTION,
        list(MLT_TABLE.values()),
        f"{MLT}/metrics.json",
        MLT_FIGURES,


# A job alone and a pack run the same command, with the same params (a literal "", or a function of the
# outputs for the saturation sweeps): a run file's Snakemake record is then the same whichever made
# it, so a packed run is not retrained once the next run plans no pack (test_mlt_pipeline.py).
# Checkpoints: checkpoints/mlt_synthetic/<run name>.pt alone, .../packs/<pack id>.pt for a pack.
MLT_TRAIN_SHELL = "memcap mlt_synthetic train-pack --threads {threads} --runs {output.runs}{params.attention} > {log} 2>&1"


rule mlt_train:
    """Train every seed of one grid point; one Parquet row per seed."""
    output:
        runs=f"{MLT}/runs/{{preset}}/{{sweep}}/{{value}}/T{{T}}-{{key}}.parquet",
    log:
        "logs/mlt_synthetic/{preset}/{sweep}/{value}/T{T}-{key}.log",
    benchmark:
        "logs/mlt_synthetic/{preset}/{sweep}/{value}/T{T}-{key}.benchmark.tsv"
    params:
        attention="",
    threads: threads_of("train", "mlt_synthetic")
    resources: **res("train", "mlt_synthetic", mem_mb=MLT_TRAIN_MEM_MB)
    shell:
        MLT_TRAIN_SHELL


# The saturation sweeps (Fig 3): the same job, also writing the max attention weight per example and
# head; for their run files this rule wins (ruleorder), every other sweep has no attention file.
use rule mlt_train as mlt_train_with_attention with:
    output:
        runs=f"{MLT}/runs/{{preset}}/{{sweep}}/{{value}}/T{{T}}-{{key}}.parquet",
        attention=f"{MLT}/attention/{{preset}}/{{sweep}}/{{value}}/T{{T}}-{{key}}.parquet",
    wildcard_constraints:
        sweep=never_match(MLT_ANALYSIS),
    params:
        attention=mlt_packing.attention_arg,


ruleorder: mlt_train_with_attention > mlt_train


# One rule per pack (its outputs: its runs' files, their usual names). Snakemake prefers a rule without
# wildcards, so these, not mlt_train, make the packed runs. Every output is written when the whole pack
# is done; a job it finished before a failure or a kill waits in checkpoints/ and is not trained again.
for _pack in MLT_PACKS:
    _pack_mem_mb = mlt_packing.pack_mem_mb(mlt_grid.sweep_settings(MLT_SWEEPS, _pack.sweep), _pack,
                                           res("train", "mlt_synthetic")["mem_mb"])

    rule:
        name:
            f"mlt_train_pack_{_pack.id}"
        output:
            runs=[f"{MLT}/runs/{name}" for name in _pack.runs],
            attention=[f"{MLT}/attention/{name}" for name in _pack.runs] if _pack.sweep in MLT_ANALYSIS else [],
        log:
            f"logs/mlt_synthetic/packs/{_pack.sweep}-{_pack.id}.log",
        benchmark:
            f"logs/mlt_synthetic/packs/{_pack.sweep}-{_pack.id}.benchmark.tsv"
        params:
            attention=mlt_packing.attention_arg if _pack.sweep in MLT_ANALYSIS else "",
        threads: threads_of("train", "mlt_synthetic")
        resources: **res("train", "mlt_synthetic", mem_mb=_pack_mem_mb)
        shell:
            MLT_TRAIN_SHELL


rule mlt_aggregate:
    """One tidy table of every run of the active preset (schema: memcap.mlt_synthetic.aggregate.RUN_COLUMNS)."""
    input:
        MLT_RUNS,
    output:
        runs=MLT_TABLE["runs"],
        metrics=f"{MLT}/metrics.json",
    params:
        labels={sweep: s["label"] for sweep, s in MLT_SWEEPS.items()},  # reruns when a label (a `why`) changes
    log:
        "logs/mlt_synthetic/aggregate.log",
    threads: threads_of("light", "mlt_synthetic")
    resources: **res("light", "mlt_synthetic")
    shell:
        "memcap mlt_synthetic aggregate --out {output.runs} --metrics {output.metrics} {input} > {log} 2>&1"


rule mlt_figures:
    """Seaborn figures (PNG and PDF), the Fig 2a linear fits and the markdown run summary."""
    input:
        MLT_TABLE["runs"],
    output:
        figures=in_report(MLT_FIGURES, "mlt_synthetic"),
        summary=in_report(MLT_TABLE["summary"], "mlt_synthetic"),
        fits=MLT_TABLE["fits"],
    log:
        "logs/mlt_synthetic/figures.log",
    threads: threads_of("light", "mlt_synthetic")
    resources: **res("light", "mlt_synthetic")
    shell:
        "memcap mlt_synthetic figures --runs {input} --figures {output.figures} "
        "--summary {output.summary} --fits {output.fits} > {log} 2>&1"
