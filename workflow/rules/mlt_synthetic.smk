# MLT synthetic sweeps (Mahdavi et al. 2024): Figs 2a, 2b, 2c, 4, 5 and the raw data of Fig 3.
# One training job per (sweep, value, T); all seeds of a grid point train together in that job.
# Paths come from the library's names (memcap.mlt.grid, .aggregate, .figures).
from memcap.mlt import aggregate as mlt_aggregate
from memcap.mlt import figures as mlt_figures
from memcap.mlt import grid as mlt_grid

MLT = "results/mlt_synthetic"
MLT_PRESET = memcap_params.preset(config, mlt_grid.FAMILY)
MLT_POINTS = mlt_grid.grid_points(MLT_PRESET)
MLT_ANALYSIS = mlt_grid.analysis_sweeps(MLT_PRESET)
MLT_RUNS = [f"{MLT}/runs/{s}/{v}/T{t}.parquet" for s, v, t in MLT_POINTS]
MLT_ATTENTION = [f"{MLT}/attention/{s}/{v}/T{t}.parquet" for s, v, t in MLT_POINTS if s in MLT_ANALYSIS]
MLT_TABLE = {name: f"{MLT}/tables/{file}" for name, file in mlt_aggregate.TABLES.items()}
MLT_FIGURES = [f"figures/mlt_synthetic/{name}.{ext}" for name in mlt_figures.NAMES for ext in mlt_figures.FORMATS]


wildcard_constraints:
    value=r"\d+",
    T=r"\d+",


rule mlt_synthetic:
    """Target of the family (DVC stage `mlt_synthetic`): every run, the tables, metrics and figures."""
    input:
        MLT_RUNS,
        MLT_ATTENTION,
        list(MLT_TABLE.values()),
        f"{MLT}/metrics.json",
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
        settings=lambda w: mlt_grid.point_settings(MLT_PRESET, w.sweep),  # reruns when they change
    threads: res("train", "mlt_synthetic")["threads"]
    resources:
        mem_mb=res("train", "mlt_synthetic")["mem_mb"],
        runtime=res("train", "mlt_synthetic")["runtime"],
        gpu=res("train", "mlt_synthetic")["gpu"],
    shell:
        "memcap mlt train --threads {threads} --sweep {wildcards.sweep} "
        "--value {wildcards.value} --dataset-size {wildcards.T} "
        "--checkpoint checkpoints/mlt_synthetic/{wildcards.sweep}/{wildcards.value}/T{wildcards.T}.pt "
        "--out {output} > {log} 2>&1"


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
        settings=lambda w: mlt_grid.point_settings(MLT_PRESET, w.sweep),
    threads: res("train", "mlt_synthetic")["threads"]
    resources:
        mem_mb=res("train", "mlt_synthetic")["mem_mb"],
        runtime=res("train", "mlt_synthetic")["runtime"],
        gpu=res("train", "mlt_synthetic")["gpu"],
    shell:
        "memcap mlt train --threads {threads} --sweep {wildcards.sweep} "
        "--value {wildcards.value} --dataset-size {wildcards.T} "
        "--checkpoint checkpoints/mlt_synthetic/{wildcards.sweep}/{wildcards.value}/T{wildcards.T}.pt "
        "--out {output.runs} --attention-out {output.attention} > {log} 2>&1"


rule mlt_aggregate:
    """One tidy table of every run of the active preset (schema: memcap.mlt.aggregate.RUN_COLUMNS)."""
    input:
        MLT_RUNS,
    output:
        runs=MLT_TABLE["runs"],
        metrics=f"{MLT}/metrics.json",
    log:
        "logs/mlt_synthetic/aggregate.log",
    threads: res("light", "mlt_synthetic")["threads"]
    resources:
        mem_mb=res("light", "mlt_synthetic")["mem_mb"],
        runtime=res("light", "mlt_synthetic")["runtime"],
        gpu=0,
    shell:
        "memcap mlt aggregate --out {output.runs} --metrics {output.metrics} {input} > {log} 2>&1"


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
    threads: res("light", "mlt_synthetic")["threads"]
    resources:
        mem_mb=res("light", "mlt_synthetic")["mem_mb"],
        runtime=res("light", "mlt_synthetic")["runtime"],
        gpu=0,
    shell:
        "memcap mlt figures --runs {input} --figures {output.figures} "
        "--summary {output.summary} --fits {output.fits} > {log} 2>&1"
