"""Packs: many jobs of one MLT sweep (grid points, dataset sizes, seeds, shapes) trained as one.

Each model of a pack must get what it would get alone: the same data, init, batches, schedule, best
step and early stop, accuracy, and losses equal to float32 rounding. Why rounding and not bits: a
pack changes the size of the batched matrix products (more models, a ragged batch's masked rows,
padded heads or tokens), and a float32 sum's rounding depends on how the product is blocked, as the
seeds of one grid point already do today (a seed trained with 1 or 2 others differs in the last
bits). Over a run these differences grow like any float32 perturbation of SGD; on the short runs
here they stay far below RTOL, while a model trained with any other setting is far outside it.
"""

import math
import tracemalloc

import pytest
import torch

from memcap import checkpoint
from memcap.mlt_synthetic import grid, packing
from memcap.mlt_synthetic.train import train_jobs, train_point
from memcap.models.mlt_attention import MLTAttention
from memcap.models.mlt_shared_grad import shared_context_grads
from memcap.tasks.mlt_data import make_data, make_pack_data, stack
from memcap.training.batches import BatchStream
from memcap.training.config import TrainConfig
from memcap.training.evaluate import evaluate
from memcap.training.loop import train
from memcap.training.members import stack_rows
from memcap.training.pack import Job, build
from memcap.training.sizes import pack_data_bytes, shape

RTOL = 1e-4
DISCRETE = ["seed", "dataset_size", "best_step", "steps_run", "steps_planned", "early_stopped", "param_count"]


def _settings(task="classification", context="shared", vary="heads", **over):
    return {"input_dim": 8, "heads": 2, "context_size": 4, "head_dim": None, "num_classes": 10, "lr": 1e-2,
            "batch_size": 32, "epochs": 8, "min_steps": 30, "eval_every": 10, "early_stop": True,
            "analysis": False, "task": task, "context": context, "vary": vary, **over}


def _jobs(s, values, sizes=(20, 70, 150)):
    return [Job({**s, "seeds": seeds}, v, T) for v in values for T in sizes for seeds in ([0, 1], [2])]


def _assert_like_alone(jobs, tables, rtol=RTOL):
    for i, job in enumerate(jobs):
        alone = train_point(job.settings, job.value, job.T, "cpu", progress=False)[0]
        packed = tables[i]
        assert packed[DISCRETE].equals(alone[DISCRETE]), (job, packed[DISCRETE], alone[DISCRETE])
        if job.settings["task"] == "classification":
            assert packed.mem_acc.tolist() == alone.mem_acc.tolist(), job
        assert packed.mem_loss.tolist() == pytest.approx(alone.mem_loss.tolist(), rel=rtol), job


@pytest.mark.parametrize("task, context", [("classification", "shared"), ("regression", "random")])
def test_a_pack_of_sizes_and_seeds_trains_every_model_as_it_trains_alone(task, context):
    """Dataset sizes 20, 70, 150 (so 30, 30 and 37 steps: two schedules; short last batches of 20, 6
    and 22 rows), seed groups [0, 1] and [2]: each job's rows equal its job alone."""
    s = _settings(task, context)
    jobs = _jobs(s, [2])
    pack, tables = train_jobs(jobs, "cpu", progress=False)
    assert sorted(tables) == list(range(len(jobs))) and pack.model.num_models == 9
    assert {t.models_in_job.iloc[0] for t in tables.values()} == {9}
    assert len({t.steps_planned.iloc[0] for t in tables.values()}) == 2
    _assert_like_alone(jobs, tables)


def test_the_comparison_with_a_model_alone_can_fail():
    """The check above on a pack whose models trained at another learning rate: it fails."""
    s = _settings()
    jobs = _jobs(s, [2], sizes=(70,))
    _, tables = train_jobs([Job({**j.settings, "lr": 2e-2}, j.value, j.T) for j in jobs], "cpu", progress=False)
    with pytest.raises(AssertionError):
        _assert_like_alone(jobs, tables)


