# MLT theory made executable (issue 5): CONSTRUCT (Theorem 1), GD vs construction vs bound, rank(Z)
# bounds (Props 2, 5), and Fig 3 from the saturation sweeps that mlt_synthetic.smk trains
# (MLT_ATTENTION, the sweeps with `analysis: true`). Include after mlt_synthetic.smk.
TH = "results/theory"
TH_SETTINGS = memcap_config.preset(config, "theory")
TH_FIGURES = [f"figures/theory_{name}.{ext}" for name in ("construct", "capacity", "rank_bounds")
              for ext in ("png", "pdf")]
TH_FIG3 = ["figures/mlt_fig3.png", "figures/mlt_fig3.pdf"]


rule theory:
    """Target of the family (DVC stage `theory`): tables, figures, Fig 3 and the summary."""
    input:
        f"{TH}/construct.parquet",
        f"{TH}/gd.parquet",
        f"{TH}/trained_ranks.parquet",
        f"{TH}/rank_bounds.parquet",
        f"{TH}/saturation.parquet",
        f"{TH}/summary.md",
        TH_FIGURES,
        TH_FIG3,


rule theory_construct:
    """(a) CONSTRUCT over the grid; each point verified through MLTAttention's forward pass."""
    output:
        f"{TH}/construct.parquet",
    log:
        "logs/theory/construct.log",
    params:
        settings=TH_SETTINGS,  # reruns when the preset changes
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} theory-construct {PARAMS_ARGS} --threads {threads} --out {output} > {log} 2>&1"


rule theory_gd:
    """(b) the same datasets trained with the spine's trainer (regression); trained rank(Z) (Prop 2)."""
    output:
        runs=f"{TH}/gd.parquet",
        ranks=f"{TH}/trained_ranks.parquet",
    log:
        "logs/theory/gd.log",
    params:
        settings=TH_SETTINGS,
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        "{MEMCAP} theory-gd {PARAMS_ARGS} --threads {threads} --out {output.runs} "
        "--ranks-out {output.ranks} > {log} 2>&1"


rule theory_bounds:
    """(c) rank(Z) under random and constructed weights against Props 2 and 5."""
    output:
        f"{TH}/rank_bounds.parquet",
    log:
        "logs/theory/bounds.log",
    params:
        settings=TH_SETTINGS,
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} theory-bounds {PARAMS_ARGS} --threads {threads} --out {output} > {log} 2>&1"


rule theory_saturation:
    """Fig 3 (saturation map, saturated heads per example, max attention) and its summary table."""
    input:
        MLT_ATTENTION,
    output:
        table=f"{TH}/saturation.parquet",
        figures=TH_FIG3,
    log:
        "logs/theory/saturation.log",
    params:
        settings=TH_SETTINGS["saturation"],
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} theory-saturation {PARAMS_ARGS} --out {output.table} --figure figures/mlt_fig3 "
        "{input} > {log} 2>&1"


rule theory_figures:
    """Construct / capacity / rank-bound figures (PNG and PDF) and the markdown summary."""
    input:
        construct=f"{TH}/construct.parquet",
        gd=f"{TH}/gd.parquet",
        ranks=f"{TH}/trained_ranks.parquet",
        bounds=f"{TH}/rank_bounds.parquet",
        saturation=f"{TH}/saturation.parquet",
    output:
        TH_FIGURES,
        table=f"{TH}/summary.md",
    log:
        "logs/theory/figures.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} theory-figures {PARAMS_ARGS} --construct {input.construct} --gd {input.gd} "
        "--bounds {input.bounds} --trained-ranks {input.ranks} --saturation {input.saturation} "
        "--figdir figures --table {output.table} > {log} 2>&1"
