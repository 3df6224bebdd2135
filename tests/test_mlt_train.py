"""MLT training protocol: steps rule, LR schedule, lowest-loss checkpoint, early stop, resume."""

import math
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from memcap import checkpoint
from memcap.models.mlt_attention import MLTAttention
from memcap.tasks.mlt_data import make_data
from memcap.training.config import TrainConfig
from memcap.training.evaluate import evaluate
from memcap.training.loop import train
from memcap.training.losses import loss_and_hits
from memcap.training.schedule import mlt_num_steps, warmup_cosine


def test_steps_rule_matches_the_paper_table():
    # MLT App. A: T -> S = max(floor(500 T / 256), 50k)
    assert [mlt_num_steps(T, 50_000, 500, 256) for T in (10_000, 30_000, 50_000, 90_000, 130_000)] == \
        [50_000, 58_593, 97_656, 175_781, 253_906]
    assert mlt_num_steps(10_000, 300_000, 500, 256) == 300_000


def original_lr(step: int, total_steps: int, base_lr: float) -> float:
    """The original's schedule in closed form: LinearLR from 0.01·lr to lr over W = floor(S/20) steps,
    then cosine to 0 over S − W (what memcap wrote by hand before using torch's schedulers)."""
    warmup = total_steps // 20
    if step < warmup:
        return base_lr * (0.01 + (1 - 0.01) * step / warmup)
    span = max(total_steps - warmup, 1)
    return base_lr * (1 + math.cos(math.pi * (step - warmup) / span)) / 2


@pytest.mark.parametrize("total", [5, 19, 20, 100, 1000, 58_593])
def test_lr_schedule_equals_the_original_closed_form(total):
    """torch's SequentialLR([LinearLR, CosineAnnealingLR]) gives the original's learning rate at every
    step, to float rounding in double and exactly once rounded to the fp32 the parameters use. It drives
    what the trainer's StackedAdam gives it: a learning rate without parameters (no optimizer step)."""
    from memcap.stacked_adam import _LearningRate

    opt = _LearningRate(1e-3)
    sched = warmup_cosine(opt, total)
    for step in range(total):
        lr, want = opt.param_groups[0]["lr"], original_lr(step, total, 1e-3)
        assert math.isclose(lr, want, rel_tol=1e-12, abs_tol=1e-18), (step, lr, want)
        assert np.float32(lr) == np.float32(want), (step, lr, want)      # fp32 rounds both alike
        sched.step()
    warm = total // 20
    assert original_lr(0, total, 1e-3) == pytest.approx(1e-5 if warm else 1e-3)
    assert original_lr(warm, total, 1e-3) == pytest.approx(1e-3)


def _setup(seeds=(0, 1), T=48, task="classification", context="shared"):
    data = make_data(list(seeds), dataset_size=T, context_size=3, input_dim=6, context=context, task=task,
                     num_classes=5)
    model = MLTAttention(list(seeds), input_dim=6, heads=2, context_size=3,
                         out_dim=5 if task == "classification" else 1)
    return data, model


def test_reported_number_is_the_lowest_loss_checkpoint():
    data, model = _setup()
    cfg = TrainConfig(lr=3e-2, batch_size=16, epochs=1, min_steps=60, eval_every=10, early_stop=False)
    res, best = train(model, data, [0, 1], cfg, classification=True, progress=False)
    for m, r in enumerate(res):
        assert r.steps_run == 60 and not r.early_stopped
        assert 0 <= r.best_step <= 60 and r.best_step % 10 == 0
    # Re-evaluating the stored best weights reproduces the reported accuracy and loss.
    model.load_state_dict({**model.state_dict(), **best})
    loss, acc, bits = evaluate(model, data, classification=True)
    assert [r.mem_loss for r in res] == pytest.approx(loss.tolist(), rel=1e-6)
    assert [r.mem_acc for r in res] == pytest.approx(acc.tolist())
    assert [r.memorized_bits for r in res] == pytest.approx(bits.tolist(), rel=1e-6)
    assert all(0 <= r.memorized_bits <= 48 * math.log2(5) for r in res)


