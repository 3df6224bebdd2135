# MLT synthetic sweeps (Mahdavi et al. 2024): Figs 2a, 2b, 2c, 4, 5 and the raw data of Fig 3.
# One training job per (sweep, value, T); all seeds of a grid point train together in that job.
from memcap import mlt_sweeps

MLT = "results/mlt_synthetic"
MLT_POINTS = mlt_sweeps.grid_points(config)
MLT_PRESET = memcap_config.preset(config, "mlt_synthetic")
MLT_ANALYSIS = [s for s in MLT_PRESET["sweeps"] if mlt_sweeps.sweep_settings(config, s)["analysis"]]
MLT_RUNS = [f"{MLT}/runs/{s}/{v}/T{t}.parquet" for s, v, t in MLT_POINTS]
MLT_ATTENTION = [f"{MLT}/attention/{s}/{v}/T{t}.parquet" for s, v, t in MLT_POINTS if s in MLT_ANALYSIS]
MLT_FIGURES = [f"figures/mlt_{fig}.{ext}" for fig in mlt_sweeps.FIGURES for ext in ("png", "pdf")]
MLT_TRAIN_CMD = (
    "{MEMCAP} mlt-train {PARAMS_ARGS} --threads {threads} --sweep {wildcards.sweep} "
    "--value {wildcards.value} --dataset-size {wildcards.T} "
    "--checkpoint checkpoints/mlt_synthetic/{wildcards.sweep}_{wildcards.value}_T{wildcards.T}.pt"
)


wildcard_constraints:
    value=r"\d+",
    T=r"\d+",


rule mlt_synthetic:
    """Target of the family (DVC stage `mlt_synthetic`): every run, the table and the figures."""
    input:
        MLT_RUNS,
        MLT_ATTENTION,
        f"{MLT}/runs.parquet",
        f"{MLT}/summary.md",
        MLT_FIGURES,


rule mlt_train:
    """Train every seed of one grid point; one Parquet row per seed."""
    output:
        f"{MLT}/runs/{{sweep}}/{{value}}/T{{T}}.parquet",
    log:
        "logs/mlt_synthetic/{sweep}/{value}/T{T}.log",
    benchmark:
        "logs/mlt_synthetic/{sweep}/{value}/T{T}.benchmark.tsv"
    wildcard_constraints:
        sweep=f"(?!(?:{never_match(MLT_ANALYSIS)})/)[a-z0-9_]+",
    params:
        settings=lambda w: mlt_sweeps.point_settings(config, w.sweep),  # reruns when they change
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        MLT_TRAIN_CMD + " --out {output} > {log} 2>&1"


rule mlt_train_with_attention:
    """Saturation runs (Fig 3): as mlt_train, plus the max attention weight per example and head."""
    output:
        runs=f"{MLT}/runs/{{sweep}}/{{value}}/T{{T}}.parquet",
        attention=f"{MLT}/attention/{{sweep}}/{{value}}/T{{T}}.parquet",
    log:
        "logs/mlt_synthetic/{sweep}/{value}/T{T}.log",
    benchmark:
        "logs/mlt_synthetic/{sweep}/{value}/T{T}.benchmark.tsv"
    wildcard_constraints:
        sweep=never_match(MLT_ANALYSIS),
    params:
        settings=lambda w: mlt_sweeps.point_settings(config, w.sweep),
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        MLT_TRAIN_CMD + " --out {output.runs} --analysis-out {output.attention} > {log} 2>&1"


rule mlt_aggregate:
    """One tidy table of every run of the active preset (schema: memcap.mlt_report.RUN_COLUMNS)."""
    input:
        MLT_RUNS,
    output:
        runs=f"{MLT}/runs.parquet",
        metrics=f"{MLT}/metrics.json",
    log:
        "logs/mlt_synthetic/aggregate.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} mlt-aggregate {PARAMS_ARGS} --out {output.runs} --metrics {output.metrics} {input} > {log} 2>&1"


rule mlt_figures:
    """Seaborn figures (PNG and PDF), the Fig 2a linear fits and the markdown run summary."""
    input:
        f"{MLT}/runs.parquet",
    output:
        MLT_FIGURES,
        table=f"{MLT}/summary.md",
        fits=f"{MLT}/fits.parquet",
    log:
        "logs/mlt_synthetic/figures.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} mlt-figures {PARAMS_ARGS} --runs {input} --figdir figures --table {output.table} "
        "--fits {output.fits} > {log} 2>&1"
