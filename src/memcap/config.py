"""params.yaml: load, validate against workflow/schemas/, and resolve the `scale` preset.

params.yaml is the one source of truth: Snakemake reads it as its configfile and DVC tracks its keys.
Validation happens before any job starts, and a bad value stops the run with a message that names the
key, the value and what is allowed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from referencing import Registry
from referencing.jsonschema import DRAFT202012

REPO_ROOT = Path(__file__).resolve().parents[2]
MAIN_SCHEMA = "params.schema.yaml"


def schema_dir() -> Path:
    """$MEMCAP_SCHEMA_DIR, else the project we run in (cwd: Snakemake and the rules run from the
    project root), else the checkout this package was installed from."""
    if os.environ.get("MEMCAP_SCHEMA_DIR"):
        return Path(os.environ["MEMCAP_SCHEMA_DIR"])
    here = Path.cwd() / "workflow" / "schemas"
    return here if (here / MAIN_SCHEMA).exists() else REPO_ROOT / "workflow" / "schemas"


class ParamsError(ValueError):
    """params.yaml is invalid; the message lists every problem, one per line."""


def _load_registry() -> tuple[dict, Registry]:
    resources, folder = {}, schema_dir()
    for path in sorted(folder.glob("*.schema.yaml")):
        contents = yaml.safe_load(path.read_text())
        resources[path.name] = DRAFT202012.create_resource(contents)
    if MAIN_SCHEMA not in resources:
        raise FileNotFoundError(f"no {MAIN_SCHEMA} in {folder}")
    return resources[MAIN_SCHEMA].contents, Registry().with_resources(resources.items())


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
    """Raise ParamsError listing every schema violation and every cross-field problem."""
    schema, registry = _load_registry()
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    problems = [_describe(e) for e in sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))]
    if not problems:
        problems = _cross_field_problems(params)
    if problems:
        raise ParamsError("invalid params.yaml:\n  " + "\n  ".join(problems))
    return params


def _cross_field_problems(params: dict[str, Any]) -> list[str]:
    """Rules JSON Schema cannot express (e.g. head_dim <= input_dim); families register theirs here."""
    from memcap import families  # late import: families import this module

    problems = []
    for check in families.CROSS_FIELD_CHECKS:
        problems.extend(check(params))
    return problems


def load(path: str | os.PathLike = "params.yaml", overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read and validate params.yaml (with optional top-level overrides, e.g. {'scale': 'paper'})."""
    params = yaml.safe_load(Path(path).read_text()) or {}
    params.update(overrides or {})
    return validate(params)


def preset(params: dict[str, Any], family: str) -> dict[str, Any]:
    """The active preset of one family: params[family][params['scale']]."""
    scale = params["scale"]
    try:
        return params[family][scale]
    except KeyError:
        raise ParamsError(f"{family}.{scale}: the family {family!r} has no preset for scale={scale!r}") from None
