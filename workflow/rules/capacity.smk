# Capacity by search: for each (H, d_h) the largest T that every seed memorizes, found by a bracketing
# search whose steps train MLT models through the MLT family's point trainer. One job per architecture.
from memcap.capacity import aggregate as capacity_aggregate
from memcap.capacity import figures as capacity_figures
from memcap.capacity import grid as capacity_grid

CAP = "results/capacity"
CAP_PRESET_NAME = memcap_params.scale_of(config, capacity_grid.FAMILY)
CAP_PRESET = memcap_params.preset(config, capacity_grid.FAMILY)
# runs/<preset>/H<H>_dh<d_h>-<settings key>.parquet: other settings never share a path
CAP_RUNS = [f"{CAP}/runs/{capacity_grid.run_name(CAP_PRESET_NAME, CAP_PRESET, h, dh)}"
            for h, dh in capacity_grid.architectures(CAP_PRESET)]
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
        f"{CAP}/runs/{{preset}}/H{{heads}}_dh{{head_dim}}-{{key}}.parquet",
    log:
        "logs/capacity/{preset}/H{heads}_dh{head_dim}-{key}.log",
    benchmark:
        "logs/capacity/{preset}/H{heads}_dh{head_dim}-{key}.benchmark.tsv"
    wildcard_constraints:
        preset=r"[a-z][a-z0-9_]*",
        heads=r"\d+",
        head_dim=r"\d+",
        key=KEY_PATTERN,
    threads: threads_of("train", "capacity")
    resources: **res("train", "capacity")
    shell:
        "memcap capacity search --threads {threads} --heads {wildcards.heads} "
        "--head-dim {wildcards.head_dim} --settings-key {wildcards.key} --out {output} > {log} 2>&1"


rule capacity_aggregate:
    """The capacity table beside both papers' bounds, and capacity vs H and vs d_h."""
    input:
        CAP_RUNS,
    output:
        table=CAP_TABLE["capacity"],
        figures=in_report(CAP_FIGURES, "capacity"),
    log:
        "logs/capacity/aggregate.log",
    threads: threads_of("light", "capacity")
    resources: **res("light", "capacity")
    shell:
        "memcap capacity aggregate --runs {input} --out {output.table} "
        "--figures {output.figures} > {log} 2>&1"
