"""The GPU branch without a GPU: the device query faked (torch.cuda.is_available, CUDA_VISIBLE_DEVICES,
SLURM's GPU variables), and every trainer's step run on torch's `meta` device, where a tensor made on
the wrong device fails at once (a planted one shows that the check can fail)."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import torch

from memcap.training.batches import BatchStream

from memcap import params as mp
from memcap import runtime
from memcap.dpc import train as dpc_train
from memcap.mlt_synthetic import grid as mlt_grid
from memcap.models.aot import AoT
from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import make_data
from memcap.tasks.mlt_sizes import CHUNK_ROWS
from memcap.training import step as mlt_step

GPU_VARS = ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE")


@pytest.fixture
def no_gpu_vars(monkeypatch):
    for var in GPU_VARS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_auto_takes_a_visible_gpu(no_gpu_vars):
    no_gpu_vars.setattr(torch.cuda, "is_available", lambda: True)
    no_gpu_vars.setattr(torch.cuda, "get_device_name", lambda device=None: "Fake H100")
    no_gpu_vars.setenv("CUDA_VISIBLE_DEVICES", "0")
    assert runtime.pick_device("auto") == torch.device("cuda")


def test_auto_without_a_gpu_trains_on_the_cpu(no_gpu_vars):
    no_gpu_vars.setattr(torch.cuda, "is_available", lambda: False)
    assert runtime.pick_device("auto") == torch.device("cpu")
    no_gpu_vars.setenv("CUDA_VISIBLE_DEVICES", "")          # an empty list is no GPU
    assert runtime.pick_device("auto") == torch.device("cpu")


@pytest.mark.parametrize("var, value", [("CUDA_VISIBLE_DEVICES", "0"), ("SLURM_JOB_GPUS", "1"),
                                        ("SLURM_GPUS_ON_NODE", "2")])
def test_a_job_given_a_gpu_it_cannot_use_stops_with_the_reason(no_gpu_vars, var, value):
    no_gpu_vars.setattr(torch.cuda, "is_available", lambda: False)
    no_gpu_vars.setenv(var, value)
    no_gpu_vars.setattr(torch.version, "cuda", None)
    with pytest.raises(RuntimeError, match=rf"given a GPU \({{'{var}': '{value}'}}\).*CPU-only build"):
        runtime.pick_device("auto")
    assert runtime.pick_device("cpu") == torch.device("cpu")            # on purpose: allowed
    no_gpu_vars.setattr(torch.version, "cuda", "12.6")
    with pytest.raises(RuntimeError, match=r"built for CUDA 12.6 but sees no device"):
        runtime.pick_device("auto")


def test_cuda_requested_without_one_names_the_torch_build(no_gpu_vars):
    no_gpu_vars.setattr(torch.cuda, "is_available", lambda: False)
    no_gpu_vars.setattr(torch.version, "cuda", None)
    with pytest.raises(RuntimeError, match=r"device='cuda' was requested.*CPU-only build"):
        runtime.pick_device("cuda")


def test_determinism_on_a_gpu_pins_cublas_and_turns_tf32_off(no_gpu_vars):
    no_gpu_vars.setattr(torch.cuda, "is_available", lambda: True)
    no_gpu_vars.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    no_gpu_vars.setattr(torch.backends.cudnn, "allow_tf32", True)
    torch.set_float32_matmul_precision("high")          # TF32 allowed, as a user's code might leave it
    torch.use_deterministic_algorithms(False)            # as a fresh process starts (an earlier test set it)
    try:
        runtime.enable_determinism()
        import os
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
        assert torch.get_float32_matmul_precision() == "highest" and not torch.backends.cudnn.allow_tf32
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.set_float32_matmul_precision("highest")


# Trains the MLT and the DPC model a few steps each, in a fresh process: which modules it imported.
_TRAIN_BOTH = """
import sys
from memcap.dpc.train import TrainConfig as DPCConfig, train as train_dpc
from memcap.training.config import TrainConfig
from memcap.training.loop import train
from memcap.models.aot import AoT
from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.lookup import make_task
from memcap.tasks.mlt_data import make_data
data = make_data([0], dataset_size=16, context_size=3, input_dim=6, context="random",
                 task="classification", num_classes=5)
model = MLTAttention([0], input_dim=6, heads=2, context_size=3, out_dim=5)
train(model, data, [0], TrainConfig(lr=1e-2, batch_size=8, epochs=1, min_steps=4, eval_every=2, early_stop=True),
      classification=True, progress=False)
train_dpc(AoT([0], vocab=6, dim=4, head_dim=2, heads=2), make_task(6, 16, seed=0), [0],
          DPCConfig(batch_size=8, batches=2, epochs=2, window=2), progress=False)
