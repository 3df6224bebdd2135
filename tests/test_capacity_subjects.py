"""Capacity subjects (memcap.capacity.subjects): every registered one passes check_subject; a broken one fails
it; a subject written in one module (here a linear classifier, defined in this file) is searched end to end."""

from __future__ import annotations

import copy
import math
import sys
import types

import pytest
import torch

from memcap import params as memcap_params
from memcap.capacity import grid, rounds, subjects, summary
from memcap.capacity.store import store
from memcap.capacity.subjects.check import check_subject, example


@pytest.mark.parametrize("name", sorted(subjects.registered()))
def test_every_registered_subject_passes_the_battery(name):
    check_subject(subjects.registered()[name])


def _broken(name: str, **changes) -> types.ModuleType:
    module = types.ModuleType(f"broken_{name}")
    module.__dict__.update(vars(subjects.registered()[name]))
    module.__dict__.update(changes)
    return module


def test_a_parameter_count_that_is_not_the_modules_fails_the_battery():
    mlt = subjects.registered()["mlt"]
    broken = _broken("mlt", params_of=lambda p, H, dh: mlt.params_of(p, H, dh) + 1)
    with pytest.raises(AssertionError, match=r"mlt: params_of says \d+, its module has \d+ parameters"):
        check_subject(broken)


def test_a_pack_that_trains_its_probes_differently_fails_the_battery():
    dpc = subjects.registered()["dpc"]

    def fewer_epochs_in_a_pack(probes, p, *args, **kwargs):
        if len(probes) > 1:
            p = {**p, "training": {**p["training"], "epochs": p["training"]["epochs"] - 1}}
        dpc.train_probes(probes, p, *args, **kwargs)

    with pytest.raises(AssertionError, match="dpc: probes train differently in a pack than alone"):
        check_subject(_broken("dpc", train_probes=fewer_epochs_in_a_pack))


def test_a_forward_changed_without_its_gradient_fails_the_battery(monkeypatch):
    from memcap.models import mlt_attention
    from memcap.training.step import StaleGradient

    masked = mlt_attention.MLTAttention.masked
    monkeypatch.setattr(mlt_attention.MLTAttention, "masked", lambda self, s: masked(self, 2 * s))
    with pytest.raises(StaleGradient, match="hand-written shared-context gradient"):
        check_subject(subjects.registered()["mlt"])


# ---- a subject of one module: a linear classifier of d = H·d_h random features ---------------------------