def test_early_stop_at_full_accuracy_and_regression_never_stops():
    data, model = _setup(T=6, context="random")   # 6 examples: easy to memorize
    cfg = TrainConfig(lr=5e-2, batch_size=6, epochs=1, min_steps=2000, eval_every=20, early_stop=True)
    res, _ = train(model, data, [0, 1], cfg, classification=True, progress=False)
    assert all(r.early_stopped and r.mem_acc == 1.0 and r.steps_run < 2000 for r in res)

    data, model = _setup(T=6, task="regression")
    cfg = TrainConfig(lr=5e-2, batch_size=6, epochs=1, min_steps=100, eval_every=20, early_stop=True)
    res, _ = train(model, data, [0, 1], cfg, classification=False, progress=False)
    assert all(not r.early_stopped and r.steps_run == 100 and math.isnan(r.mem_acc) for r in res)


def test_same_seed_same_numbers():
    cfg = TrainConfig(lr=1e-2, batch_size=16, epochs=1, min_steps=40, eval_every=10, early_stop=True)
    runs = []
    for _ in range(2):
        data, model = _setup(context="random")
        runs.append(train(model, data, [0, 1], cfg, classification=True, progress=False)[0])
    assert [_untimed(r) for r in runs[0]] == [_untimed(r) for r in runs[1]]


def test_resume_from_checkpoint_gives_identical_results(tmp_path):
    """A run interrupted after a checkpoint and resumed ends exactly like an uninterrupted run."""
    cfg = TrainConfig(lr=1e-2, batch_size=16, epochs=1, min_steps=80, eval_every=20, early_stop=False,
                      checkpoint_every_s=0)
    data, model = _setup()
    full, _ = train(model, data, [0, 1], cfg, classification=True, progress=False)

    # The same run, killed right after its checkpoint at step 40 (as a preempted SLURM job would be).
    path = tmp_path / "run.pt"
    data, model = _setup()
    _train_until(model, data, cfg, path, stop_step=40)
    saved = torch.load(path, weights_only=False)
    assert saved["state"]["step"] == 40
    data, model = _setup()                        # fresh process: new model, same params
    resumed, _ = train(model, data, [0, 1], cfg, classification=True, checkpoint_path=str(path), progress=False)
    assert [_untimed(r) for r in resumed] == [_untimed(r) for r in full]
    assert {r.segments for r in full} == {1} and {r.segments for r in resumed} == {2}


def _untimed(result):
    return {k: v for k, v in vars(result).items() if k not in ("wall_time_s", "segments")}


def test_resumed_run_records_the_training_time_of_every_segment(tmp_path):
    """wall_time_s of a resumed job = the killed segment's seconds (saved in its checkpoint) + the
    resumed segment's, not the last segment alone."""
    cfg = TrainConfig(lr=1e-2, batch_size=16, epochs=1, min_steps=80, eval_every=20, early_stop=False,
                      checkpoint_every_s=0)
    path = tmp_path / "run.pt"
    data, model = _setup()
    _train_until(model, data, cfg, path, stop_step=40, slow_s=0.6)     # the first segment: >= 0.6 s
    first = torch.load(path, weights_only=True)["state"]["train_seconds"]
    assert first >= 0.6
    data, model = _setup()
    start = time.perf_counter()
    resumed, _ = train(model, data, [0, 1], cfg, classification=True, checkpoint_path=str(path), progress=False)
    last_segment = time.perf_counter() - start
    for r in resumed:
        assert r.segments == 2
        assert r.wall_time_s == pytest.approx(first + last_segment, abs=0.2)
        assert r.wall_time_s > last_segment + 0.5


