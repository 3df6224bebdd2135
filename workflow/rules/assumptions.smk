# MLT assumption checks (Mahdavi et al. 2024, §4.4, §5.1, App. J): Table 1, Fig 1, Table 3, Asm 3.
# One job per track (photos, digits, imagenet, gpt2, bert); the digits ViT is trained by its own job first.
# imagenet reads data/imagenet-sample (tools/fetch-imagenet-sample.sh): an input only when present; absent,
# its rows say SKIPPED.
# Paths come from the library's names: tracks (grid), tables (aggregate.TABLES), figures (FIGURES).
from memcap.assumptions import aggregate as asm_aggregate
from memcap.assumptions import figures as asm_figures
from memcap.assumptions import grid as asm_grid

ASM = "results/assumptions"
ASM_PRESET = memcap_params.preset(config, asm_grid.FAMILY)
ASM_TRACKS = list(asm_grid.TRACKS)
ASM_TABLE = {name: f"{ASM}/tables/{file}" for name, file in asm_aggregate.TABLES.items()}
ASM_PAPER_TABLES = [path for name, path in ASM_TABLE.items() if name != "checks"]
ASM_FIGURES = [f"figures/assumptions/{name}.{ext}" for name in asm_figures.FIGURES for ext in asm_figures.FORMATS]
ASM_DIGITS_VIT = f"{ASM}/runs/digits_vit.pt"
ASM_METRICS = f"{ASM}/metrics.json"


rule assumptions:
    """Target of the family (DVC stage `assumptions`): every track's checks, the tables, Fig 1, metrics."""
    input:
        expand(f"{ASM}/runs/{{kind}}/{{track}}.parquet", kind=("checks", "curves"), track=ASM_TRACKS),
        list(ASM_TABLE.values()),
        ASM_FIGURES,
        ASM_METRICS,


rule assumptions_digits_vit:
    """Train the small digits ViT (the 'trained' row of the digits track); its accuracy is the metrics."""
    output:
        model=ASM_DIGITS_VIT,
        metrics=ASM_METRICS,
    log:
        "logs/assumptions/digits_vit.log",
    benchmark:
        "logs/assumptions/digits_vit.benchmark.tsv"
    params:
        settings=ASM_PRESET["vision"]["digits"],  # reruns when they change
    threads: threads_of("train", "assumptions")
    resources: **res("train", "assumptions")
    shell:
        "memcap assumptions digits-vit --threads {threads} --out {output.model} "
        "--metrics {output.metrics} > {log} 2>&1"


rule assumptions_track:
    """Features of one track's models, streamed; rank/Kruskal/GP/Asm 3 checks; Fig 1 curve data."""
    input:
        digits=lambda w: [ASM_DIGITS_VIT] if w.track == "digits" else [],
        # the image folder (its SHA256SUMS) only when present: absent, the job runs and writes SKIPPED rows
        data=lambda w: asm_grid.data_inputs(ASM_PRESET, w.track),
    output:
        checks=f"{ASM}/runs/checks/{{track}}.parquet",
        curves=f"{ASM}/runs/curves/{{track}}.parquet",
    log:
        "logs/assumptions/{track}.log",
    benchmark:
        "logs/assumptions/{track}.benchmark.tsv"
    wildcard_constraints:
        track=never_match(ASM_TRACKS),
    params:
        settings=lambda w: asm_grid.track_settings(ASM_PRESET, w.track),
        digits=lambda w, input: f"--digits-vit {input.digits}" if input.digits else "",
    threads: threads_of("train", "assumptions")
    resources: **res("train", "assumptions")
    shell:
        "memcap assumptions track --threads {threads} --track {wildcards.track} "
        "{params.digits} --out {output.checks} --curves {output.curves} > {log} 2>&1"


rule assumptions_aggregate:
    """The family Parquet of every check; Tables 1 and 3 (markdown + LaTeX)."""
    input:
        expand(f"{ASM}/runs/checks/{{track}}.parquet", track=ASM_TRACKS),
    output:
        checks=ASM_TABLE["checks"],
        tables=in_report(ASM_PAPER_TABLES, "assumptions"),
    log:
        "logs/assumptions/aggregate.log",
    threads: threads_of("light", "assumptions")
    resources: **res("light", "assumptions")
    shell:
        "memcap assumptions aggregate --checks {input} --out {output.checks} "
        "--tables {output.tables} > {log} 2>&1"


rule assumptions_figures:
    """Fig 1 (PNG + PDF) from the tracks' curves."""
    input:
        expand(f"{ASM}/runs/curves/{{track}}.parquet", track=ASM_TRACKS),
    output:
        in_report(ASM_FIGURES, "assumptions"),
    log:
        "logs/assumptions/figures.log",
    threads: threads_of("light", "assumptions")
    resources: **res("light", "assumptions")
    shell:
        "memcap assumptions figures --curves {input} --figures {output} > {log} 2>&1"