@pytest.mark.parametrize("vary, values, task, context", [
    ("heads", [1, 3], "classification", "shared"), ("head_dim", [2, 8], "regression", "random"),
    ("context_size", [2, 5], "classification", "random"), ("context_size", [3, 6], "regression", "shared")])
def test_models_of_other_shapes_are_padded_without_changing_what_they_learn(vary, values, task, context):
    """Heads, head size or context padded to the pack's largest: the same results as alone, and a
    model's padded heads and head columns are still exactly zero after training."""
    s = _settings(task, context, vary)
    jobs = _jobs(s, values, sizes=(20, 70))
    pack, tables = train_jobs(jobs, "cpu", progress=False)
    _assert_like_alone(jobs, tables)
    small = pack.positions[0]                       # the first value's models: padded
    own = shape(jobs[0].settings, jobs[0].value)
    H, dh = own["heads"], own["head_dim"] or s["input_dim"]
    for name in ("w_q", "w_k"):
        p = getattr(pack.model, name).detach()[small]
        assert torch.count_nonzero(p[:, H:]) == 0 and torch.count_nonzero(p[:, :, :, dh:]) == 0
    for name in ("w_v", "w_o"):
        assert torch.count_nonzero(getattr(pack.model, name).detach()[small][:, H:]) == 0


def test_one_step_of_a_padded_model_is_its_own_step_to_float32_rounding():
    """The shared-context gradient of a model padded with heads, head columns and context tokens is
    its own gradient (padded parts exactly 0) to float32 rounding."""
    a = MLTAttention([0], input_dim=8, heads=2, context_size=3, head_dim=4, out_dim=10)
    big = MLTAttention([1], input_dim=8, heads=5, context_size=6, head_dim=8, out_dim=10)
    pack = MLTAttention.stack([a, big])
    torch.manual_seed(0)
    q, c = torch.rand(1, 32, 8), torch.rand(1, 3, 8)
    y = torch.randint(0, 10, (1, 32))
    shared_context_grads(a, q, c, y, True)
    qs = torch.cat([q, torch.rand(1, 32, 8)])
    cs = torch.cat([torch.nn.functional.pad(c, (0, 0, 0, 3)), torch.rand(1, 6, 8)])
    shared_context_grads(pack, qs, cs, torch.cat([y, y]), True)
    for name, p in a.named_parameters():
        g = getattr(pack, name).grad[0]
        own = g[tuple(slice(0, k) for k in p.grad[0].shape)]
        torch.testing.assert_close(own, p.grad[0], rtol=1e-5, atol=1e-7)
        assert float(g.abs().sum()) == pytest.approx(float(own.abs().sum()), rel=1e-6)   # nothing in the padding


class _Killed(Exception):
    pass


def _train_until_killed(jobs, path, at_step: int, **kw) -> list[tuple[int, int]]:
    """Train the pack, checkpointing at every evaluation, until the first checkpoint at or past
    `at_step` is saved; then the process 'dies'. Returns (step, models finished) of every checkpoint."""
    real, seen = checkpoint.save, []

    def save_then_die(p, state, config):
        real(p, state, config)
        seen.append((state["step"], len(state["finished"])))
        if state["step"] >= at_step:
            raise _Killed

    checkpoint.save = save_then_die
    try:
        with pytest.raises(_Killed):
            train_jobs(jobs, "cpu", checkpoint_path=str(path), checkpoint_every_s=0, progress=False, **kw)
    finally:
        checkpoint.save = real
    return seen


def test_a_killed_pack_resumes_exactly_with_the_models_it_had_finished(tmp_path):
    """A pack killed after some models finished (T = 20 and 70: 30 steps, T = 150: 37) and resumed from
    its checkpoint ends bit for bit like one never killed; the finished ones are not trained again."""
    s = _settings(min_steps=30, eval_every=5)
    jobs = _jobs(s, [2])
    _, full = train_jobs(jobs, "cpu", progress=False)
    path = tmp_path / "pack.pt"
    seen = _train_until_killed(jobs, path, 35)
    assert seen[-1] == (35, 6)                       # the 30-step models had finished
    done = []
    _, resumed = train_jobs(jobs, "cpu", checkpoint_path=str(path), checkpoint_every_s=0, progress=False,
                            on_job=lambda i, table: done.append(i))
    for i in range(len(jobs)):
        cols = [c for c in full[i].columns if c not in ("wall_time_s", "segments")]
        assert resumed[i][cols].equals(full[i][cols]), i
    assert sorted(done) == list(range(len(jobs)))     # every job's table, those finished before the kill too