def _train_until(model, data, cfg, path, stop_step, slow_s: float = 0.0):
    """Run `train` with checkpoints at every evaluation and kill it (an exception) after stop_step;
    slow_s: seconds the first segment spends before its first checkpoint (a slower machine)."""
    real_save = checkpoint.save

    class Killed(Exception):
        pass

    def save_then_maybe_die(p, state, config):
        real_save(p, state, config)
        if slow_s and state["step"] == cfg.eval_every:   # counted by the next checkpoint's clock
            time.sleep(slow_s)
        if state["step"] >= stop_step:
            raise Killed

    checkpoint.save = save_then_maybe_die
    try:
        with pytest.raises(Killed):
            train(model, data, [0, 1], cfg, classification=True, checkpoint_path=str(path), progress=False)
    finally:
        checkpoint.save = real_save


def test_checkpoint_of_another_config_is_not_resumed(tmp_path):
    path = tmp_path / "c.pt"
    checkpoint.save(path, {"x": 1}, {"a": 1})
    assert checkpoint.load(path, {"a": 1}) == {"x": 1}
    assert checkpoint.load(path, {"a": 2}) is None


def test_memorized_bits_of_chance_and_of_a_confident_model():
    labels = torch.tensor([[0, 1, 2, 3]])
    uniform = torch.zeros(1, 4, 8)                     # C = 8: NLL = 3 bits = log2 C -> 0 bits known
    assert loss_and_hits(uniform, labels, True)[2].item() == pytest.approx(0.0, abs=1e-6)
    confident = torch.full((1, 4, 8), -50.0)
    confident[0, torch.arange(4), labels[0]] = 50.0    # NLL ~ 0 -> all 3 bits of each label
    assert loss_and_hits(confident, labels, True)[2].item() == pytest.approx(12.0, rel=1e-6)
    wrong = -confident                                 # confidently wrong: clipped at 0, not negative
    assert loss_and_hits(wrong, labels, True)[2].item() == 0.0


def _preset():
    defaults = dict(input_dim=6, heads=2, context_size=3, head_dim=None, num_classes=5, lr=3e-2, batch_size=16,
                    epochs=1, min_steps=20, eval_every=10, early_stop=False, analysis=False)
    return {"seeds": [0, 1], "checkpoint_every_s": 300, "defaults": defaults, "sweeps": {
        "by_heads": {"task": "classification", "context": "shared", "vary": "heads", "values": [1, 3],
                     "dataset_sizes": [16, 32]},
        "saturation": {"task": "classification", "context": "shared", "vary": "heads", "values": [2],
                       "dataset_sizes": [16], "analysis": True}}}


def _family(**extra):
    return {"quick": _preset(), **extra}


def test_grid_points_and_settings_come_from_the_preset():
    from memcap.errors import ParamsError
    from memcap.mlt_synthetic import grid
    from memcap.training.sizes import shape

    p = grid.resolve(_family(), "quick")
    assert grid.grid_points(p) == [("by_heads", 1, 16), ("by_heads", 1, 32), ("by_heads", 3, 16),
                                   ("by_heads", 3, 32), ("saturation", 2, 16)]
    assert grid.analysis_sweeps(p) == ["saturation"]
    s = grid.sweep_settings(p, "by_heads")
    assert s["seeds"] == [0, 1] and s["lr"] == 3e-2 and s["vary"] == "heads" and s["preset"] == "quick"
    assert "values" not in grid.point_settings(s, [0, 1]) and "label" not in grid.point_settings(s, [0, 1])
    assert shape(s, 3) == {"heads": 3, "context_size": 3, "head_dim": None}
    assert grid.seed_groups(s) == [[0, 1]] and len(grid.jobs(p)) == 5
    with pytest.raises(ParamsError, match="no sweep named"):
        grid.sweep_settings(p, "nope")


