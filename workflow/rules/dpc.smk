# DPC (Dana, Pydi, Chevaleyre 2025): attention-only transformers memorising a look-up table.
# One training job per (experiment, series value): it trains every x of that curve, repetitions batched
# (a preset whose dpc jobs pack: one job for every missing curve, below).
# Paths come from the library's names: jobs (memcap.dpc.grid), tables (aggregate.TABLES), figures.
import glob

from memcap.dpc import aggregate as dpc_aggregate
from memcap.dpc import figures as dpc_figures
from memcap.dpc import grid as dpc_grid

DPC = "results/dpc"
DPC_PRESET_NAME = memcap_params.scale_of(config, dpc_grid.FAMILY)
DPC_PRESET = memcap_params.preset(config, dpc_grid.FAMILY)
# runs/<preset>/<experiment>/<series>-<settings key>.parquet: other settings never share a path
DPC_RUNS = [f"{DPC}/runs/{dpc_grid.run_name(DPC_PRESET_NAME, DPC_PRESET, e, s)}" for e, s in dpc_grid.jobs(DPC_PRESET)]
DPC_TABLE = {name: f"{DPC}/tables/{file}" for name, file in dpc_aggregate.TABLES.items()}
DPC_METRICS = f"{DPC}/metrics.json"
DPC_REFERENCE = "reference/dpc-published"   # the authors' result tables (memcap.dpc.published)


DPC_FIGURES = [f"figures/dpc/{n}.{ext}" for n in dpc_figures.names(DPC_PRESET) for ext in dpc_figures.FORMATS]
DPC_KL_FIGURE = [f"figures/dpc/{dpc_figures.KL}.{ext}" for ext in dpc_figures.FORMATS]
DPC_FIDELITY_FIGURE = [f"figures/dpc/{dpc_figures.FIDELITY}.{ext}" for ext in dpc_figures.FORMATS]


rule dpc:
    """Target of the family (DVC stage `dpc`): every run, the tables, the metrics and the figures."""
    input:
        DPC_RUNS,
        list(DPC_TABLE.values()),
        DPC_METRICS,
        DPC_FIGURES,


# A preset whose dpc jobs pack (resources pack_models > 1): one job trains every curve missing when the
# run starts, one after another (a tiny curve costs less than its process start); a curve that exists
# is in no pack. Else one job a curve, which trains its x values in turn.
# A job alone and a pack run the same command, so Snakemake's record of a curve is the same whichever
# made it (a packed curve is not retrained once the next run plans no pack). Checkpoints:
# checkpoints/dpc/<preset>/<experiment>_<series>-<key>_x<x>.pt (memcap.dpc.grid.checkpoint_prefix).
DPC_MISSING = [r for r in DPC_RUNS if not os.path.exists(r)] if pack_sizes(dpc_grid.FAMILY)[0] > 1 else []
DPC_TRAIN_SHELL = "memcap dpc train-pack --threads {threads} --runs {output} > {log} 2>&1"

if DPC_MISSING:

    rule dpc_train_pack:
        """Train every missing curve, one after another; each curve's file as a job alone writes it."""
        output:
            DPC_MISSING,
        log:
            f"logs/dpc/{DPC_PRESET_NAME}/pack.log",
        benchmark:
            f"logs/dpc/{DPC_PRESET_NAME}/pack.benchmark.tsv"
        threads: threads_of("train", "dpc")
        resources: **res("train", "dpc")
        shell:
            DPC_TRAIN_SHELL

else:

    rule dpc_train:
        """Train one curve (every x of one series value); one Parquet row per (x, repetition)."""
        output:
            f"{DPC}/runs/{{preset}}/{{experiment}}/{{series}}-{{key}}.parquet",
        log:
            "logs/dpc/{preset}/{experiment}/{series}-{key}.log",
        benchmark:
            "logs/dpc/{preset}/{experiment}/{series}-{key}.benchmark.tsv"
        wildcard_constraints:
            preset=r"[a-z][a-z0-9_]*",
            experiment=never_match(list(DPC_PRESET["experiments"])),
            series=r"all|\d+",
            key=KEY_PATTERN,
        threads: threads_of("train", "dpc")
        resources: **res("train", "dpc")
        shell:
            DPC_TRAIN_SHELL


rule dpc_aggregate:
    """One tidy table of every run, the per-grid-point mean/sd/min/max over repetitions, DVC metrics."""
    input:
        DPC_RUNS,
    output:
        runs=DPC_TABLE["runs"],
        summary=DPC_TABLE["summary"],
        metrics=DPC_METRICS,
    log:
        "logs/dpc/aggregate.log",
    threads: threads_of("light", "dpc")
    resources: **res("light", "dpc")
    shell:
        "memcap dpc aggregate --runs {output.runs} --summary {output.summary} "
        "--metrics {output.metrics} {input} > {log} 2>&1"


rule dpc_figures:
    """The original's fits (DPC Figs 1-10; Parquet + markdown slope table) and the per-experiment figures."""
    input:
        runs=DPC_TABLE["runs"],
        summary=DPC_TABLE["summary"],
        reference=sorted(glob.glob(f"{DPC_REFERENCE}/*.csv")),
    output:
        figures=in_report([f for f in DPC_FIGURES if f not in DPC_KL_FIGURE + DPC_FIDELITY_FIGURE], "dpc"),
        fits=DPC_TABLE["fits"],
        fits_md=in_report(DPC_TABLE["fits_md"], "dpc"),
    log:
        "logs/dpc/figures.log",
    threads: threads_of("light", "dpc")
    resources: **res("light", "dpc")
    shell:
        "memcap dpc figures --runs {input.runs} --summary {input.summary} "
        "--fits {output.fits} --fits-md {output.fits_md} --figures {output.figures} "
        "--reference {input.reference} > {log} 2>&1"


rule dpc_kl:
    """Prop 3, Theorem 2 and LS-vs-WLS KL values next to their bounds (DPC §3, §6), and their figure."""
    output:
        table=DPC_TABLE["kl"],
        figures=in_report(DPC_KL_FIGURE, "dpc"),
    log:
        "logs/dpc/kl.log",
    params:
        theory=DPC_PRESET["theory"],  # reruns when they change
    threads: threads_of("light", "dpc")
    resources: **res("light", "dpc")
    shell:
        "memcap dpc kl --out {output.table} --figures {output.figures} > {log} 2>&1"


rule dpc_fidelity:
    """Our means beside the authors' published ones (reference/dpc-published), with a tolerance per point."""
    input:
        summary=DPC_TABLE["summary"],
        reference=sorted(glob.glob(f"{DPC_REFERENCE}/*.csv")),
    output:
        table=DPC_TABLE["fidelity"],
        md=in_report(DPC_TABLE["fidelity_md"], "dpc"),
        figures=in_report(DPC_FIDELITY_FIGURE, "dpc"),
    log:
        "logs/dpc/fidelity.log",
    threads: threads_of("light", "dpc")
    resources: **res("light", "dpc")
    shell:
        "memcap dpc fidelity --summary {input.summary} --reference {input.reference} --out {output.table} --md {output.md} "
        "--figures {output.figures} > {log} 2>&1"
