# DPC (Dana, Pydi, Chevaleyre 2025): attention-only transformers memorising a look-up table.
# One training job per (experiment, series value); it trains every x of that curve, repetitions batched.
from memcap.dpc import experiments as dpc_experiments
from memcap.dpc import figures as dpc_figures

DPC = "results/dpc"
DPC_JOBS = dpc_experiments.jobs(config)
DPC_RUNS = [f"{DPC}/runs/{e}/{s}.parquet" for e, s in DPC_JOBS]
DPC_FIGS = dpc_figures.available(memcap_config.preset(config, "dpc")["experiments"]) + ["theory"]
DPC_FIGURES = [f"figures/dpc_{name}.{ext}" for name in DPC_FIGS for ext in ("png", "pdf")]


rule dpc:
    """Target of the family (DVC stage `dpc`): every run, the tables, the fits and the figures."""
    input:
        DPC_RUNS,
        f"{DPC}/runs.parquet",
        f"{DPC}/fits.md",
        f"{DPC}/theory.parquet",
        DPC_FIGURES,


rule dpc_train:
    """Train one curve (every x of one series value); one Parquet row per (x, repetition)."""
    output:
        f"{DPC}/runs/{{experiment}}/{{series}}.parquet",
    log:
        "logs/dpc/{experiment}/{series}.log",
    benchmark:
        "logs/dpc/{experiment}/{series}.benchmark.tsv"
    wildcard_constraints:
        experiment=r"[a-z0-9_]+",
        series=r"all|\d+",
    params:
        settings=lambda w: dpc_experiments.settings(config, w.experiment),  # reruns when they change
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        "{MEMCAP} dpc-train {PARAMS_ARGS} --threads {threads} --experiment {wildcards.experiment} "
        "--series {wildcards.series} --checkpoint checkpoints/dpc/{wildcards.experiment}_{wildcards.series} "
        "--out {output} > {log} 2>&1"


rule dpc_aggregate:
    """One tidy table of every run, and the per-grid-point mean/sd/min/max over repetitions."""
    input:
        DPC_RUNS,
    output:
        runs=f"{DPC}/runs.parquet",
        summary=f"{DPC}/summary.parquet",
        metrics=f"{DPC}/metrics.json",
    log:
        "logs/dpc/aggregate.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} dpc-aggregate {PARAMS_ARGS} --out {output.runs} --summary {output.summary} "
        "--metrics {output.metrics} {input} > {log} 2>&1"


rule dpc_report:
    """Fits of spec §3 (Parquet + markdown slope table) and the per-experiment figures."""
    input:
        runs=f"{DPC}/runs.parquet",
        summary=f"{DPC}/summary.parquet",
    output:
        [f for f in DPC_FIGURES if "dpc_theory." not in f],
        fits=f"{DPC}/fits.parquet",
        fits_md=f"{DPC}/fits.md",
    log:
        "logs/dpc/report.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} dpc-report {PARAMS_ARGS} --runs {input.runs} --summary {input.summary} "
        "--fits {output.fits} --fits-md {output.fits_md} --figdir figures > {log} 2>&1"


rule dpc_theory:
    """Prop 3, Theorem 2 and LS-vs-WLS KL values next to their bounds (spec §4)."""
    output:
        table=f"{DPC}/theory.parquet",
        figure=multiext("figures/dpc_theory", ".png", ".pdf"),
    log:
        "logs/dpc/theory.log",
    params:
        theory=lambda w: memcap_config.preset(config, "dpc")["theory"],
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} dpc-theory {PARAMS_ARGS} --out {output.table} --figdir figures > {log} 2>&1"
