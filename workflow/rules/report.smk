# The reproduction report: claims scorecard, bits per parameter and one self-contained HTML page. It only
# reads the families' tables and figures (declared as inputs, so `snakemake report` builds everything
# upstream) and trains nothing: the capacity search is its own family (capacity.smk).
from memcap.report import claims as report_claims
from memcap.report import figures as report_figures

REP = "results/report"
REP_FIGURES = [f"figures/report/{name}.{ext}" for name in report_figures.FIGURES for ext in ("png", "pdf")]
# Scorecard inputs, NAME=PATH: the names and their families' tables are declared once, in
# memcap.report.claims.INPUTS (family, table name); each family's rule file names its tables' paths.
FAMILY_TABLES = {"mlt_synthetic": MLT_TABLE, "theory": TH_TABLE, "dpc": DPC_TABLE, "assumptions": ASM_TABLE,
                 "capacity": CAP_TABLE}
REP_TABLES = {name: FAMILY_TABLES[family][table] for name, (family, table) in report_claims.INPUTS.items()}
# Markdown tables of the families shown in the HTML page.
REP_MD = {"MLT runs summary": MLT_TABLE["summary"], "MLT theory summary": TH_TABLE["summary"],
          "DPC fitted slopes": DPC_TABLE["fits_md"], "Table 1": ASM_TABLE["table1_md"],
          "Table 3": ASM_TABLE["table3_md"], "DPC fidelity (ours vs the authors)": DPC_TABLE["fidelity_md"],
          "Provenance": f"{REP}/tables/provenance.md", "How each result was made": f"{REP}/tables/how_made.md"}
REP_PNGS = [f for f in MLT_FIGURES + TH_FIGURES + DPC_FIGURES + ASM_FIGURES + CAP_FIGURES + REP_FIGURES
            if f.endswith(".png")]


rule report:
    """Target (last of `rule all`; DVC stage `report`): scorecard, bits and the HTML report."""
    input:
        f"{REP}/tables/scorecard.parquet",
        f"{REP}/tables/scorecard.md",
        f"{REP}/metrics.json",
        f"{REP}/tables/scorecard_plot.csv",
        f"{REP}/tables/bits.parquet",
        f"{REP}/tables/bits.md",
        f"{REP}/tables/provenance.md",
        f"{REP}/tables/how_made.md",
        REP_FIGURES,
        f"{REP}/index.html",


rule report_scorecard:
    """One row per claim: statistic with its 95% interval, its written test, verdict, scale (Parquet +
    markdown), the verdict counts (metrics.json, `dvc metrics`) and the statistic per claim (`dvc plots`)."""
    input:
        **REP_TABLES,
    output:
        table=f"{REP}/tables/scorecard.parquet",
        md=in_report(f"{REP}/tables/scorecard.md", "report"),
        metrics=f"{REP}/metrics.json",
        plot=f"{REP}/tables/scorecard_plot.csv",
    log:
        "logs/report/scorecard.log",
    params:
        inputs=" ".join(f"--input {k}={v}" for k, v in REP_TABLES.items()),
    threads: threads_of("light")
    resources: **res("light")
    shell:
        "memcap report scorecard {params.inputs} --out {output.table} --md {output.md} "
        "--metrics {output.metrics} --plot-data {output.plot} > {log} 2>&1"


rule report_provenance:
    """Per family, the commits and package versions of its results (their tables' provenance)."""
    input:
        **REP_TABLES,
        notes=[f for f in ["published/provenance-notes.yaml"] if os.path.exists(f)],   # explains legacy results
    output:
        table=f"{REP}/tables/provenance.parquet",
        md=in_report(f"{REP}/tables/provenance.md", "report"),
    log:
        "logs/report/provenance.log",
    params:
        inputs=" ".join(f"--input {k}={v}" for k, v in REP_TABLES.items()),
    threads: threads_of("light")
    resources: **res("light")
    shell:
        "memcap report provenance {params.inputs} --out {output.table} --md {output.md} > {log} 2>&1"


rule report_how_made:
    """How each result was made: per family, sweep and device the seeds, jobs, hours, packs and commits
    that the run files record."""
    input:
        mlt=MLT_TABLE["runs"],
        dpc=DPC_TABLE["runs"],
        capacity=CAP_TABLE["probes"],
    output:
        table=f"{REP}/tables/how_made.parquet",
        md=in_report(f"{REP}/tables/how_made.md", "report"),
    log:
        "logs/report/how_made.log",
    threads: threads_of("light")
    resources: **res("light")
    shell:
        "memcap report how-made --mlt-runs {input.mlt} --dpc-runs {input.dpc} --capacity-probes {input.capacity} "
        "--out {output.table} --md {output.md} > {log} 2>&1"


rule report_bits:
    """Bits per parameter of both families' trained models, with the published reference lines."""
    input:
        mlt=f"{MLT}/tables/runs.parquet",
        dpc=f"{DPC}/tables/runs.parquet",
    output:
        table=f"{REP}/tables/bits.parquet",
        md=in_report(f"{REP}/tables/bits.md", "report"),
        figures=in_report(REP_FIGURES, "report"),
    log:
        "logs/report/bits.log",
    threads: threads_of("light")
    resources: **res("light")
    shell:
        "memcap report bits --mlt-runs {input.mlt} --dpc-runs {input.dpc} --out {output.table} "
        "--md {output.md} --figures {output.figures} > {log} 2>&1"


rule report_html:
    """The self-contained HTML page: scorecard, bits, capacity, every family figure inlined."""
    input:
        scorecard=f"{REP}/tables/scorecard.parquet",
        bits=f"{REP}/tables/bits.md",
        capacity=CAP_TABLE["capacity"],
        capacity_laws=CAP_TABLE["laws"],
        tables=list(REP_MD.values()),
        figures=REP_PNGS,
    output:
        f"{REP}/index.html",
    log:
        "logs/report/html.log",
    params:
        tables=" ".join(f"--table '{k}={v}'" for k, v in REP_MD.items()),
    threads: threads_of("light")
    resources: **res("light")
    shell:
        "memcap report html --scorecard {input.scorecard} --bits-md {input.bits} "
        "--capacity {input.capacity} --capacity-laws {input.capacity_laws} {params.tables} --figures {input.figures} --out {output} > {log} 2>&1"
