# MLT assumption checks (Mahdavi et al. 2024, spec mahdavi.md §4): Table 1, Fig 1, Table 3, Asm 3.
# One job per track (photos, digits, gpt2, bert); the digits ViT is trained by its own job first.
from memcap.assumptions.family import FAMILY as ASM_FAMILY, TEXT_TRACKS, VISION_TRACKS

ASM = "results/assumptions"
ASM_PRESET = memcap_config.preset(config, ASM_FAMILY)
ASM_TRACKS = [*VISION_TRACKS, *TEXT_TRACKS]
ASM_FIG = [f"figures/mlt_fig1.{ext}" for ext in ("png", "pdf")]
ASM_TABLES = [f"{ASM}/{t}.{ext}" for t in ("table1", "table3") for ext in ("md", "tex")]


def asm_track_settings(w):
    """The params a track reads (reruns when they change)."""
    section = ASM_PRESET["vision" if w.track in VISION_TRACKS else "text"][w.track]
    return {k: ASM_PRESET[k] for k in ("seed", "threshold", "trials", "fig1")} | {w.track: section}


rule assumptions:
    """Target of the family: every track's checks, the family Parquet, Tables 1 and 3, Fig 1."""
    input:
        f"{ASM}/checks.parquet",
        ASM_TABLES,
        ASM_FIG,


rule assumptions_digits_vit:
    """Train the small digits ViT (the 'trained' row of the digits track); records its test accuracy."""
    output:
        model=f"{ASM}/digits_vit.pt",
        metrics=f"{ASM}/digits_vit.json",
    log:
        "logs/assumptions/digits_vit.log",
    benchmark:
        "logs/assumptions/digits_vit.benchmark.tsv"
    params:
        settings=lambda w: ASM_PRESET["vision"]["digits"],
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        "{MEMCAP} assumptions-digits-vit {PARAMS_ARGS} --threads {threads} --out {output.model} "
        "--metrics {output.metrics} > {log} 2>&1"


rule assumptions_track:
    """Features of one track's models, streamed; rank/Kruskal/GP/Asm 3 checks; Fig 1 curve data."""
    input:
        lambda w: [f"{ASM}/digits_vit.pt"] if w.track == "digits" else [],
    output:
        checks=f"{ASM}/checks/{{track}}.parquet",
        curves=f"{ASM}/curves/{{track}}.parquet",
    log:
        "logs/assumptions/{track}.log",
    benchmark:
        "logs/assumptions/{track}.benchmark.tsv"
    wildcard_constraints:
        track="|".join(ASM_TRACKS),
    params:
        settings=asm_track_settings,
        digits=lambda w, input: f"--digits-vit {input[0]}" if input else "",
    threads: res("train")["threads"]
    resources:
        mem_mb=res("train")["mem_mb"],
        runtime=res("train")["runtime"],
        gpu=res("train")["gpu"],
    shell:
        "{MEMCAP} assumptions-track {PARAMS_ARGS} --threads {threads} --track {wildcards.track} "
        "{params.digits} --out {output.checks} --curves {output.curves} > {log} 2>&1"


rule assumptions_report:
    """The family Parquet of every check, Tables 1 and 3 (markdown + LaTeX), Fig 1 (PNG + PDF)."""
    input:
        checks=expand(f"{ASM}/checks/{{track}}.parquet", track=ASM_TRACKS),
        curves=expand(f"{ASM}/curves/{{track}}.parquet", track=ASM_TRACKS),
    output:
        f"{ASM}/checks.parquet",
        ASM_TABLES,
        ASM_FIG,
    log:
        "logs/assumptions/report.log",
    threads: res("light")["threads"]
    resources:
        mem_mb=res("light")["mem_mb"],
        runtime=res("light")["runtime"],
        gpu=0,
    shell:
        "{MEMCAP} assumptions-report {PARAMS_ARGS} --checks {input.checks} --curves {input.curves} "
        "--out {ASM}/checks.parquet --tabledir {ASM} --figdir figures > {log} 2>&1"
