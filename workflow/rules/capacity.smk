# Capacity by search: for each (H, d_h) the largest T that every seed memorizes, found by a bracketing
# search whose steps train MLT models through the MLT family's point trainer. One job per architecture.
from memcap.capacity import aggregate as capacity_aggregate
from memcap.capacity import figures as capacity_figures
from memcap.capacity import grid as capacity_grid

CAP = "results/capacity"
CAP_PRESET = memcap_params.preset(config, capacity_grid.FAMILY)
CAP_RUNS = [f"{CAP}/runs/H{h}_dh{dh}.parquet" for h, dh in capacity_grid.architectures(CAP_PRESET)]
CAP_TABLE = {name: f"{CAP}/tables/{file}" for name, file in capacity_aggregate.TABLES.items()}
CAP_FIGURES = [f"figures/capacity/{name}.{ext}" for name in capacity_figures.FIGURES for ext in ("png", "pdf")]


rule capacity:
    """Target of the family (DVC stage `capacity`): every search, the table and the figure."""
    input:
        CAP_RUNS,
        list(CAP_TABLE.values()),
        CAP_FIGURES,


rule capacity_search:
    """Bracketing search over T for one (H, d_h): the largest T that every seed memorizes."""
    output:
        f"{CAP}/runs/H{{heads}}_dh{{head_dim}}.parquet",
    log:
        "logs/capacity/H{heads}_dh{head_dim}.log",
    benchmark:
        "logs/capacity/H{heads}_dh{head_dim}.benchmark.tsv"
    wildcard_constraints:
        heads=r"\d+",
        head_dim=r"\d+",
    params:
        # what the row depends on: reruns exactly the architectures whose settings changed
        settings=lambda w: capacity_grid.search_settings(CAP_PRESET, int(w.heads), int(w.head_dim)),
    threads: res("train", "capacity")["threads"]
    resources:
        mem_mb=res("train", "capacity")["mem_mb"],
        runtime=res("train", "capacity")["runtime"],
        gpu=res("train", "capacity")["gpu"],
    shell:
        "memcap capacity search --threads {threads} --heads {wildcards.heads} "
        "--head-dim {wildcards.head_dim} --out {output} > {log} 2>&1"


rule capacity_aggregate:
    """The capacity table beside both papers' bounds, and capacity vs H and vs d_h."""
    input:
        CAP_RUNS,
    output:
        table=CAP_TABLE["capacity"],
        figures=in_report(CAP_FIGURES, "capacity"),
    log:
        "logs/capacity/aggregate.log",
    threads: res("light", "capacity")["threads"]
    resources:
        mem_mb=res("light", "capacity")["mem_mb"],
        runtime=res("light", "capacity")["runtime"],
        gpu=0,
    shell:
        "memcap capacity aggregate --runs {input} --out {output.table} "
        "--figures {output.figures} > {log} 2>&1"
