# The reproduction report (issue 7): claims scorecard, bits per parameter, capacity by search, and one
# self-contained HTML page. Reads every family's aggregate tables (declared as inputs, so `snakemake
# report` builds everything upstream); only the capacity search trains (its own small MLT models).
from memcap.report import capacity as report_capacity

REP = "results/report"
REP_CAP = report_capacity.architectures(config)
REP_CAP_RUNS = [f"{REP}/capacity/H{h}_dh{dh}.parquet" for h, dh in REP_CAP]
REP_FIGURES = [f"figures/report_{name}.{ext}" for name in ("bits", "capacity") for ext in ("png", "pdf")]
# Scorecard inputs, NAME=PATH (names: memcap.report.claims); every one is a family's aggregate output.
REP_TABLES = {
    "mlt_runs": f"{MLT}/runs.parquet",
    "theory_construct": f"{TH}/construct.parquet",
    "theory_rank_bounds": f"{TH}/rank_bounds.parquet",
    "theory_saturation": f"{TH}/saturation.parquet",
    "assumption_checks": f"{ASM}/checks.parquet",
    "dpc_summary": f"{DPC}/summary.parquet",
    "dpc_theory": f"{DPC}/theory.parquet",
    "capacity": f"{REP}/capacity.parquet",
}
# Markdown tables of the families shown in the HTML page.
REP_MD = {"MLT runs summary": f"{MLT}/summary.md", "MLT theory summary": f"{TH}/summary.md",
          "DPC fitted slopes": f"{DPC}/fits.md", "Table 1": f"{ASM}/table1.md", "Table 3": f"{ASM}/table3.md"}
REP_PNGS = [f for f in MLT_FIGURES + TH_FIGURES + TH_FIG3 + DPC_FIGURES + ASM_FIG + REP_FIGURES
            if f.endswith(".png")]


rule report:
    """Target (last of `rule all`; DVC stage `report`): scorecard, bits, capacity and the HTML report."""
    input:
        f"{REP}/scorecard.parquet",
        f"{REP}/scorecard.md",
        f"{REP}/bits.parquet",
        f"{REP}/capacity.parquet",
        f"{REP}/index.html",


rule report_capacity:
    """Bracketing search over T for one (H, d_h): the largest T that every seed memorizes."""
    output:
        f"{REP}/capacity/H{{heads}}_dh{{head_dim}}.parquet",
    log:
        "logs/report/capacity/H{heads}_dh{head_dim}.log",
    benchmark:
        "logs/report/capacity/H{heads}_dh{head_dim}.benchmark.tsv"
    wildcard_constraints:
        heads=r"\d+",
        head_dim=r"\d+",
    params:
        settings=lambda w: memcap_config.preset(config, "report")["capacity"],  # reruns when they change
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        "{MEMCAP} report-capacity {PARAMS_ARGS} --threads {threads} --heads {wildcards.heads} "
        "--head-dim {wildcards.head_dim} --out {output} > {log} 2>&1"


rule report_capacity_aggregate:
    """One capacity table and the capacity-vs-H / vs-d_h figure beside both papers' bounds."""
    input:
        REP_CAP_RUNS,
    output:
        table=f"{REP}/capacity.parquet",
        figure=multiext("figures/report_capacity", ".png", ".pdf"),
    log:
        "logs/report/capacity_aggregate.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} report-capacity-aggregate {PARAMS_ARGS} --out {output.table} --figure figures/report_capacity "
        "{input} > {log} 2>&1"


rule report_scorecard:
    """One row per paper claim: statistic, its written test, verdict, scale (Parquet + markdown)."""
    input:
        **REP_TABLES,
    output:
        table=f"{REP}/scorecard.parquet",
        md=f"{REP}/scorecard.md",
    log:
        "logs/report/scorecard.log",
    params:
        inputs=" ".join(f"--input {k}={v}" for k, v in REP_TABLES.items()),
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} report-scorecard {PARAMS_ARGS} {params.inputs} --out {output.table} --md {output.md} "
        "> {log} 2>&1"


rule report_bits:
    """Bits per parameter of both families' trained models, with the published reference lines."""
    input:
        mlt=f"{MLT}/runs.parquet",
        dpc=f"{DPC}/runs.parquet",
    output:
        table=f"{REP}/bits.parquet",
        md=f"{REP}/bits.md",
        figure=multiext("figures/report_bits", ".png", ".pdf"),
    log:
        "logs/report/bits.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} report-bits {PARAMS_ARGS} --mlt-runs {input.mlt} --dpc-runs {input.dpc} --out {output.table} "
        "--md {output.md} --figure figures/report_bits > {log} 2>&1"


rule report_html:
    """The self-contained HTML page: scorecard, bits, capacity, every family figure inlined."""
    input:
        scorecard=f"{REP}/scorecard.parquet",
        bits=f"{REP}/bits.md",
        capacity=f"{REP}/capacity.parquet",
        tables=list(REP_MD.values()),
        figures=REP_PNGS,
    output:
        f"{REP}/index.html",
    log:
        "logs/report/html.log",
    params:
        tables=" ".join(f"--table '{k}={v}'" for k, v in REP_MD.items()),
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} report-html {PARAMS_ARGS} --scorecard {input.scorecard} --bits-md {input.bits} "
        "--capacity {input.capacity} {params.tables} --out {output} {input.figures} > {log} 2>&1"
