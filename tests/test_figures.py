"""Every figure a reader sees passes memcap.figure_checks: each family's figures drawn again from the
published tables (the commands the rules run, in this process, each figure checked before it is saved),
and the checks themselves on figures made to fail each one."""

import os
import shlex

import pytest

from memcap import figure_checks
from memcap.plotting import plt

# The rules that draw each family's figures (their commands are read from Snakemake's dry run).
FAMILY_RULES = {
    "mlt_synthetic": ["mlt_figures"],
    "theory": ["theory_figures"],
    "dpc": ["dpc_figures", "dpc_kl", "dpc_fidelity"],
    "assumptions": ["assumptions_figures"],
    "capacity": ["capacity_aggregate"],
    "report": ["report_bits", "report_scorecard"],
}


FAMILY_MODULES = ["memcap.mlt_synthetic.figures", "memcap.theory.figures", "memcap.dpc.figures",
                  "memcap.assumptions.figures", "memcap.capacity.figures", "memcap.report.figures"]


# ---- the checks on figures made to fail ------------------------------------------------------------

def line_panel(ax, xs=(1, 2, 3, 4), label="accuracy"):
    ax.plot(xs, [0.1, 0.5, 0.6, 0.9], "o-", label="ours")
    ax.set(xlabel="heads H", ylabel=label)


def unrounded_fit(ax):
    ax.plot([1, 4], [0, 1], label="fit 0.0071428x + 0.25")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))


def test_a_clean_figure_passes():
    fig, ax = plt.subplots()
    line_panel(ax)
    ax.set_xticks([1, 2, 3, 4])
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1))
    assert figure_checks.problems(fig) == []
    plt.close(fig)


@pytest.mark.parametrize("spoil, says", [
    (lambda fig, ax: ax.legend(loc="center", title="arm"), "legend title 'arm' is a column name"),
    (lambda fig, ax: (ax.plot([1.5, 2.5, 3.5], [0.5, 0.5, 0.5], "s", label="points under the legend"),
                      ax.legend(loc="center")), "covers"),
    (lambda fig, ax: ax.set_xlabel("head_dim"), "x axis label 'head_dim' is not words"),
    (lambda fig, ax: ax.set_ylabel("λ"), "y axis label 'λ' is not words"),
    (lambda fig, ax: ax.set_xticks([1, 1.5, 2, 2.5, 3, 3.5, 4]), "ticks are fractional"),
    (lambda fig, ax: (ax.set_xticks(range(1, 5)), ax.set_xticklabels(["7500", "10000", "12500", "15000"], fontsize=60)),
     "x tick labels overlap"),
    (lambda fig, ax: unrounded_fit(ax), "unrounded number"),
])
def test_each_check_fails_a_figure_made_to_fail_it(spoil, says):
    fig, ax = plt.subplots()
    line_panel(ax)
    ax.set_xticks([1, 2, 3, 4])
    spoil(fig, ax)
    found = figure_checks.problems(fig)
    assert any(says in p for p in found), found
    plt.close(fig)


def test_more_than_four_panels_need_one_figure_legend():
    fig, axes = plt.subplots(2, 3)
    for ax in axes.flat:
        line_panel(ax)
        ax.set_xticks([1, 2, 3, 4])
    assert any("6 panels" in p for p in figure_checks.problems(fig))
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="center left", bbox_to_anchor=(1.0, 0.5))
    assert figure_checks.problems(fig) == []                       # a facet grid with one legend
    plt.close(fig)


# ---- every family's figures, as the pipeline draws them ----------------------------------------------

def figure_commands(project, rules: list[str]) -> list[list[str]]:
    """The figure rules' commands (the memcap argv, without the log redirection), from a dry run."""
    out = project.snakemake("-n", "-p", "--forcerun", *rules, "--allowed-rules", *rules, "--", "all").stdout
    cmds = [line.removeprefix("Shell command: ").split(" > ")[0] for line in out.splitlines()
            if line.startswith("Shell command: memcap")]
    return [shlex.split(c)[1:] for c in cmds]


@pytest.mark.e2e
@pytest.mark.parametrize("family", list(FAMILY_RULES))
def test_every_published_figure_passes_the_reader_checks(family, restored, monkeypatch):
    from memcap import results
    from memcap.cli import main

    commands = figure_commands(restored, FAMILY_RULES[family])
    assert commands, f"no figure command of {FAMILY_RULES[family]}"
    found, real = {}, results.save_figure

    def checked(fig, paths, dpi=150):
        name = str(paths if isinstance(paths, (str, os.PathLike)) else list(paths)[0])
        found[name] = figure_checks.problems(fig)
        return real(fig, paths, dpi)

    import importlib
    import sys

    for name in FAMILY_MODULES:                       # the figure modules, each with its own binding
        importlib.import_module(name)
    for module in [m for name, m in sys.modules.items() if name.startswith("memcap")]:
        if getattr(module, "save_figure", None) is real:
            monkeypatch.setattr(module, "save_figure", checked)
    monkeypatch.chdir(restored.root)
    monkeypatch.setenv("MEMCAP_PARAMS", "params.yaml")
    for argv in commands:
        main(argv)
    assert found, "no figure drawn"
    bad = {k: v for k, v in found.items() if v}
    assert not bad, bad
