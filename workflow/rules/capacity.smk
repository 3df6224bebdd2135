# Capacity by search: per architecture T₅₀, fitted to every seed's probes, found in rounds of probes that
# each preset's subject trains (memcap.capacity.subjects: MLT's layer, DPC's transformer, a torch block). One row file per architecture; the probes
# are files of their own below runs/probes/ (never a rule's output, so a rerun never deletes them); a
# preset of your own keeps its probes below runs/<preset>/probes/ (memcap.capacity.store), out of DVC's view.
from memcap.capacity import aggregate as capacity_aggregate
from memcap.capacity import figures as capacity_figures
from memcap.capacity import grid as capacity_grid
from memcap.capacity import settings as capacity_settings

CAP = "results/capacity"
CAP_PRESET_NAME = memcap_params.scale_of(config, capacity_grid.FAMILY)
# a composite preset ({settings: [names]}) searches each named preset and gathers them in one table
CAP_MEMBERS = capacity_settings.members(config[capacity_grid.FAMILY], CAP_PRESET_NAME)
# runs/<preset>/H<H>_dh<d_h>-<settings key>.parquet: other settings never share a path
CAP_RUNS_OF = {m: [f"{CAP}/runs/{capacity_grid.run_name(m, config[capacity_grid.FAMILY][m], h, dh)}"
                   for h, dh in capacity_grid.architectures(config[capacity_grid.FAMILY][m])] for m in CAP_MEMBERS}
CAP_RUNS = [r for runs in CAP_RUNS_OF.values() for r in runs]
CAP_TABLE = {name: f"{CAP}/tables/{file}" for name, file in capacity_aggregate.TABLES.items()}
CAP_FIGURES = [f"figures/capacity/{name}.{ext}" for name in capacity_figures.FIGURES for ext in results.FIGURE_FORMATS]
# A GPU preset (pack_models > 1): one job searches every architecture whose row is missing, a round one
# pack; else one job an architecture. probes_per_round: k probes a seed a round (1, unless resources say
# otherwise: bisection, the fewest core-hours on a CPU; 0: as many as fill a round's pack, memcap.capacity.search).
CAP_PACKED = pack_sizes(capacity_grid.FAMILY)[0] > 1
CAP_K = _sizes("train", capacity_grid.FAMILY).get("probes_per_round", 1)
CAP_SEARCH_SHELL = f"memcap capacity search --threads {{threads}} --probes-per-round {CAP_K} --runs {{output}} > {{log}} 2>&1"


rule capacity:
    """Target of the family (DVC stage `capacity`): every search, the tables and the figure."""
    input:
        CAP_RUNS,
        list(CAP_TABLE.values()),
        CAP_FIGURES,


if CAP_PACKED and [r for r in CAP_RUNS if not os.path.exists(r)]:
    # one pack job a preset: every missing architecture of it
    for cap_member, cap_runs in CAP_RUNS_OF.items():
        if not [r for r in cap_runs if not os.path.exists(r)]:
            continue

        rule:
            """Every missing architecture's search of one preset, each round one pack of all their open seeds' probes."""
            name:
                "capacity_search_pack" if len(CAP_MEMBERS) == 1 else f"capacity_search_pack_{cap_member}"
            output:
                [r for r in cap_runs if not os.path.exists(r)],
            log:
                f"logs/capacity/{cap_member}/pack.log",
            benchmark:
                f"logs/capacity/{cap_member}/pack.benchmark.tsv"
            threads: threads_of("train", "capacity")
            resources: **res("train", "capacity")
            shell:
                CAP_SEARCH_SHELL

else:

    rule capacity_search:
        """One architecture's search, in rounds of one probe a seed: its row (T*, brackets, budget check)."""
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
            CAP_SEARCH_SHELL


# The MLT family's runs of a capacity row's shape are points of its memorized bits against T, where
# that table is at hand: read, not a declared input, so the capacity rule never asks for MLT training
# and its DAG does not change when the table appears (DVC orders the two: its capacity stage lists it).


rule capacity_aggregate:
    """The capacity table beside both papers' bounds, bits per parameter, the budget curves, memorized
    bits without a threshold, the fitted laws, every probe, and the figures."""
    input:
        runs=CAP_RUNS,
    output:
        table=CAP_TABLE["capacity"],
        md=in_report(CAP_TABLE["capacity_md"], "capacity"),
        csv=CAP_TABLE["capacity_csv"],
        laws=CAP_TABLE["laws"],
        probes=CAP_TABLE["probes"],
        figures=in_report(CAP_FIGURES, "capacity"),
    log:
        "logs/capacity/aggregate.log",
    threads: threads_of("light", "capacity")
    resources: **res("light", "capacity")
    shell:
        "memcap capacity aggregate --runs {input.runs} --out {output.table} --markdown {output.md} --csv {output.csv} "
        f"--mlt-runs {MLT_TABLE['runs']} "
        "--laws {output.laws} --probes {output.probes} --figures {output.figures} > {log} 2>&1"
