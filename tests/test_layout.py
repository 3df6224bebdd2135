"""The architecture the layout promises: torch-free validation, commands by family, DVC deps (one-way imports:
tests/test_import_graph.py)."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_import_graph import import_graph   # the graph memcap's imports draw (tests/test_import_graph.py)

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "memcap"
sys.path.insert(0, str(ROOT / "src"))
from memcap.params import FAMILIES as FAMILY_PACKAGES   # noqa: E402  (the one list of the families)


def test_validating_params_imports_no_torch_pandas_or_trainer():
    """`memcap params check` (the `params` stage of every `dvc repro`) reads YAML against the schema:
    the command line of every family is built, but torch, pandas and pyarrow wait for a job that needs them."""
    code = ("import sys; from memcap import cli; cli.build_parser(); from memcap import params; "
            "params.load('params.yaml'); "
            "print([m for m in sys.modules if m in ('torch', 'pandas', 'pyarrow') or m.endswith('.train')])")
    out = subprocess.run([sys.executable, "-c", code], cwd=SRC.parents[1], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_naming_the_workflows_outputs_imports_no_plotting_scipy_or_torch():
    """Snakemake imports what the Snakefile and rules import at every start and in every cluster job:
    the plotting stack, scipy.stats and torch wait until a figure is drawn, a fit made, a model trained."""
    root = SRC.parents[1]
    imports = [line.strip() for f in [root / "Snakefile", *sorted((root / "workflow/rules").glob("*.smk"))]
               for line in f.read_text().splitlines() if line.startswith(("from memcap", "import memcap"))]
    assert len(imports) > 10, imports
    heavy = ("matplotlib", "seaborn", "scipy.stats", "torch")
    code = "; ".join(["import sys", *imports, f"print(sorted(m for m in {heavy!r} if m in sys.modules))"])
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    # drawn on first use, headless (the cluster and CI have no display)
    drawn = "from memcap.mlt_synthetic import figures; figures.plt.figure(); print(figures.plt.get_backend().lower())"
    assert subprocess.run([sys.executable, "-c", drawn], capture_output=True, text=True, check=True).stdout.strip() == "agg"


@pytest.mark.parametrize("family", FAMILY_PACKAGES)
def test_every_family_has_the_same_shape(family):
    modules = {p.stem for p in (SRC / family).glob("*.py")}
    assert {"__init__", "grid", "checks", "figures"} <= modules, sorted(modules)
    assert modules & {"train", "search", "run", "construct", "suite"}, sorted(modules)
    assert modules & {"aggregate"}, sorted(modules)


# A package's index: the lines of its docstring that start with one of its modules (`name.py`) or
# subpackages (`name/`), then two spaces and what it holds.
INDEX_ENTRY = re.compile(r"^\s*([a-z_0-9]+(?:\.py|/))(?:\s{2,}|$)")


def index_entries(doc: str) -> set[str]:
    return {m.group(1) for line in doc.splitlines() if (m := INDEX_ENTRY.match(line))}


def package_contents(pkg: Path) -> set[str]:
    return ({p.name for p in pkg.glob("*.py") if p.name != "__init__.py"}
            | {f"{p.name}/" for p in pkg.iterdir() if (p / "__init__.py").is_file()})


def test_every_package_index_lists_exactly_its_modules():
    """Each package under src/memcap/ (read from the tree, so a new package counts at once) opens with an
    index of its modules; the root package's index is docs/layout.md."""
    wrong = {}
    for init in sorted(SRC.rglob("__init__.py")):
        if init.parent == SRC or init.parent == SRC / "capacity" / "subjects":   # subjects: a plug-in folder
            continue
        listed, present = index_entries(ast.get_docstring(ast.parse(init.read_text())) or ""), package_contents(init.parent)
        if listed != present:
            wrong[str(init.parent.relative_to(SRC))] = {"not listed": sorted(present - listed),
                                                        "listed, absent": sorted(listed - present)}
    assert not wrong, wrong
    # a case that fails: an index naming a module that is gone and leaving out one that exists
    doc = "Theory.\n\nbound.py     Theorem 1's bound\nfeatures.py  Z of eq (7)\n"
    assert index_entries(doc) == {"bound.py", "features.py"} != {"features.py", "construct.py"}
    assert index_entries("A sentence naming train.py in passing.\n  see grid.py, and more") == set()