def test_a_killed_pack_resumes_when_its_finished_jobs_are_skipped(tmp_path):
    """The pipeline's rerun of a killed pack skips the jobs whose files it had written (train-pack's
    --finished): it still resumes from the checkpoint (a GPU loan's second call), not afresh."""
    s = _settings(min_steps=30, eval_every=5)
    jobs = _jobs(s, [2])
    _, full = train_jobs(jobs, "cpu", progress=False)
    path, written = tmp_path / "pack.pt", []
    _train_until_killed(jobs, path, 35, on_job=lambda i, table: written.append(i))
    assert written and len(written) < len(jobs)
    _, resumed = train_jobs(jobs, "cpu", checkpoint_path=str(path), checkpoint_every_s=0, progress=False,
                            skip=set(written))
    assert sorted(resumed) == sorted(set(range(len(jobs))) - set(written))
    for i in resumed:
        cols = [c for c in full[i].columns if c not in ("wall_time_s", "segments")]
        assert resumed[i][cols].equals(full[i][cols]), i
        assert set(resumed[i]["segments"]) == {2}, i   # resumed, not trained afresh


def test_a_resumed_pack_gathers_its_members_best_states_onto_its_own_device():
    """On a GPU, a member finished before a resume has its best parameters from the checkpoint, on the
    CPU, the others on the GPU: the pack's final state is gathered on the pack's device (a lent H200's
    resumed pack failed at its end here). 'meta' stands in for the GPU: a CPU and a meta tensor in one
    torch.cat raise the same error as a CPU and a cuda tensor."""
    from_checkpoint, on_device = {"w": torch.ones(1, 3)}, {"w": torch.zeros(1, 3, device="meta")}
    with pytest.raises(RuntimeError, match="device"):
        torch.cat([from_checkpoint["w"], on_device["w"]])
    state = stack_rows([from_checkpoint, on_device, from_checkpoint], torch.device("meta"))
    assert state["w"].device.type == "meta" and state["w"].shape == (3, 3)
    on_cpu = stack_rows([from_checkpoint, {"w": torch.zeros(1, 3)}], torch.device("cpu"))
    assert on_cpu["w"].tolist() == [[1.0] * 3, [0.0] * 3]      # each model's row, in order


def test_a_pack_whose_checkpoint_still_trains_a_skipped_job_starts_afresh(tmp_path):
    """A job whose file was written after the pack's last checkpoint (a kill in between) is skipped;
    its models are still training in that checkpoint, so the pack starts afresh rather than train them."""
    s = _settings(min_steps=30, eval_every=5)
    jobs = _jobs(s, [2])
    path = tmp_path / "pack.pt"
    assert _train_until_killed(jobs, path, 0) == [(5, 0)]   # the first checkpoint: step 5, nothing finished
    _, resumed = train_jobs(jobs, "cpu", checkpoint_path=str(path), checkpoint_every_s=0, progress=False, skip={0})
    assert 0 not in resumed and all(set(t["segments"]) == {1} for t in resumed.values())


def test_skipped_jobs_are_not_trained():
    s = _settings()
    jobs = _jobs(s, [2], sizes=(20, 70))
    pack, tables = train_jobs(jobs, "cpu", progress=False, skip={0, 3})
    assert sorted(tables) == [1, 2]


