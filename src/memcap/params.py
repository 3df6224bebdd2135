"""params.yaml: load, validate against workflow/schemas/ (defaults filled in), resolve a family's preset.

params.yaml is the one source of truth: Snakemake reads it as its configfile and DVC tracks its keys.
Validation happens before any job starts, and a bad value stops the run with a message that names the
key, the value and what is allowed. Torch-free: Snakemake imports this module to build the DAG.

Jobs never re-read params.yaml: the Snakefile writes the config it built the DAG from (params.yaml plus
`--configfile` and `--config` overrides) with `write_resolved`, and every job reads that file.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable

import jsonschema
import yaml
from referencing import Registry
from referencing.jsonschema import DRAFT202012

# Each family's torch-free checks of what JSON Schema cannot express (e.g. head_dim <= input_dim).
from memcap.assumptions import checks as assumptions_checks
from memcap.capacity import checks as capacity_checks
from memcap.errors import ParamsError  # noqa: F401  (re-exported: memcap.params.ParamsError)
from memcap.dpc import checks as dpc_checks
from memcap.mlt import checks as mlt_checks
from memcap.theory import checks as theory_checks

REPO_ROOT = Path(__file__).resolve().parents[2]
MAIN_SCHEMA = "params.schema.yaml"
SCALES = ("quick", "paper")
FAMILIES = ("mlt_synthetic", "theory", "dpc", "assumptions", "capacity")   # each has a preset per scale
CROSS_FIELD_CHECKS: list[Callable[[dict], list[str]]] = [
    mlt_checks.problems, theory_checks.problems, dpc_checks.problems, assumptions_checks.problems,
    capacity_checks.problems,
]


def schema_dir() -> Path:
    """$MEMCAP_SCHEMA_DIR, else the project we run in (cwd: Snakemake and the rules run from the
    project root), else the checkout this package was installed from."""
    if os.environ.get("MEMCAP_SCHEMA_DIR"):
        return Path(os.environ["MEMCAP_SCHEMA_DIR"])
    here = Path.cwd() / "workflow" / "schemas"
    return here if (here / MAIN_SCHEMA).exists() else REPO_ROOT / "workflow" / "schemas"


def _load_registry() -> tuple[dict, Registry]:
    resources, folder = {}, schema_dir()
    for path in sorted(folder.glob("*.schema.yaml")):
        contents = yaml.safe_load(path.read_text())
        resources[path.name] = DRAFT202012.create_resource(contents)
    if MAIN_SCHEMA not in resources:
        raise FileNotFoundError(f"no {MAIN_SCHEMA} in {folder}")
    return resources[MAIN_SCHEMA].contents, Registry().with_resources(resources.items())


def _with_defaults(validator_class):
    """A validator that fills in each property's `default` (the jsonschema FAQ recipe)."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _key(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key(error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"{key}: unknown key(s) {extra}; allowed keys are {allowed}"
    if error.validator == "required":
        return f"{key}: {error.message}"
    allowed = {
        "type": lambda s: f"a value of type {s['type']}",
        "enum": lambda s: f"one of {s['enum']}",
        "minimum": lambda s: f"a number >= {s['minimum']}",
        "exclusiveMinimum": lambda s: f"a number > {s['exclusiveMinimum']}",
        "maximum": lambda s: f"a number <= {s['maximum']}",
        "minItems": lambda s: f"a list with at least {s['minItems']} item(s)",
        "uniqueItems": lambda s: "a list without repeated values",
        "pattern": lambda s: f"a string matching {s['pattern']!r}",
    }.get(error.validator, lambda s: error.message)(error.schema)
    desc = error.schema.get("description")
    hint = f" ({desc})" if desc else ""
    return f"{key}: got {error.instance!r}; allowed: {allowed}{hint}"


def validate(params: dict[str, Any]) -> dict[str, Any]:
    """Fill in schema defaults (in place) and raise ParamsError listing every schema violation and
    every cross-field problem."""
    schema, registry = _load_registry()
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema, registry=registry)
    for _ in validator.iter_errors(params):   # a first pass fills in defaults, so `required` sees them
        pass
    problems = [_describe(e) for e in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))]
    problems += _scale_problems(params.get("scale", SCALES[0]))
    if not problems:
        problems = [p for check in CROSS_FIELD_CHECKS for p in check(params)]
    if problems:
        raise ParamsError("invalid params:\n  " + "\n  ".join(problems))
    return params


def load(path: str | os.PathLike = "params.yaml", overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read and validate a params file (with optional top-level overrides, e.g. {'scale': 'paper'})."""
    params = yaml.safe_load(Path(path).read_text()) or {}
    params.update(overrides or {})
    return validate(params)


def _scale_problems(scale: Any) -> list[str]:
    """`scale` is one word for every family, or a mapping family -> scale (with an optional default)."""
    if isinstance(scale, str):
        return [] if scale in SCALES else [f"scale: got {scale!r}; allowed: one of {list(SCALES)}, "
                                           f"or a mapping {{family: scale}} over {['default', *FAMILIES]}"]
    if not isinstance(scale, dict):
        return [f"scale: got {scale!r}; allowed: one of {list(SCALES)} or a mapping {{family: scale}}"]
    problems = [f"scale.{k}: unknown family; allowed keys are {['default', *FAMILIES]}"
                for k in scale if k not in ("default", *FAMILIES)]
    return problems + [f"scale.{k}: got {v!r}; allowed: one of {list(SCALES)}"
                       for k, v in scale.items() if k in ("default", *FAMILIES) and v not in SCALES]


def scales(params: dict[str, Any]) -> dict[str, str]:
    """The scale of every family: `scale: quick` sets all of them; `scale: {default: quick, dpc: paper}`
    sets one per family (a family not named takes the default, else quick)."""
    scale = params["scale"]
    if isinstance(scale, str):
        return {family: scale for family in FAMILIES}
    return {family: scale.get(family, scale.get("default", SCALES[0])) for family in FAMILIES}


def scale_of(params: dict[str, Any], family: str) -> str:
    return scales(params)[family]


def scale_label(params: dict[str, Any]) -> str:
    """'quick', or 'dpc=paper, theory=paper, others quick' when families differ (titles, reports)."""
    s = scales(params)
    values = set(s.values())
    if len(values) == 1:
        return values.pop()
    common = max(SCALES, key=lambda v: sum(x == v for x in s.values()))
    return ", ".join(f"{f}={v}" for f, v in s.items() if v != common) + f", others {common}"


def preset(params: dict[str, Any], family: str) -> dict[str, Any]:
    """The active preset of one family: params[family][its scale]."""
    scale = scale_of(params, family)
    try:
        return params[family][scale]
    except KeyError:
        raise ParamsError(f"{family}.{scale}: the family {family!r} has no preset for scale={scale!r}") from None


def write_resolved(params: dict[str, Any], folder: str | os.PathLike) -> Path:
    """Write the validated params a run was built from to folder/params-<hash>.yaml and return its path.

    The name is the content's hash, so a dry run with other settings (or a second run) never rewrites
    the file a running job reads, and jobs resubmitted by SLURM find the very same file.
    """
    text = yaml.safe_dump(json.loads(json.dumps(params, sort_keys=True, default=str)), sort_keys=True)
    path = Path(folder) / f"params-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.exists():
        from memcap.results import write_text  # torch-free

        write_text(text, path)
    return path