"""


def test_a_job_imports_no_compiler():
    """A job's set-up keeps determinism (warn-only) without importing torch._dynamo
    (torch.use_deterministic_algorithms imports it: ~1 s of every job), and so does training:
    torch.optim's optimizers import it on their first call (~1.3 CPU-s of every training job), the
    trainers step with StackedAdam and drive torch's LR schedulers without one. One torch.optim.Adam
    step afterwards does import it (the check can fail). One process for all (each costs a torch import)."""
    set_up = ("from memcap import runtime; runtime.prepare(1); import torch; "
              "print(torch.are_deterministic_algorithms_enabled(), "
              "torch.is_deterministic_algorithms_warn_only_enabled(), 'torch._dynamo' in sys.modules)\n")
    probe = "print('torch._dynamo' in sys.modules)\n"
    adam = ("import torch; p = torch.zeros(2, requires_grad=True); p.grad = torch.ones(2); "
            "torch.optim.Adam([p]).step()\n")
    out = subprocess.run([sys.executable, "-c", "import sys\n" + set_up + _TRAIN_BOTH + probe + adam + probe],
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "False", "False", "True"], out


def test_the_digits_vit_uses_eager_attention():
    """HF's sdpa attention has a nondeterministic backward on CUDA; the checks' ViTs use eager."""
    from memcap.assumptions.vision import vit_config

    cfg = vit_config({"image_size": 8, "patch_size": 4, "channels": 1, "hidden": 8, "heads": 2, "mlp": 16})
    assert cfg._attn_implementation == "eager"


# ---- every trainer's step on the meta device ------------------------------------------------------

META = torch.device("meta")


class _AdamSteps(torch.optim.Adam):
    """torch's Adam with the MLT trainer's optimizer steps (StackedAdam: update, then advance)."""

    def update(self):
        self.step()

    def advance(self):
        pass


def _mlt_step(plant=None):
    seeds = [0, 1]
    data = make_data(seeds, dataset_size=32, context_size=3, input_dim=6, context="random",
                     task="classification", num_classes=5).to(META)
    model = MLTAttention(seeds, input_dim=6, heads=2, context_size=3, out_dim=5).to(META)
    if plant:
        plant(model)
    opt = _AdamSteps(model.parameters(), lr=1e-2)   # torch's fused kernel has no meta version
    batches = BatchStream(seeds, [32, 32], 16, META)
    batches.steps_ahead = 2
    for _ in range(3):      # past a block's end: the stream's next draw goes to the device too
        mlt_step.train_step(model, data, batches, opt, classification=True)
    return model


def _dpc_step(plant=None):
    seeds = [0, 1]
    model = AoT(seeds, vocab=6, dim=4, head_dim=4, heads=2, width=0, layers=1, per_head_proj=False).to(META)
    if plant:
        plant(model)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    tokens = torch.zeros(len(seeds), 8, 3, dtype=torch.long, device=META)
    acc, loss = (torch.zeros(len(seeds), 4, device=META) for _ in range(2))
    dpc_train.train_step(model, tokens, opt, acc, loss, step=1)
    return model


@pytest.mark.parametrize("step", [_mlt_step, _dpc_step])
def test_a_trainer_step_makes_every_tensor_on_the_models_device(step):
    model = step()
    assert {p.device for p in model.parameters()} == {META}


@pytest.mark.parametrize("step", [_mlt_step, _dpc_step])
def test_a_tensor_planted_on_the_cpu_is_caught(step):
    def plant(model):
        real = model.forward

        def forward(*args, **kwargs):
            out = real(*args, **kwargs)
            return out + torch.ones(out.shape[-1])      # a CPU tensor where the model's device belongs
        model.forward = forward

    with pytest.raises(RuntimeError, match="not on the expected device meta|same device"):
        step(plant)


# ---- host memory: the data is built in place, and a job asks for what its data needs ----------------

def test_data_is_built_in_place_and_its_peak_is_what_the_job_is_sized_for():
    settings = {"task": "regression", "context": "random", "vary": "context_size", "input_dim": 16,
                "heads": 2, "context_size": 8, "head_dim": None, "num_classes": 100, "seeds": [0, 1, 2]}
    T = 9000
    tracemalloc.start()
    data = make_data(settings["seeds"], dataset_size=T, context_size=8, input_dim=16, context="random",
                     task="regression")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stacked = sum(t.numel() * t.element_size() for t in (data.queries, data.contexts, data.labels))
    estimate = mlt_grid.data_bytes(settings, 8, T)
    assert stacked <= peak <= 1.1 * stacked + 8 * CHUNK_ROWS * 8 * 16    # no second copy
    assert peak <= estimate


def test_the_largest_paper_point_asks_for_the_memory_its_data_needs():
    params = mp.load(mp.REPO_ROOT / "params.yaml", {"scale": "paper"})
    preset = mlt_grid.resolve(params["mlt_synthetic"], "paper")
    class_mb = params["resources"]["paper"]["train"]["mem_mb"]
    sizes = {(s, v, T): mlt_grid.data_bytes(mlt_grid.sweep_settings(preset, s), v, T)
             for s, v, T in mlt_grid.grid_points(preset)}
    (sweep, value, T), peak = max(sizes.items(), key=lambda kv: kv[1])
    assert (sweep, value, T) == ("regress_scale_ctx_size", 60, 90000)
    assert peak > 2.5 * 2 ** 30            # a job's 2 seeds x 90,000 x 60 x 64 float32 contexts
    small_class = 2000     # e.g. resources.published.train: the job asks for what its data needs
    asked = mlt_grid.job_mem_mb(mlt_grid.sweep_settings(preset, sweep), value, T, small_class)
    assert asked * 2 ** 20 >= 1.5 * peak and asked > small_class
    # a small point keeps its class's request
    assert mlt_grid.job_mem_mb(mlt_grid.sweep_settings(preset, "head_saturation_h4"), 4, 550, class_mb) == class_mb
    assert np.isfinite(peak)



def test_a_job_treats_denormals_as_zero_on_the_cpu():
    """memcap.runtime.prepare flushes float32 denormals (a trained model's tiny gradients and moments
    otherwise take the CPU's slow path); before it, the same product keeps its denormal."""
    code = ("import torch; from memcap import runtime; tiny = torch.tensor([1e-40]); "
            "before = float(tiny * 1.0); runtime.prepare(1); print(before, float(tiny * 1.0))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert float(out[0]) > 0 and float(out[1]) == 0.0, out