def test_batches_are_each_models_own_epochs_with_short_last_batches():
    """T = 10 and 7, B = 4: epochs of 3 and 2 batches (the last of 2 and 3 rows); each model's rows
    are its generator's permutations, as alone; a step's batch is as long as its longest."""
    both = BatchStream([0, 1], [10, 7], 4, "cpu")
    alone = BatchStream([1], [7], 4, "cpu")
    g = torch.Generator().manual_seed(1)   # model 0: seed 0 + 1
    perm = torch.randperm(10, generator=g)
    steps = [both.next() for _ in range(3)]
    assert [idx.shape[1] for idx, _, _ in steps] == [4, 4, 4]
    idx0 = torch.cat([idx[0][valid[0]] if valid is not None else idx[0] for idx, valid, _ in steps])
    assert torch.equal(idx0, perm)
    last_idx, last_valid, rows = steps[2]
    assert last_valid[0].tolist() == [True, True, False, False] and rows[:, 0, 0].tolist() == [2.0, 4.0]
    own = [alone.next() for _ in range(2)]
    mine = [i[1][v[1]] if v is not None else i[1] for i, v, _ in steps[:2]]
    assert all(torch.equal(a[0][0] if a[1] is None else a[0][0][a[1][0]], b) for a, b in zip(own, mine))


def test_the_first_grid_point_alone_is_what_it_always_was():
    """A grid point is a pack of one job: its models (one schedule, no padding) train exactly as the
    seeds of a grid point did, the published runs' path; train() on its pieces gives the same bits."""
    s = {**_settings(), "seeds": [0, 1]}
    runs, pack = train_point(s, 2, 70, "cpu", progress=False)
    data_pack = build([Job(s, 2, 70)], "cpu")
    cfg = TrainConfig.of(s)
    res, _ = train(data_pack.model, data_pack.data, [0, 1], cfg, True, progress=False)
    assert [r.mem_loss for r in res] == runs.mem_loss.tolist()
    assert [r.best_step for r in res] == runs.best_step.tolist()
    assert all(math.isfinite(r.mem_loss) for r in res)


_DRAWS = [(0, 20, 3), (1, 20, 3), (0, 70, 3), (2, 70, 5), (0, 150, 3), (0, 70, 5)]   # (seed, T, n) a model


def _rows(data, m: int, T: int):
    return data.select([m]).batch(torch.arange(T)[None])


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_a_packs_random_contexts_are_stored_once_for_every_T_of_a_seed(task):
    """One seed's random contexts at T = 20, 70, 150 (one n) are the first rows of one draw: stored once
    at the largest T; each model still reads exactly the queries, contexts and labels it draws alone
    (contexts padded with zero tokens to the pack's n)."""
    pack = make_pack_data(_DRAWS, 8, "random", task, 10)
    assert pack.context_rows.shape == (150 + 20 + 70 + 70, 5, 8)   # (0, 3) at 150; (1, 3); (2, 5); (0, 5)
    for m, (seed, T, n) in enumerate(_DRAWS):
        alone = stack([make_data([seed], T, n, 8, "random", task, 10)], 5)
        assert all(torch.equal(a, b) for a, b in zip(_rows(pack, m, T), _rows(alone, 0, T))), (seed, T, n)


def test_the_comparison_with_a_models_own_draws_can_fail():
    """Seed 0 at T = 70 reads the contexts of seed 0 at T = 150 but not its queries: those follow each
    T's own contexts in the stream."""
    pack = make_pack_data(_DRAWS, 8, "random", "classification", 10)
    longer = stack([make_data([0], 150, 3, 8, "random", "classification", 10)], 5)
    q, c, _ = _rows(pack, 2, 70)
    q150, c150, _ = longer.batch(torch.arange(70)[None])
    assert torch.equal(c, c150) and not torch.equal(q, q150)


def test_a_packs_data_take_the_memory_planned_for_them():
    """make_pack_data's host peak is within pack_data_bytes (what a pack's job asks for), which counts a
    seed's shared contexts once: less than the models' data alone."""
    settings = {"task": "regression", "context": "random", "vary": "context_size", "input_dim": 16,
                "heads": 2, "context_size": 8, "head_dim": None, "num_classes": 100}
    draws = [(0, 9000, 8), (0, 3000, 8), (1, 9000, 8), (1, 6000, 4)]
    tracemalloc.start()
    data = make_pack_data(draws, 16, "random", "regression")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    held = sum(t.numel() * t.element_size() for t in (data.query_rows, data.context_rows, data.label_rows))
    planned = pack_data_bytes(settings, [(n, T, seed) for seed, T, n in draws], 8)
    assert data.context_rows.shape[0] == 9000 + 9000 + 6000 and held <= peak <= planned
    alone = sum(pack_data_bytes(settings, [(n, T, seed)], 8) for seed, T, n in draws)
    assert planned < alone - 4 * 3000 * 8 * 16     # seed 0's T = 3000 contexts are not counted again


