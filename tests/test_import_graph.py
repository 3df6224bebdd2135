"""memcap's imports point down: leaves, params, the training package, the families, then what runs or
reads them (bundle, suite, report), then the CLI. No cycle; a family imports another family only
through that family's public modules; the report imports no training code; params imports no family.

The checker reads the source (ast), so it runs on memcap and, to show that it can fail, on small fake
trees with an upward import.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memcap"
FAMILIES = ("mlt_synthetic", "theory", "dpc", "assumptions", "capacity")
# The floors, from the ground up: a module imports only modules of its own floor or below.
FLOORS = (
    {"memcap", "errors", "lazy_import", "memory_limit", "scales", "keys", "bounds", "progress", "quick_exit", "run_lock", "runtime",
     "stats", "plotting", "provenance", "results", "run_summary", "checkpoint", "stacked_adam", "models", "tasks"},
    {"params"},
    {"training"},
    set(FAMILIES),
    {"bundle", "suite", "report"},
    {"cli", "__main__"},
)
# What another family or a higher floor may import of a family; the rest is the family's own.
PUBLIC = {
    "mlt_synthetic": {"grid", "packing", "checks"},   # the sweeps, jobs and run names; the pack planner
    "capacity": {"aggregate", "words", "checks"},     # its tables, their words and verdicts (the report)
    "dpc": {"fits", "train", "checks"},               # the original's saturation cut (the report); DPC's own
                                                      # loop, which capacity's DPC presets train through
    "theory": {"checks"},
    "assumptions": {"checks", "aggregate"},   # its tables' words for a SKIPPED row (the report's claims)
}


def _module_name(path: Path, src: Path) -> str:
    parts = path.relative_to(src.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """memcap module -> the memcap modules it imports (any depth in the file: lazy imports count)."""
    graph = {}
    for path in src.rglob("*.py"):
        mod, deps = _module_name(path, src), set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memcap"):
                deps.add(node.module)
                deps |= {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("memcap")}
        graph[mod] = deps
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A loop of imports (a package's own __init__ and the package itself left out), or None."""
    graph = {m: {d for d in deps if not m.startswith(d + ".") and d != "memcap"} for m, deps in graph.items()}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == "open":
                return stack[stack.index(d):] + [d]
            if d not in state and (c := visit(d)):
                return c
        state[m] = "done"
        stack.pop()
        return None

    for m in sorted(graph):
        if m not in state and (c := visit(m)):
            return c
    return None


def _room(module: str) -> str:
    """The top-level part a module belongs to: memcap.training.loop -> training."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _floor(module: str) -> int:
    room = _room(module)
    found = [i for i, rooms in enumerate(FLOORS) if room in rooms]
    if not found:
        raise AssertionError(f"{module}: its part {room!r} is on no floor of tests/test_import_graph.py FLOORS")
    return found[0]


def _family(module: str) -> str | None:
    """The family a module belongs to: its package, or its command module memcap.cli.<family>."""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in FAMILIES:
        return parts[1]
    if len(parts) > 2 and parts[1] == "cli" and parts[2] in FAMILIES:
        return parts[2]
    return None


def violations(src: Path = SRC) -> list[str]:
    """Every import that breaks the rules above, as 'a -> b: why'."""
    graph, out = import_graph(src), []
    if cycle := find_cycle(graph):
        out.append(" -> ".join(cycle) + ": a cycle")
    for m, deps in sorted(graph.items()):
        for d in sorted(deps):
            if d == "memcap":
                continue
            if _floor(d) > _floor(m):
                out.append(f"{m} -> {d}: runs up from floor {_floor(m)} to floor {_floor(d)}")
            family = _family(d)
            inner = d.split(".")[2] if len(d.split(".")) > 2 else None
            if family and _family(m) != family and inner is not None and inner not in PUBLIC[family]:
                out.append(f"{m} -> {d}: {family}'s own module (public: {sorted(PUBLIC[family])})")
            if _room(m) == "report" and _room(d) in ("training", "models"):
                out.append(f"{m} -> {d}: the report reads tables, it trains nothing")
            if m == "memcap.params" and _family(d):
                out.append(f"{m} -> {d}: params configures the families, it imports none")
    return out


def test_memcaps_imports_point_down():
    assert violations() == []


def test_the_families_public_modules_exist():
    missing = [f"{family}.{mod}" for family, mods in PUBLIC.items() for mod in mods
               if not (SRC / family / f"{mod}.py").exists()]
    assert missing == []


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A fake memcap at root/memcap: {relative path: source}; every package gets an __init__.py."""
    src = root / "memcap"
    for rel, text in {"__init__.py": "", **files}.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(src).parents:
            (src / parent / "__init__.py").touch()
        path.write_text(text)
    return src


CLEAN = {"errors.py": "", "params.py": "from memcap import errors\n",
         "training/loop.py": "from memcap.errors import x\n",
         "mlt_synthetic/grid.py": "from memcap.training import loop\n",
         "mlt_synthetic/figures.py": "from memcap.mlt_synthetic import grid\n",
         "theory/construct.py": "from memcap.mlt_synthetic.grid import FAMILY\n",
         "report/html.py": "from memcap import params\n",
         "cli/theory.py": "import memcap.theory.construct\n"}


@pytest.mark.parametrize("bad, expected", [
    ({"training/loop.py": "from memcap.mlt_synthetic.grid import EVAL_BATCH\n"},
     "memcap.training.loop -> memcap.mlt_synthetic.grid: runs up from floor 2 to floor 3"),
    ({"params.py": "def f():\n    from memcap.mlt_synthetic import checks\n", "mlt_synthetic/checks.py": ""},
     "memcap.params -> memcap.mlt_synthetic.checks: params configures the families, it imports none"),
    ({"theory/construct.py": "from memcap.mlt_synthetic.figures import plt\n"},
     "memcap.theory.construct -> memcap.mlt_synthetic.figures: mlt_synthetic's own module"),
    ({"report/html.py": "from memcap.training.loop import x\n"},
     "memcap.report.html -> memcap.training.loop: the report reads tables, it trains nothing"),
    ({"errors.py": "from memcap.params import y\n"}, "memcap.errors -> memcap.params -> memcap.errors: a cycle"),
], ids=["upward", "params_imports_a_family", "another_familys_internals", "report_trains", "cycle"])
def test_the_checker_finds_each_kind_of_bad_import(tmp_path, bad, expected):
    assert violations(_tree(tmp_path / "clean", CLEAN)) == []
    found = violations(_tree(tmp_path / "bad", {**CLEAN, **bad}))
    assert any(v.startswith(expected) for v in found), found