def test_a_composite_preset_reuses_the_runs_of_the_presets_it_takes_sweeps_from():
    """`{from: paper, seeds: [0, 1]}` is the paper preset's first seed group: same file, same key, so
    the published runs serve `scale: paper` (which then trains only seeds 2-5), and a quick sweep taken
    as it is keeps its published file. Labels say what each sweep's settings are."""
    from memcap.mlt_synthetic import grid

    paper = {**_preset(), "seeds": [0, 1, 2, 3, 4, 5], "seeds_per_job": 2}
    family = _family(paper=paper, published={"sweeps": {
        "by_heads": {"from": "paper", "seeds": [0, 1]}, "saturation": {"from": "quick", "why": "too long"}}})
    pub, full, quick = (grid.resolve(family, n) for n in ("published", "paper", "quick"))
    assert grid.seed_groups(full["by_heads"]) == [[0, 1], [2, 3], [4, 5]]
    assert grid.run_name(pub, "by_heads", 3, 16) == grid.run_name(full, "by_heads", 3, 16, [0, 1])
    assert grid.run_name(pub, "by_heads", 3, 16).startswith("paper/by_heads/3/T16-")
    assert grid.run_name(pub, "by_heads", 3, 16) != grid.run_name(full, "by_heads", 3, 16, [2, 3])
    assert grid.run_name(pub, "saturation", 2, 16) == grid.run_name(quick, "saturation", 2, 16)
    assert len(grid.jobs(pub)) == 5 and len(grid.jobs(full)) == 15
    assert pub["by_heads"]["label"] == "paper settings, 2 of the paper's 6 seeds"
    assert full["by_heads"]["label"] == "paper settings"
    assert pub["saturation"]["label"] == "QUICK STAND-IN: reduced grid (too long)"
    # a job finds its seeds from its file's key; a key of other settings is refused
    key = grid.run_name(full, "by_heads", 3, 16, [2, 3]).rsplit("-", 1)[1].removesuffix(".parquet")
    assert grid.seeds_for_key(full["by_heads"], key, "params.yaml") == [2, 3]
    with pytest.raises(Exception, match="other settings"):
        grid.seeds_for_key(pub["by_heads"], key, "params.yaml")


def test_a_composite_preset_is_checked_before_anything_runs():
    from memcap.mlt_synthetic import checks

    bad = {"scale": {"default": "quick", "mlt_synthetic": "mine"},
           "mlt_synthetic": _family(mine={"sweeps": {"by_heads": {"from": "nope"}, "other": {"from": "quick"}}})}
    problems = "\n".join(checks.problems(bad))
    assert "mlt_synthetic.mine.sweeps.by_heads.from: got 'nope'" in problems
    assert "mlt_synthetic.mine.sweeps.other.from: the preset 'quick' has no sweep 'other'" in problems
    ok = {"scale": "mine", "mlt_synthetic": _family(mine={"sweeps": {"saturation": {"from": "quick"}}})}
    assert not [p for p in checks.problems(ok) if ".mine." in p]
    unused = {**bad, "scale": "quick"}        # a composite preset that is not selected is not checked
    assert not [p for p in checks.problems(unused) if ".mine." in p]


def test_grid_module_is_torch_free():
    import subprocess
    import sys
    code = "import sys, memcap.mlt_synthetic.grid; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_train_point_rows_and_attention_maxima():
    from memcap.mlt_synthetic import grid
    from memcap.mlt_synthetic.train import attention_maxima, train_point
    from memcap.training.pack import Job

    s = grid.sweep_settings(grid.resolve(_family(), "quick"), "by_heads")
    runs, pack = train_point(s, 3, 16, "cpu", labels={"family": "f", "sweep": "by_heads"}, progress=False)
    assert list(runs.columns[:4]) == ["family", "sweep", "vary", "x"]
    assert runs["seed"].tolist() == [0, 1] and (runs["heads"] == 3).all() and (runs["head_dim"] == 6).all()
    assert (runs["steps_run"] == 20).all() and runs["mem_acc"].between(0, 1).all()
    att = attention_maxima(pack.model, Job(s, 3, 16), pack.positions[0], "by_heads")
    assert len(att) == 2 * 16 * 3 and att["max_attention"].between(0, 1).all()