def test_an_evaluation_passes_each_model_over_its_own_rows_only(monkeypatch):
    """A pack of T = 20, 70 and 150 evaluated in chunks of 16: each model's forward passes cover its own
    rows (to its last chunk), not the longest T's, and give what the model alone evaluates to."""
    pack = build(_jobs(_settings("classification", "random"), [2]), "cpu")
    loss, acc, bits = evaluate(pack.model, pack.data, True, batch_size=16)
    rows, real = [], MLTAttention.forward

    def counted(self, q, c, *args, **kw):
        rows.append(q.shape[0] * q.shape[1])
        return real(self, q, c, *args, **kw)
    monkeypatch.setattr(MLTAttention, "forward", counted)
    evaluate(pack.model, pack.data, True, batch_size=16)
    sizes, longest = pack.data.sizes, max(pack.data.sizes)
    chunks = [min(16, longest - start) for start in range(0, longest, 16)]
    own = sum(width for T in sizes for start, width in zip(range(0, longest, 16), chunks) if start < T)
    assert sum(rows) == own < len(sizes) * longest    # every model over the longest T: 1,350 rows
    for m in range(len(sizes)):
        alone = evaluate(pack.model.select([m]), pack.data.select([m]), True, batch_size=16)
        assert [float(t[0]) for t in alone] == pytest.approx([float(loss[m]), float(acc[m]), float(bits[m])], rel=1e-6)


# ---- planning (torch-free, what Snakemake runs) -------------------------------------------------------

def _paper_like():
    s = {**_settings(), "seeds": [0, 1, 2, 3], "seeds_per_job": 2, "preset": "p", "checkpoint_every_s": 60,
         "values": [1, 2, 8, 30], "dataset_sizes": [20, 70], "label": "x", "why": None}
    return {"by_heads": s}


def _names(sweeps):
    return [grid.run_name(sweeps, *j[:3], list(j[3])) for j in grid.jobs(sweeps)]


def test_packs_take_only_missing_runs_within_their_sizes_and_padding():
    sweeps = _paper_like()
    names = _names(sweeps)
    published = set(names[::2])                         # e.g. the published seeds' runs exist
    packs = packing.plan(sweeps, set(names) - published, pack_models=6, pack_mem_mb=10_000)
    packed = [r for p in packs for r in p.runs]
    assert not set(packed) & published                  # an existing run is in no pack
    assert len(packed) == len(set(packed))
    assert all(p.models <= 6 for p in packs)
    # H = 1 next to H = 30 would pad one model to 30 heads: more than PADDING_SLACK x its own work
    assert all(len({j[1] for j in p.jobs} & {1, 30}) < 2 for p in packs)
    assert packing.plan(sweeps, set(names), pack_models=1, pack_mem_mb=10_000) == []   # CPU presets: none
    tight = packing.plan(sweeps, set(names), pack_models=100, pack_mem_mb=0.001)
    assert tight == []                                  # no two jobs' data fit: every job alone


def test_a_plan_is_written_once_and_read_back_the_same(tmp_path, monkeypatch):
    sweeps = _paper_like()
    packs = packing.plan(sweeps, set(_names(sweeps)), 8, 10_000)
    path = packing.write_plan(packs, tmp_path)
    assert packing.read_plan(path) == packs and packing.write_plan(packs, tmp_path) == path
    # a SLURM job's own Snakemake reads the plan of the process that scheduled it, not the files now
    monkeypatch.setenv(packing.PLAN_VARIABLE, str(path))
    later = packing.packs_of_run(sweeps, str(tmp_path / "none"), str(tmp_path / "none"), 2, 10_000,
                                 main_process=False)
    assert later == packs