def test_make_test_without_root_says_in_one_line_what_it_needs_and_how_to_run_the_rest():
    """`make test` starts SLURM and sshd from Debian's packages (root): tools/test-needs.sh, its first
    step, passes as root and, as any other user, stops with one line naming the commands that run the rest."""
    import os
    import shutil

    script = ["bash", str(ROOT / "tools" / "test-needs.sh")]
    if os.geteuid() == 0:
        assert subprocess.run(script, capture_output=True, text=True).returncode == 0
        if not shutil.which("setpriv"):
            pytest.skip("SKIPPED: running as root and no setpriv to try the check as another user")
        script = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *script]
    out = subprocess.run(script, capture_output=True, text=True, cwd="/")
    assert out.returncode == 1 and out.stdout == "", out
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "root" in lines[0], lines
    assert "make test-fast" in lines[0] and '-m "not slurm and not sshd and not chromium"' in lines[0], lines
    markers = (ROOT / "pyproject.toml").read_text()
    assert all(f'"{m}: ' in markers for m in ("slurm", "sshd", "chromium"))   # the markers it names exist


def test_help_lists_commands_by_family():
    out = subprocess.run([sys.executable, "-m", "memcap", "--help"], capture_output=True, text=True, check=True).stdout
    for family in ("params", "mlt_synthetic", "theory", "dpc", "assumptions", "capacity", "report"):
        assert f"\n  {family} " in out
    assert "mlt_synthetic train" in out and "dpc train" in out and "capacity search" in out


def _stage_entry_modules(stage: str) -> set[str]:
    """What a DVC stage runs: its family's CLI module and the memcap modules its rule files import."""
    entries = {f"memcap.cli.{stage}"}   # one name per family: stage, package, CLI, folders
    rules = Path(SRC.parents[1], "workflow", "rules")
    for smk in (rules / "common.smk", rules / f"{stage}.smk"):
        for line in smk.read_text().splitlines():
            words = line.split()
            if words[:1] == ["from"] and words[1].startswith("memcap"):
                entries |= {words[1]} | {f"{words[1]}.{w.strip(',')}" for w in words[3:] if w[0].isalpha()}
            elif words[:1] == ["import"] and words[1].startswith("memcap"):
                entries.add(words[1])
    return entries


@pytest.mark.parametrize("stage", ["mlt_synthetic", "theory", "dpc", "assumptions", "capacity", "report"])
def test_dvc_stage_deps_cover_every_module_the_stage_imports(stage):
    """A change to any module a family's jobs import reruns that family's stage (dvc.yaml deps).
    Validation's per-family checks are left out: they accept or reject params, never change a number."""
    import yaml

    deps = yaml.safe_load((SRC.parents[1] / "dvc.yaml").read_text())["stages"][stage]["deps"]
    graph = import_graph()
    todo, seen = [m for m in _stage_entry_modules(stage) if m in graph], set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += [d for d in graph[m] if not (m == "memcap.params" and d.endswith(".checks"))]
    missing = []
    for m in sorted(seen):
        path = SRC.parent.joinpath(*m.split("."))
        rel = str(path.with_suffix(".py").relative_to(SRC.parents[1])) if path.with_suffix(".py").exists() \
            else str((path / "__init__.py").relative_to(SRC.parents[1]))
        if rel.endswith("__init__.py") and "cli" not in rel:
            continue                                   # package docstrings
        if not any(rel == d or rel.startswith(d.rstrip("/") + "/") for d in deps):
            missing.append(rel)
    assert not missing, f"dvc.yaml stage {stage} lacks deps on {missing}"


def test_snakemake_lint_finds_nothing_but_the_environment_advice(tmp_path):
    """`snakemake --lint` (what CI runs): the only finding left is its advice to give every rule a conda
    environment or container, which the README answers (jobs run in the environment of Snakemake)."""
    snakemake = Path(sys.executable).parent / "snakemake"
    out = subprocess.run([str(snakemake), "--lint", "--nolock"], cwd=ROOT, capture_output=True, text=True)
    findings = [line.strip() for line in (out.stdout + out.stderr).splitlines() if line.strip().startswith("* ")]
    assert findings, out.stdout + out.stderr      # the linter ran and printed its usual advice
    others = [f for f in findings if "conda environment or container" not in f]
    assert not others, others