@pytest.mark.parametrize("lr_tensors", [False, True], ids=["float_lr", "device_lr"])
def test_stacked_adam_steps_exactly_as_torchs_fused_adam_also_across_a_checkpoint(lr_tensors):
    """StackedAdam (the trainer's optimizer) against torch.optim.Adam(fused=True) under the trainer's
    LR schedule: bitwise equal parameters after 30 steps, with a state_dict round trip at step 15 (as a
    resumed job restores it: optimizer made anew, then loaded). Its two groups of models (S = 100 and
    S = 40, as a pack of two dataset sizes) each step as their own torch Adam. device_lr: the learning
    rates read from float32 tensors (write_lrs, update, advance: what a CUDA graph's step does): equal
    to float32 rounding, not bit for bit (the fused kernels read a tensor lr as float32, a float one as
    float64; on the CPU and on CUDA alike)."""
    from memcap.stacked_adam import StackedAdam

    torch.manual_seed(0)
    ours = [torch.randn(3, 4, requires_grad=True), torch.randn(3, requires_grad=True)]   # 3 models
    rows = {100: slice(0, 2), 40: slice(2, 3)}                                             # 2 + 1
    theirs = {S: [p.detach()[r].clone().requires_grad_() for p in ours] for S, r in rows.items()}
    torch_adams = {S: torch.optim.Adam(ps, lr=1e-2, fused=True) for S, ps in theirs.items()}
    scheds = {S: warmup_cosine(a, S) for S, a in torch_adams.items()}
    b = StackedAdam(ours, 1e-2, [100, 100, 40], warmup_cosine)

    def step(b):
        if lr_tensors:
            b.use_lr_tensors() if b.lr_tensors is None else b.write_lrs()
            b.update()
            b.advance()
        else:
            b.step()
    for i in range(30):
        for p in ours:
            p.grad = torch.randn_like(p)
        for S, r in rows.items():
            for p, q in zip(theirs[S], ours):
                p.grad = q.grad[r].clone()
            torch_adams[S].step()
            scheds[S].step()
        step(b)
        if i == 14:
            saved = b.state_dict()
            b = StackedAdam(ours, 1e-2, [100, 100, 40], warmup_cosine)
            b.load_state_dict(saved)
    assert (b.lr_tensors is not None) == lr_tensors
    for S, r in rows.items():
        for p, q in zip(theirs[S], ours):
            if lr_tensors:
                torch.testing.assert_close(q.detach()[r], p.detach(), rtol=1e-6, atol=1e-7)
            else:
                assert torch.equal(p, q.detach()[r]), S
    if lr_tensors:   # the lr tensors hold the schedules' lr, rounded once to float32
        b.write_lrs()
        assert all(t.dtype == torch.float32 and t.item() == torch.tensor(s.optimizer.param_groups[0]["lr"]).item()
                   for s, t in b.lr_tensors.items())
    for p in ours:
        p.grad = torch.randn_like(p)
    b.step()                                   # one more step: now they differ (the check can fail)
    assert not torch.equal(theirs[100][0], ours[0].detach()[:2])
    with pytest.raises(ValueError, match="next to each other"):
        StackedAdam(ours, 1e-2, [100, 40, 100], warmup_cosine)


def test_cuda_graphs_refuse_a_pack_that_is_not_on_a_cuda_device():
    """train(..., cuda_graphs=True) on the CPU stops with the reason instead of training eagerly under
    a name that says graphs (the graphed step itself needs a GPU: benchmarks/graph_check.py)."""
    from memcap.mlt_synthetic import grid
    from memcap.stacked_adam import StackedAdam
    from memcap.training.graphed import GraphedStep
    from memcap.training.pack import Job, build

    s = grid.sweep_settings(grid.resolve(_family(), "quick"), "by_heads")
    pack = build([Job(s, 3, 16)], torch.device("cpu"))
    opt = StackedAdam(list(pack.model.parameters()), 1e-2, [40] * pack.model.num_models, warmup_cosine)
    with pytest.raises(ValueError, match="CUDA graphs need the pack on a CUDA device, not cpu"):
        GraphedStep(lambda i, v, r: None, opt, pack.data.query_rows.device)


