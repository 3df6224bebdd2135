# MLT theory made executable: CONSTRUCT (Theorem 1), GD vs construction vs bound, rank(Z) bounds
# (Props 2, 5), and Fig 3 from the saturation sweeps that mlt_synthetic.smk trains (MLT_ATTENTION, the
# sweeps with `analysis: true`). Include after mlt_synthetic.smk. Paths come from the library's names.
from memcap.theory import aggregate as th_aggregate
from memcap.theory import figures as th_figures
from memcap.theory.grid import FAMILY as TH_FAMILY

TH = "results/theory"
TH_PRESET = memcap_params.preset(config, TH_FAMILY)
TH_TABLE = {name: f"{TH}/tables/{file}" for name, file in th_aggregate.TABLES.items()}
TH_FIGURES = [f"figures/theory/{name}.{ext}" for name in th_figures.FIGURES for ext in th_figures.FORMATS]


rule theory:
    """Target of the family (DVC stage `theory`): the tables, the summary and the figures."""
    input:
        list(TH_TABLE.values()),
        TH_FIGURES,


rule theory_construct:
    """(a) CONSTRUCT over the grid; each point verified through MLTAttention's forward pass."""
    output:
        TH_TABLE["construct"],
    log:
        "logs/theory/construct.log",
    params:
        settings={k: TH_PRESET[k] for k in ("seeds", "rank_rtol", "construct")},  # reruns when they change
    threads: threads_of("light", "theory")
    resources: **res("light", "theory")
    shell:
        "memcap theory construct --threads {threads} --out {output} > {log} 2>&1"


rule theory_gd:
    """(b) the same datasets trained with the MLT trainer (regression); trained rank(Z) (Prop 2).
    Finished (H, T) cases are kept under checkpoints/theory/ until both tables are written."""
    output:
        runs=TH_TABLE["gd"],
        ranks=TH_TABLE["trained_ranks"],
    log:
        "logs/theory/gd.log",
    params:
        settings={k: TH_PRESET[k] for k in ("seeds", "rank_rtol", "gradient_descent")},
    threads: threads_of("train", "theory")
    resources: **res("train", "theory")
    shell:
        "memcap theory gd --threads {threads} --out {output.runs} "
        "--ranks-out {output.ranks} --checkpoint checkpoints/theory/gd > {log} 2>&1"


rule theory_bounds:
    """(c) rank(Z) under random and constructed weights against Props 2 and 5."""
    output:
        TH_TABLE["rank_bounds"],
    log:
        "logs/theory/bounds.log",
    params:
        settings={k: TH_PRESET[k] for k in ("seeds", "rank_rtol", "bounds")},
    threads: threads_of("light", "theory")
    resources: **res("light", "theory")
    shell:
        "memcap theory bounds --threads {threads} --out {output} > {log} 2>&1"


rule theory_saturation:
    """Fig 3's table (saturated heads per example, max attention) from the MLT attention Parquets."""
    input:
        MLT_ATTENTION,
    output:
        TH_TABLE["saturation"],
    log:
        "logs/theory/saturation.log",
    params:
        settings=TH_PRESET["saturation"],
    threads: threads_of("light", "theory")
    resources: **res("light", "theory")
    shell:
        "memcap theory saturation --attention {input} --out {output} > {log} 2>&1"


rule theory_summary:
    """The family's markdown summary, every number computed from its tables."""
    input:
        construct=TH_TABLE["construct"],
        gd=TH_TABLE["gd"],
        rank_bounds=TH_TABLE["rank_bounds"],
        trained_ranks=TH_TABLE["trained_ranks"],
        saturation=TH_TABLE["saturation"],
    output:
        TH_TABLE["summary"],
    log:
        "logs/theory/summary.log",
    threads: threads_of("light", "theory")
    resources: **res("light", "theory")
    shell:
        "memcap theory summary --construct {input.construct} --gd {input.gd} "
        "--rank-bounds {input.rank_bounds} --trained-ranks {input.trained_ranks} --saturation {input.saturation} "
        "--out {output} > {log} 2>&1"


rule theory_figures:
    """construct, capacity, rank_bounds and Fig 3 (PNG and PDF)."""
    input:
        construct=TH_TABLE["construct"],
        gd=TH_TABLE["gd"],
        rank_bounds=TH_TABLE["rank_bounds"],
        trained_ranks=TH_TABLE["trained_ranks"],
        attention=MLT_ATTENTION,
        attention_runs=MLT_ATTENTION_RUNS,
    output:
        in_report(TH_FIGURES, "theory"),
    log:
        "logs/theory/figures.log",
    params:
        fig3=TH_PRESET["saturation"],  # threshold and examples shown: redraw when they change
    threads: threads_of("light", "theory")
    resources: **res("light", "theory")
    shell:
        "memcap theory figures --construct {input.construct} --gd {input.gd} "
        "--rank-bounds {input.rank_bounds} --trained-ranks {input.trained_ranks} --attention {input.attention} "
        "--attention-runs {input.attention_runs} --figures {output} > {log} 2>&1"