LINEAR = '''
"""A linear classifier (W x + b) of H·d_h random Gaussian features into C classes: a throwaway subject."""
NAME = "linear"
SCHEMA = {"required": ["family", "num_classes", "pool", "training"],
          "properties": {"family": {"const": NAME}, "num_classes": {"type": "integer", "minimum": 2},
                         "pool": {"type": "integer", "minimum": 1},
                         "training": {"type": "object", "additionalProperties": False, "required": ["lr", "steps"],
                                      "properties": {"lr": {"type": "number"}, "steps": {"type": "integer"}}}}}
EXAMPLE = {"family": NAME, "num_classes": 4, "pool": 64, "heads": 2, "head_dim": 2,
           "training": {"lr": 0.1, "steps": 150}}


def probe_settings(p, heads, head_dim):
    return {"family": NAME, "width": heads * head_dim, "num_classes": p["num_classes"], "pool": p["pool"], **p["training"]}


def folder_name(p, heads, head_dim):
    return f"linear_H{heads}_dh{head_dim}"


def params_of(p, heads, head_dim):
    return (heads * head_dim + 1) * p["num_classes"]


def classes(p):
    return p["num_classes"]


def context_size(p):
    return 0


def steps(p, T, budget):
    return budget * p["training"]["steps"]


def with_lr(training, lr):
    return {**training, "lr": lr}


def model(p, heads, head_dim, seed):
    import torch
    torch.manual_seed(seed)
    return torch.nn.Linear(heads * head_dim, p["num_classes"])


def data(p, heads, head_dim, seed, T):
    import torch
    g = torch.Generator().manual_seed(10_000 + seed)
    x = torch.randn(p["pool"], heads * head_dim, generator=g)
    y = torch.randint(p["num_classes"], (p["pool"],), generator=g)
    return x[:T], y[:T]


def train_probes(probes, p, device, on_probe, skip=frozenset(), checkpoint_path=None, checkpoint_every_s=300.0,
                 progress=True, desc="capacity", cuda_graphs=False):
    import torch
    for pr in probes:
        if pr in skip:
            continue
        net = model(p, pr.heads, pr.head_dim, pr.seed)
        x, y = data(p, pr.heads, pr.head_dim, pr.seed, pr.T)
        opt = torch.optim.Adam(net.parameters(), lr=p["training"]["lr"])
        n = steps(p, pr.T, pr.budget)
        for _ in range(n):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        with torch.no_grad():
            out = net(x)
            loss = float(torch.nn.functional.cross_entropy(out, y))
            acc = float((out.argmax(1) == y).double().mean())
        on_probe(pr, {"mem_acc": acc, "mem_loss": loss, "memorized_bits": float("nan"), "best_step": n,
                      "steps_run": n, "steps_planned": n, "early_stopped": False, "wall_time_s": 0.0,
                      "segments": 1, "device": str(device), "models_in_round": len(probes)})


def memory(p, probes):
    return None


def setting(p):
    return {"model": NAME, "readout": "classification", "d_out": p["num_classes"], "variant": p.get("variant"),
            "label": f"linear C={p['num_classes']}"}


def bound(p):
    return None


def problems(p, key):
    return []
'''


@pytest.fixture
def linear_subject(monkeypatch):
    module = types.ModuleType("linear_subject")
    exec(compile(LINEAR, "linear_subject.py", "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, "linear_subject", module)
    monkeypatch.setattr(subjects, "_REGISTRY", {**subjects.registered()})
    return subjects.register(module)


def test_a_subject_of_one_module_passes_the_battery_and_is_searched_end_to_end(linear_subject, tmp_path):
    """Registered, the linear subject validates by the schema (its own keys from its SCHEMA), passes
    check_subject, and its capacity search runs every round and writes a row with T50 and its interval:
    no file of memcap changed. Its parameter count (H·d_h + 1)·C enters bits per parameter as any other."""
    check_subject(linear_subject)
    params = memcap_params.load("params.yaml")
    params["capacity"]["mine"] = {**example(linear_subject), "heads_grid": [1, 4], "head_dim_grid": [2],
                                  "seeds": [0, 1, 2, 3, 4], "t_min": 2, "max_probes": 8}
    p = memcap_params.validate(params)["capacity"]["mine"]
    assert p["rel_tol"] == 0.3 and p["family"] == "linear"
    archs = grid.architectures(p)
    trained = rounds.run(archs, p, tmp_path, torch.device("cpu"), tmp_path / "ck", progress=False, preset="mine")
    assert trained > 0
    rows = {arch: summary.row(p, *arch, store(tmp_path, p, *arch, "mine").table(), "mine", 1) for arch in archs}
    for (H, dh), r in rows.items():
        assert r["setting"] == "linear C=4" and r["param_count"] == (H * dh + 1) * 4
        assert 0 < r["capacity_ci_low"] <= r["capacity"] <= r["capacity_ci_high"] < math.inf, r
    assert rows[4, 2]["capacity"] > rows[1, 2]["capacity"]   # a wider linear map memorizes more
    # an unknown key of the subject's is named by its schema
    params["capacity"]["mine"]["vocab"] = 3
    with pytest.raises(memcap_params.ParamsError, match=r"capacity\.mine: unknown key\(s\) \['vocab'\]"):
        memcap_params.validate(copy.deepcopy(params))