@pytest.mark.parametrize("context", ["random", "shared"])
def test_a_cpu_evaluation_in_parts_gives_the_whole_chunks_numbers_bit_for_bit(monkeypatch, context):
    """A CPU evaluates a chunk in forward passes of CPU_EVAL_ROWS rows (faster: the chunk's buffers
    stay in cache); loss, accuracy and bits are those of one pass, bit for bit (T = 300: 10 parts)."""
    import memcap.training.evaluate as tr
    data = make_data([0, 1], dataset_size=300, context_size=6, input_dim=16, context=context,
                     task="classification", num_classes=10)
    model = MLTAttention([0, 1], 16, 3, 6, out_dim=10)
    whole = evaluate(model, data, True)
    monkeypatch.setattr(tr, "CPU_EVAL_ROWS", 32)
    assert tr._forward_parts(model, 300, torch.device("cpu")) == 10
    parts = evaluate(model, data, True)
    assert all(torch.equal(a, b) for a, b in zip(whole, parts))


def test_evaluation_parts_keep_the_products_of_the_whole_chunk(monkeypatch):
    """Rows of a part taking other products than the whole chunk (A_h formed only past d = 64
    examples) could round otherwise: such a chunk stays one pass; a GPU always takes one."""
    import memcap.training.evaluate as tr
    model = MLTAttention([0], 64, 2, 8, out_dim=10)
    monkeypatch.setattr(tr, "CPU_EVAL_ROWS", 40)
    assert model.formulation(33) != model.formulation(100)
    assert tr._forward_parts(model, 100, torch.device("cpu")) == 1       # parts of 33 rows: other products
    monkeypatch.setattr(tr, "CPU_EVAL_ROWS", 100)
    assert tr._forward_parts(model, 1000, torch.device("cpu")) == 10     # parts of 100 rows: the same
    assert tr._forward_parts(model, 1000, torch.device("cuda")) == 1


def test_training_settings_are_written_once_in_params_yaml():
    """The settings a result depends on have one place, each preset in params.yaml: TrainConfig has no
    default for them, no schema of a family that trains through it gives one (a preset must say them),
    and TrainConfig.of reads them. (DPC's trainer and the assumptions' forward passes have their own.)"""
    import dataclasses

    import yaml

    from memcap.training.config import SETTINGS

    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    assert [k for k in SETTINGS if fields[k].default is not dataclasses.MISSING] == []
    with pytest.raises(TypeError, match="missing"):
        TrainConfig(lr=1e-3)

    def defaults(node, path=""):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in SETTINGS and isinstance(value, dict) and "default" in value:
                    yield f"{path}.{key}"
                yield from defaults(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from defaults(value, f"{path}[{i}]")

    schemas = Path(__file__).resolve().parents[1] / "workflow" / "schemas"   # the families that train through TrainConfig
    given = [f"{name}{d}" for name in ("mlt_synthetic", "capacity", "theory")
             for d in defaults(yaml.safe_load((schemas / f"{name}.schema.yaml").read_text()))]
    assert given == []
    assert list(defaults({"training": {"lr": {"type": "number", "default": 1e-3}}})) == [".training.lr"]   # it can fail

    settings = {"lr": 0.5, "batch_size": 7, "epochs": 3, "min_steps": 11, "eval_every": 5, "early_stop": False}
    cfg = TrainConfig.of({**settings, "vary": "heads"}, checkpoint_every_s=-1)
    assert {k: getattr(cfg, k) for k in SETTINGS} == settings and cfg.checkpoint_every_s == -1
    assert TrainConfig.of({**settings, "epochs": 3}, epochs=6).epochs == 6   # a family's own rule (capacity's budget)
    with pytest.raises(KeyError, match="eval_every"):
        TrainConfig.of({k: v for k, v in settings.items() if k != "eval_every"})
