"""params.yaml: load, validate against workflow/schemas/ (defaults filled in), resolve a family's preset.

params.yaml is the one source of truth: Snakemake reads it as its configfile and DVC tracks its keys.
Validation happens before any job starts, and a bad value stops the run with a message that names the
key, the value and what is allowed. Torch-free: Snakemake imports this module to build the DAG.

Jobs never re-read params.yaml: the Snakefile writes the config it built the DAG from (params.yaml plus
`--configfile` and `--config` overrides) with `resolve` (validated once, then remembered) and
`write_resolved`, and every job reads that file.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Callable

import yaml

from memcap.lazy_import import OnFirstUse

# Imported when something is validated: a job that reads its resolved params never validates.
jsonschema = OnFirstUse("jsonschema")
referencing = OnFirstUse("referencing")
referencing_jsonschema = OnFirstUse("referencing.jsonschema")

from memcap.errors import ParamsError  # noqa: F401  (re-exported: memcap.params.ParamsError)
from memcap.scales import SCALES, scale_rank, shipped_scale

REPO_ROOT = Path(__file__).resolve().parents[2]
MAIN_SCHEMA = "params.schema.yaml"
# libyaml's parser where PyYAML has it: every job and every Snakemake start reads params and the
# schemas, and the pure-Python parser took ~0.25 s of each (the same safe constructor either way).
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
FAMILIES = ("mlt_synthetic", "theory", "dpc", "assumptions", "capacity")   # each has a preset per scale


def cross_field_checks() -> list[Callable[[dict], list[str]]]:
    """Each family's `memcap.<family>.checks.problems`: what JSON Schema cannot say about its section
    (e.g. head_dim <= input_dim), torch-free. Found by name, so that the params stay below the families
    they configure; a family without its checks module fails here, never validates unchecked."""
    return [importlib.import_module(f"memcap.{family}.checks").problems for family in FAMILIES]


def slow_jobs(params: dict[str, Any]) -> list[str]:
    """Each training family's `memcap.<family>.checks.slow_jobs`: jobs of the active presets that cannot
    finish within their runtime limit (memcap.training.duration); said before anything is submitted,
    not an error (a retry resumes from the job's checkpoint, and a local run has no limit)."""
    return [line for family in FAMILIES
            for line in getattr(importlib.import_module(f"memcap.{family}.checks"), "slow_jobs", lambda p: [])(params)]


def schema_dir() -> Path:
    """$MEMCAP_SCHEMA_DIR, else the project we run in (cwd: Snakemake and the rules run from the
    project root), else the checkout this package was installed from."""
    if os.environ.get("MEMCAP_SCHEMA_DIR"):
        return Path(os.environ["MEMCAP_SCHEMA_DIR"])
    here = Path.cwd() / "workflow" / "schemas"
    return here if (here / MAIN_SCHEMA).exists() else REPO_ROOT / "workflow" / "schemas"


def _load_registry(strict: bool = False):
    """The main schema and a registry of every schema file. strict: the family files without their
    `$schema`, so that jsonschema keeps the strict validator class when it follows a $ref into them
    (it picks a file's own dialect class otherwise)."""
    resources, folder = {}, schema_dir()
    for path in sorted(folder.glob("*.schema.yaml")):
        contents = yaml.load(path.read_text(), Loader=FAST_LOADER)
        family = path.name.removesuffix(".schema.yaml")
        if family in FAMILIES:   # a family's schema parts written in code (capacity: each subject's keys)
            contents.setdefault("$defs", {}).update(
                getattr(importlib.import_module(f"memcap.{family}.checks"), "schema_defs", dict)())
        if strict and path.name != MAIN_SCHEMA:
            contents.pop("$schema", None)
        resources[path.name] = referencing_jsonschema.DRAFT202012.create_resource(contents)
    if MAIN_SCHEMA not in resources:
        raise FileNotFoundError(f"no {MAIN_SCHEMA} in {folder}")
    return resources[MAIN_SCHEMA].contents, referencing.Registry().with_resources(resources.items())


def _is_integer(checker, instance) -> bool:
    """Strict: 4.0 is not an integer (JSON Schema's default says it is; torch then fails on it)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance) -> bool:
    """Strict: a finite int or float; .inf and .nan are YAML numbers that no setting can take."""
    return (isinstance(instance, (int, float)) and not isinstance(instance, bool)
            and math.isfinite(instance))


def _strictly_invalid(instance) -> bool:
    return isinstance(instance, float) and (instance.is_integer() or not math.isfinite(instance))


def _strict(validator_class):
    checker = validator_class.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    return jsonschema.validators.extend(validator_class, type_checker=checker)


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


def _describe(error) -> str:
    """One line for a jsonschema.ValidationError: the key, the value and what is allowed."""
    if error.validator == "anyOf" and error.context:   # e.g. scale: a name or a mapping; say what failed
        # the branch of the instance's own type got furthest: its error, not "not a string"
        best = min(error.context, key=lambda e: (e.validator == "type", -len(e.absolute_path)))
        return _describe(best)
    key = _key(error.absolute_path)
    if "propertyNames" in error.relative_schema_path or "propertyNames" in error.schema_path:
        allowed = error.schema.get("enum") or f"names matching {error.schema.get('pattern')!r}"
        name = error.instance if str(error.instance).isprintable() else repr(error.instance)   # 'mine\n'
        return f"{key}.{name}: not an allowed key; allowed keys are {allowed}"
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"{key}: unknown key(s) {extra}; allowed keys are {allowed}"
    if error.validator == "unevaluatedProperties":   # a search preset: the search's keys and its subject's
        extra = sorted(re.findall(r"'([^']*)'", error.message.split("(", 1)[-1]))
        return (f"{key}: unknown key(s) {extra}; allowed keys are the search's and its subject's "
                f"(workflow/schemas/capacity.schema.yaml, memcap.capacity.subjects)")
    if error.validator == "required":
        return f"{key}: {error.message}"
    allowed = {
        "type": lambda s: (f"a finite number" if s["type"] == "number" and isinstance(error.instance, float)
                           else f"a whole number, written without a decimal point" if s["type"] == "integer"
                           and isinstance(error.instance, float) else f"a value of type {s['type']}"),
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


def _full_match(validator_class):
    """`pattern` as a whole-string match: JSON Schema's search lets `$` match before a final newline,
    so 'mine\\n' would pass '^[a-z]+$' and fail later inside Snakemake."""
    def pattern(validator, regex, instance, schema):
        if validator.is_type(instance, "string") and not re.fullmatch(regex, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {regex!r}")

    return jsonschema.validators.extend(validator_class, {"pattern": pattern})


INHERITS = ("capacity",)   # families whose presets may be variants: `from: <preset>` and the keys that differ


def _merged(base: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """base with given's keys over it; a mapping in both (e.g. `training`) is merged key by key."""
    out = copy.deepcopy(base)
    for k, v in given.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else copy.deepcopy(v)
    return out


def inherit(params: dict[str, Any]) -> list[str]:
    """Replace (in place) every variant preset of INHERITS (`from: <preset>` plus the keys that differ,
    big_vision's configs' way) with the full preset it stands for, so the schema, the checks, Snakemake,
    the jobs and every key of a result see whole presets, and a variant's results are the same files as
    the same preset written out. A variant of a variant is resolved in order. Returns the problems
    (an unknown or circular `from`)."""
    problems = []
    for family in INHERITS:
        section = params.get(family)
        if not isinstance(section, dict):
            continue
        done: dict[str, Any] = {}

        def full(name: str, chain: tuple[str, ...]) -> Any:
            p = section[name]
            if name in done or not isinstance(p, dict) or "from" not in p:
                return done.get(name, p)
            base = p["from"]
            if base in chain + (name,) or base not in section or not isinstance(section[base], dict):
                bases = sorted(n for n, q in section.items() if isinstance(q, dict) and n != name)
                why = "a circular chain" if base in chain + (name,) else "not a preset of the section"
                raise ParamsError(f"{family}.{name}.from: got {base!r} ({why}); allowed: one of {bases}")
            done[name] = _merged(full(base, chain + (name,)), {k: v for k, v in p.items() if k != "from"})
            return done[name]

        for name in list(section):
            try:
                section[name] = full(name, ())
            except ParamsError as err:
                problems.append(str(err))
    return problems


def validate(params: dict[str, Any]) -> dict[str, Any]:
    """Fill in schema defaults (in place) and raise ParamsError listing every schema violation and
    every cross-field problem. Variant presets (`from:`) are resolved first (inherit)."""
    inherited = inherit(params)
    if inherited:
        raise ParamsError("invalid params:\n  " + "\n  ".join(inherited))
    schema, registry = _load_registry()
    validator = _with_defaults(_strict(jsonschema.Draft202012Validator))(schema, registry=registry)
    for _ in validator.iter_errors(params):   # a first pass fills in defaults, so `required` sees them
        pass
    errors = list(validator.iter_errors(params))
    # 4.0 as an integer, .inf or .nan as a number: JSON Schema accepts them, no setting can take them
    strict_schema, strict_registry = _load_registry(strict=True)
    # and a name with a final newline: `$` matches before it, a whole-string match does not
    strict = _full_match(_strict(jsonschema.Draft202012Validator))(strict_schema, registry=strict_registry)
    errors += [e for e in strict.iter_errors(params)
               if (e.validator == "type" and _strictly_invalid(e.instance)
                   and not any(e.absolute_path == f.absolute_path for f in errors))
               or (e.validator == "pattern" and not any(
                   e.absolute_path == f.absolute_path and e.instance == f.instance for f in errors))]
    # a preset whose subject's keys failed has them unevaluated too: its own errors say what is wrong
    errors = [e for e in errors if e.validator != "unevaluatedProperties" or not any(
        f is not e and list(f.absolute_path)[:len(e.absolute_path)] == list(e.absolute_path) for f in errors)]
    problems = [_describe(e) for e in sorted(errors, key=lambda e: list(e.absolute_path))]
    if not any(list(e.absolute_path)[:1] == ["scale"] for e in errors):   # else the schema's message says it
        problems += _scale_problems(params.get("scale", SCALES[0]), params)
    if not problems:
        problems = [p for check in cross_field_checks() for p in check(params)]
    if problems:
        raise ParamsError("invalid params:\n  " + "\n  ".join(problems))
    return params


def load(path: str | os.PathLike = "params.yaml", overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read and validate a params file (with optional top-level overrides, e.g. {'scale': 'paper'}).
    A job's resolved params (write_resolved: validated, defaults filled in, named by the hash of its
    text) are read as they are, unless overridden or edited since (then the name no longer matches)."""
    params = read_yaml(path)
    if not overrides and _is_resolved(path):
        return params
    params.update(overrides or {})
    return validate(params)


def _is_resolved(path: str | os.PathLike) -> bool:
    """Whether `path` is a file write_resolved wrote, unchanged: params-<its text's hash>.yaml."""
    name = Path(path).name
    return (name.startswith("params-") and name.endswith(".yaml")
            and name == _resolved_name(Path(path).read_text()))


def _resolved_name(text: str) -> str:
    return f"params-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"


class _UniqueKeyLoader(FAST_LOADER):
    """YAML that refuses a key written twice in one mapping (PyYAML keeps the last one silently, DVC
    refuses the file: the two would run different settings)."""

    def construct_mapping(self, node, deep=False):
        seen = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ParamsError(f"{key_node.start_mark.name}, line {key_node.start_mark.line + 1}: the key "
                                  f"{key!r} is written twice in one mapping (first on line {seen[key]}); "
                                  f"allowed: each key once")
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """A params or config file as a mapping; a syntax error, a duplicate key, a missing file or a
    file that is not a mapping raises ParamsError naming the file and the line."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ParamsError(f"{path}: cannot read the file ({err.strerror})") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)   # noqa: S506 (a safe loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ParamsError(f"{path}{where}: not valid YAML: {err.problem or err}") from None
    except ParamsError as err:
        raise ParamsError(str(err).replace("<unicode string>", str(path))) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: got a {type(data).__name__} at the top level; allowed: a mapping of keys")
    return data


def presets(params: dict[str, Any], family: str) -> list[str]:
    """The preset names a family defines (quick and paper, and any of your own)."""
    section = params.get(family)
    return sorted(section) if isinstance(section, dict) else []


def _scale_problems(scale: Any, params: dict[str, Any]) -> list[str]:
    """What the schema cannot say: every family gets a preset that its section defines (the schema
    has checked the form: one name, or a mapping of families and `default` to names). A family left
    out is an error, never a silent fall-back to quick."""
    if isinstance(scale, str):
        return [f"scale: got {scale!r}, but {family} has no preset {scale!r}; allowed: a preset every "
                f"family defines, or a mapping {{family: preset}}; {family}'s presets are {presets(params, family)}"
                for family in FAMILIES if scale not in presets(params, family)]
    if not isinstance(scale, dict) or set(scale) - {"default", *FAMILIES}:
        return []   # the schema's message says it
    problems = []
    for family in FAMILIES:
        chosen = scale.get(family, scale.get("default"))
        key = f"scale.{family}" if family in scale else "scale.default"
        if chosen is None:
            problems.append(f"scale.{family}: missing; allowed: name a preset for every family "
                            f"({list(FAMILIES)}), or give scale.default")
        elif chosen not in presets(params, family):
            problems.append(f"{key}: got {chosen!r}, which is not a preset of {family}; "
                            f"allowed: one of {presets(params, family)}")
    return problems


def dvc_scale_problem(scale: Any) -> str | None:
    """params.yaml's scale as DVC reads it: dvc.yaml tracks `scale.<family>` per stage, which one word
    (fine for Snakemake's --config scale=quick and --scale) does not have."""
    if isinstance(scale, str):
        mapping = ", ".join(f"{family}: {scale}" for family in FAMILIES)
        return (f"scale: got {scale!r} (one word); params.yaml needs one preset per family, because DVC "
                f"tracks scale.<family> in dvc.yaml: write `scale: {{{mapping}}}`")
    return None


def scales(params: dict[str, Any]) -> dict[str, str]:
    """The preset of every family: `scale: quick` sets all of them; `scale: {default: quick, dpc: paper}`
    sets one per family (validation has made sure every family has one)."""
    scale = params["scale"]
    if isinstance(scale, str):
        return {family: scale for family in FAMILIES}
    return {family: scale.get(family, scale.get("default")) for family in FAMILIES}


def job_sizes(params: dict[str, Any], kind: str, family: str | None = None) -> dict[str, Any]:
    """A job class's sizes ('train' or 'light': threads, mem_mb, runtime, gpu, ...) at the family's scale:
    params.yaml `resources`, the family's own `families` entries over the class's; family None (the
    report): the largest scale any family runs at. A shipped variant (paper_<what>) gets its scale's, a
    preset of your own quick's, unless `resources` names it."""
    by_family = scales(params)
    scale = by_family[family] if family else max(by_family.values(), key=scale_rank)
    by_scale = params["resources"].get(scale, params["resources"][shipped_scale(scale) or "quick"])
    return {**by_scale[kind], **by_scale.get("families", {}).get(family, {}).get(kind, {})}


def scale_of(params: dict[str, Any], family: str) -> str:
    return scales(params)[family]


def scale_label(params: dict[str, Any]) -> str:
    """'quick', or 'dpc=paper, theory=paper, others quick' when families differ (titles, reports)."""
    s = scales(params)
    values = set(s.values())
    if len(values) == 1:
        return values.pop()
    common = max(sorted(values), key=lambda v: sum(x == v for x in s.values()))
    return ", ".join(f"{f}={v}" for f, v in s.items() if v != common) + f", others {common}"


def preset(params: dict[str, Any], family: str) -> dict[str, Any]:
    """The active preset of one family: params[family][its scale]."""
    scale = scale_of(params, family)
    try:
        return params[family][scale]
    except KeyError:
        raise ParamsError(f"{family}.{scale}: the family {family!r} has no preset for scale={scale!r}") from None


def resolve(params: dict[str, Any], folder: str | os.PathLike) -> Path:
    """validate(params) (in place), then write_resolved(params, folder): what the Snakefile does at every
    start, twice in every SLURM job. A config that passed is remembered in folder/validated-<hash>.json,
    named by the config as given and by everything that judges it (memcap's code, the schemas,
    jsonschema's version), so the same config judged by the same code is filled in from there instead
    (~0.12 CPU-s a start). A config that fails is never remembered, and one that JSON cannot hold as it
    is (e.g. a key that is a number) is validated every time."""
    memo = Path(folder) / f"validated-{_judged_by(params)}.json"
    if memo.exists():
        validated = json.loads(memo.read_text())
        params.clear()
        params.update(validated)
    else:
        validate(params)
        text = json.dumps(params)
        if json.loads(text) == params:
            from memcap.results import write_text  # torch-free

            write_text(text, memo)
    return write_resolved(params, folder)


def _judged_by(params: dict[str, Any]) -> str:
    """Hash of a config as given (its key order too: validation fills defaults in after the keys given)
    and of what validates it."""
    from importlib.metadata import version

    h = hashlib.sha256(json.dumps(params, default=repr).encode())
    for path in [*sorted(Path(__file__).parent.rglob("*.py")), *sorted(schema_dir().glob("*.schema.yaml"))]:
        h.update(path.name.encode() + path.read_bytes())
    h.update(f"jsonschema {version('jsonschema')} referencing {version('referencing')}".encode())
    return h.hexdigest()[:16]


def write_resolved(params: dict[str, Any], folder: str | os.PathLike) -> Path:
    """Write the validated params a run was built from to folder/params-<hash>.yaml and return its path.

    The name is the content's hash, so a dry run with other settings (or a second run) never rewrites
    the file a running job reads, and jobs resubmitted by SLURM find the very same file; `load` reads
    such a file without validating it again (every job would, ~0.15 s each).
    """
    # libyaml's emitter where PyYAML has it (the same text; the pure-Python one took ~0.07 s a start)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(json.loads(json.dumps(params, sort_keys=True, default=str)), Dumper=dumper, sort_keys=True)
    path = Path(folder) / _resolved_name(text)
    if not path.exists():
        from memcap.results import write_text  # torch-free

        write_text(text, path)
    return path