# Words that speak of how memcap was built (its sessions, loans of machines, its issues, what the code
# was before a change, what a next run will measure), not of what a user runs and gets.
HOW_IT_WAS_BUILT = re.compile(
    r"\b(sessions?|lent|loans?)\b"
    r"|\bso far\b|\bas it is now\b|\bthe old\b|\bbefore the change\b"
    r"|\buntil \d{4}-\d{2}-\d{2}\b|\bissue \d+|\bthe next [a-z]+ measures\b|\b(is|was) developed on\b",
    re.IGNORECASE)
DATED = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")   # a dated diary line in the docs
USER_FACING = ("README.md", "docs", "params.yaml", "src", "tools", "benchmarks")


def how_it_was_built(text: str, dated: bool = False) -> list[str]:
    """The lines of `text` that narrate how memcap was built instead of saying what a user runs."""
    return [line.strip() for line in text.splitlines()
            if HOW_IT_WAS_BUILT.search(line) or (dated and DATED.search(line))]


def test_the_repository_speaks_to_its_users_not_of_how_it_was_built():
    files = subprocess.run(["git", "ls-files", "--", *USER_FACING], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    found = {}
    for name in files:
        path = ROOT / name
        if not path.is_file() or path.suffix in (".png", ".pdf", ".parquet", ".pt", ".JPEG", ".gz"):
            continue
        lines = how_it_was_built(path.read_text(errors="ignore"), dated=name.startswith("docs/"))
        if lines:
            found[name] = lines[:3]
    assert not found, found
    # a case that fails: the words the check exists for
    assert how_it_was_built("Fig 4 left: 7 jobs on a lent H200 in the fifth session; loans end.") != []
    assert how_it_was_built("**Fig 2c (2026-11-27).** Its jobs ...", dated=True) != []
    for phrase in ("the seeds each figure has so far", "the planner as it is now", "the old statistic gave 1.18",
                   "the plan before the change", "the formulation until 2026-11-25", "params for issue 5",
                   "the next loan measures it", "the VM the project is developed on"):
        assert how_it_was_built(f"Fig 2a: {phrase}.") != [], phrase
    assert how_it_was_built("One job a grid point, resumed from its checkpoint.") == []
    assert how_it_was_built("The older seeds; a plugin bug (issue #473); trained until it stops.") == []


def test_the_training_package_reads_in_a_sitting():
    """Every function of memcap.training (the loop MLT, capacity and theory GD train through) is under 80 lines."""
    long = [f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in sorted((SRC / "training").glob("*.py"))
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 >= 80]
    assert long == []


def test_every_list_of_the_families_is_memcaps_one_list():
    """memcap.params.FAMILIES is the list; every other place that names the families names the same ones:
    the schema's sections and `scale` keys, the Snakefile's rule files, dvc.yaml's stages, the command
    line, the packages, .dvcignore's run folders (the families with runs/), the figure folders."""
    import yaml

    families = set(FAMILY_PACKAGES)
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "params.schema.yaml").read_text())
    assert set(schema["required"]) - {"scale", "device", "resources"} == families
    assert set(schema["properties"]["scale"]["anyOf"][1]["propertyNames"]["enum"]) - {"default"} == families
    assert set(schema["$defs"]["resource_classes"]["properties"]["families"]["properties"]) == families
    included = set(re.findall(r'include: "workflow/rules/(\w+)\.smk"', (ROOT / "Snakefile").read_text()))
    assert included - {"common", "report"} == families
    stages = set(yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"])
    assert stages - {"params", "report"} == families
    from memcap import cli
    assert families <= set(cli.FAMILIES)
    assert {p.name for p in SRC.iterdir() if (p / "checks.py").is_file()} == families
    ignored = set(re.findall(r"^/results/(\w+)/runs/\*$", (ROOT / ".dvcignore").read_text(), re.M))
    assert ignored <= families


def test_every_module_of_the_subjects_folder_is_a_registered_subject():
    """capacity/subjects/ is a plug-in folder: each module but check.py is a subject that registers itself."""
    from memcap.capacity import subjects

    files = {p.stem for p in (SRC / "capacity" / "subjects").glob("*.py")} - {"__init__", "check"}
    assert {s.__name__.rsplit(".", 1)[1] for s in subjects.registered().values()} == files
