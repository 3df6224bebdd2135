"""DPC model, task and training loop: the math a user relies on."""

import numpy as np
import pandas as pd
import pytest
import torch

from memcap.dpc.reference import ReferenceAoT, reference_loss
from memcap.dpc.schedule import effective_lr
from memcap.dpc.train import TrainConfig, evaluate_table, nll, train
from memcap.models.aot import AoT, OuterPairMix, ResidualMLP, causal_mask, param_count
from memcap.tasks.lookup import make_task
from conftest import preempted_on_call


def test_causal_mask_lets_position_i_see_only_j_le_i():
    m = causal_mask(3)
    assert m.tolist() == [[False, True, True], [False, False, True], [False, False, False]]


@pytest.mark.parametrize("kw", [dict(dim=6, head_dim=6, heads=3),                     # d = d_h
                                dict(dim=8, head_dim=3, heads=4),                     # shared C, D
                                dict(dim=6, head_dim=6, heads=2, width=10, layers=3),  # MLP, depth
                                dict(dim=8, head_dim=4, heads=2, width=5, layers=2)])
def test_matches_the_original_computation(kw):
    """Batched heads/models equal H separate nn.MultiheadAttention modules summed in a loop."""
    fast = AoT([3, 4], vocab=20, **kw).double()
    x = torch.randint(20, (2, 16, 2))
    out = fast(x)
    for m in range(2):
        ref = ReferenceAoT(fast, m).double()
        torch.testing.assert_close(out[m], ref(x[m])[:, -1], rtol=0, atol=1e-12)
    # and the gradients of the loss agree
    fast.zero_grad()
    nll(out, x[..., 1]).mean(1)[0].backward()
    ref = ReferenceAoT(fast, 0).double()
    reference_loss(ref(x[0]), x[0, :, 1]).backward()
    torch.testing.assert_close(fast.w_q.grad[0, 0, 0], ref.attn[0][0].in_proj_weight.grad[:kw["head_dim"]].T,
                               rtol=1e-6, atol=1e-9)


def test_longer_inputs_use_the_causal_mask_like_the_original():
    """S = 3 goes through the general masked attention; it equals the original's loop of modules."""
    fast = AoT([7], vocab=15, dim=6, head_dim=3, heads=4, width=4, layers=2).double()
    x = torch.randint(15, (1, 9, 3))
    torch.testing.assert_close(fast(x)[0], ReferenceAoT(fast).double()(x[0])[:, -1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(dim=8, head_dim=3, heads=5),               # H >= d_h: outer-product form
                                dict(dim=8, head_dim=4, heads=2, layers=2, width=6),   # H < d_h: projections
                                dict(dim=5, head_dim=5, heads=7, per_head_proj=True),
                                dict(dim=8, head_dim=4, heads=3, layers=2, per_head_proj=True)])
def test_two_token_rewrite_equals_masked_attention(kw):
    """attend_pair (sigmoid of the score gap, position 0 attending to itself) is the same function as
    the causal softmax attention, also for the paper's per-head maps (which have no original code)."""
    model = AoT([2, 9], vocab=11, **kw).double()
    res = torch.randn(2, 13, 2, model.dim, dtype=torch.float64)
    for layer in range(model.layers):
        u = model._attention_input(res, 2)
        o0, o1 = model.attend_pair(u, layer)
        full = model.attend(u, layer)
        torch.testing.assert_close(torch.stack([o0, o1], 2), full, rtol=0, atol=1e-12)


def test_mlp_backward_is_the_gradient_of_its_forward():
    """The MLP's hand-written backward (chosen for GEMM speed) against finite differences."""
    g = torch.Generator().manual_seed(0)
    args = [torch.randn(s, generator=g, dtype=torch.float64, requires_grad=True)
            for s in ((2, 7, 3), (2, 3, 5), (2, 5), (2, 5, 3))]
    assert torch.autograd.gradcheck(ResidualMLP.apply, args)
    x, w1, b1, w2 = args
    expected = x + torch.nn.functional.gelu(x @ w1 + b1[:, None]) @ w2
    torch.testing.assert_close(ResidualMLP.apply(*args), expected, rtol=0, atol=1e-12)


def test_attention_backward_is_the_gradient_of_its_forward():
    """The two-key attention core's hand-written backward against finite differences."""
    g = torch.Generator().manual_seed(1)
    args = [torch.randn(s, generator=g, dtype=torch.float64, requires_grad=True)
            for s in ((2, 6, 3), (2, 6, 3), (2, 4, 3, 3), (2, 4, 3, 3))]
    assert torch.autograd.gradcheck(OuterPairMix.apply, args)


def test_position_embedding_is_not_in_the_residual():
    """With zero attention output, the logits are U·e(t_S): pos only enters through attention."""
    model = AoT([0], vocab=7, dim=4, head_dim=4, heads=2)
    with torch.no_grad():
        model.w_out.zero_()
        model.pos.normal_()
    x = torch.randint(7, (1, 5, 2))
    expected = model.emb[0, x[0, :, 1]] @ model.unemb[0].T
    torch.testing.assert_close(model(x)[0], expected)


def test_shared_maps_bound_the_attention_rank_by_head_dim():
    """d != d_h: the attention's contribution to the residual has rank <= d_h whatever H is."""
    N, d, dh, H = 30, 12, 2, 8
    model = AoT([1], vocab=N, dim=d, head_dim=dh, heads=H).double()
    t1, t2 = torch.meshgrid(torch.arange(N), torch.arange(N), indexing="ij")
    x = torch.stack([t1.reshape(-1), t2.reshape(-1)], 1)[None]                  # all N² contexts
    with torch.no_grad():
        logits = model(x)[0]
        skip = model.emb[0, x[0, :, 1]] @ model.unemb[0].T
    assert torch.linalg.matrix_rank(logits - skip).item() <= dh
    # the paper's per-head maps lift that cap
    per_head = AoT([1], vocab=N, dim=d, head_dim=dh, heads=H, per_head_proj=True).double()
    with torch.no_grad():
        delta = per_head(x)[0] - per_head.emb[0, x[0, :, 1]] @ per_head.unemb[0].T
    assert torch.linalg.matrix_rank(delta).item() > dh


def test_param_count_matches_allocation_and_spec_example():
    assert param_count(50, 10, 10, 11) == 5630                                   # N=50, d=d_h=10, H=11 in the original
    for kw in [dict(dim=8, head_dim=3, heads=4, width=5, layers=2), dict(dim=6, head_dim=6, heads=2)]:
        assert AoT([0], vocab=13, **kw).shared_params == param_count(13, **kw)


def test_effective_learning_rate_rule():
    """lr 0.1 -> 0.005: 1e-2 at epoch 0, 5.25e-3 at 32, 6.48e-4 at 63 (method.md), and torch agrees."""
    assert effective_lr(0, 64, 0.1, 0.005) == pytest.approx(1e-2)
    assert effective_lr(32, 64, 0.1, 0.005) == pytest.approx(5.25e-3)
    assert effective_lr(63, 64, 0.1, 0.005) == pytest.approx(6.484375e-4)
    opt = torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=0.1)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, end_factor=0.005, total_iters=64)
    for e in range(64):
        assert opt.param_groups[0]["lr"] == pytest.approx(effective_lr(e, 64, 0.1, 0.005))
        opt.step()
        sched.step()


def test_lookup_task_is_a_function_of_the_context_and_seeded():
    task = make_task(12, 500, seed=2222)
    s = task.samples
    assert torch.equal(s[:, 2], task.table[s[:, 0], s[:, 1]])
    assert torch.equal(make_task(12, 500, seed=2222).samples, s)
    assert not torch.equal(make_task(12, 500, seed=1).table, task.table)
    ctx, ans = task.all_contexts()
    assert len(ctx) == 144 and len(torch.unique(ctx[:, 0] * 12 + ctx[:, 1])) == 144


def test_full_table_accuracy_is_exact():
    """A model whose logits point at g(t) on a known half of the contexts scores exactly that."""
    task = make_task(6, 36, seed=0)
    model = AoT([0], vocab=6, dim=4, head_dim=4, heads=1)
    ctx, ans = task.all_contexts()
    with torch.no_grad():
        pred = model(ctx[None])[0].argmax(-1)
    acc, kl = evaluate_table(model, task)
    assert acc.item() == pytest.approx((pred == ans).double().mean().item())
    assert kl.item() > 0


def test_training_memorises_and_does_not_depend_on_batching():
    """Repetition m gives the same numbers alone or batched with others; training beats chance."""
    task = make_task(10, 64 * 8, seed=2222)
    cfg = TrainConfig(batch_size=64, batches=8, epochs=30, window=20)
    both = train(AoT([5, 6], vocab=10, dim=4, head_dim=4, heads=8), task, [5, 6], cfg, progress=False)
    alone = train(AoT([6], vocab=10, dim=4, head_dim=4, heads=8), task, [6], cfg, progress=False)
    assert both[1].acc_window == pytest.approx(alone[0].acc_window, abs=1e-6)
    assert both[1].acc_table == pytest.approx(alone[0].acc_table, abs=1e-6)
    assert both[0].acc_table > 0.4 and both[0].acc_window > 0.4                  # chance is 0.1
    assert np.isfinite(both[0].kl_table)


def test_checkpoint_resume_gives_the_same_result(tmp_path):
    task = make_task(8, 32 * 4, seed=1)
    cfg = TrainConfig(batch_size=32, batches=4, epochs=6, window=10, checkpoint_every_s=0)
    ck = str(tmp_path / "ck.pt")
    full = train(AoT([3], vocab=8, dim=4, head_dim=2, heads=3), task, [3], cfg, progress=False)
    # interrupted run: train 3 epochs with checkpoints, then resume a fresh model from the file
    short = TrainConfig(**{**cfg.__dict__, "epochs": 6})
    import memcap.dpc.train as tr
    orig = tr.effective_lr
    calls = {"n": 0}

    def boom(*a):   # the lr of each step (1 + the steps done): killed in epoch 3's 3rd step
        calls["n"] += 1
        if calls["n"] == 1 + 2 * cfg.batches + 2:
            raise KeyboardInterrupt
        return orig(*a)
    tr.effective_lr = boom
    try:
        with pytest.raises(KeyboardInterrupt):
            train(AoT([3], vocab=8, dim=4, head_dim=2, heads=3), task, [3], short, ck, progress=False)
    finally:
        tr.effective_lr = orig
    assert torch.load(ck, weights_only=True)["state"]["epoch"] == 2   # resumes from the end of epoch 2
    resumed = train(AoT([3], vocab=8, dim=4, head_dim=2, heads=3), task, [3], short, ck, progress=False)
    assert resumed[0].acc_window == pytest.approx(full[0].acc_window, abs=1e-6)
    assert resumed[0].kl_table == pytest.approx(full[0].kl_table, rel=1e-5)


def test_a_requeued_job_keeps_its_finished_points(tmp_path, monkeypatch):
    """Killed while training its second grid point, a job rerun reuses the first point's rows (no
    retraining) and ends with the same table as an uninterrupted job."""
    import memcap.dpc.train as tr
    from memcap.dpc import grid

    preset = {"group_seed": 5, "per_head_proj": False,
              "groups": {"g": {"N": 6, "layers": 1, "batch_size": 16, "batches": 4, "epochs": 3, "lr": 0.1,
                               "lr_low": 0.005, "repetitions": 2, "window": 5}},
              "experiments": {"e": {"group": "g", "axis": "thm1", "dim": 4, "head_dim": None,
                                    "x": {"key": "heads", "values": [1, 2, 3]}, "fit": "saturation"}}}
    s = grid.settings(preset, "e")
    whole = tr.run_job(s, "e", "all", "quick", "cpu", progress=False)

    calls, real_train = [], tr.train
    monkeypatch.setattr(tr, "train", preempted_on_call(2, real_train, calls, lambda model, *a: model.heads))
    prefix = str(tmp_path / "job")
    with pytest.raises(KeyboardInterrupt):
        tr.run_job(s, "e", "all", "quick", "cpu", checkpoint_prefix=prefix, progress=False)
    assert (tmp_path / "job_x1.done.pt").exists()

    calls.clear()
    monkeypatch.setattr(tr, "train", lambda model, *a, **k: calls.append(model.heads) or real_train(model, *a, **k))
    again = tr.run_job(s, "e", "all", "quick", "cpu", checkpoint_prefix=prefix, progress=False)
    assert calls == [2, 3]                                            # x = 1 was not retrained
    cols = ["x", "repetition", "acc_window", "acc_table", "kl_table"]
    pd.testing.assert_frame_equal(again[cols], whole[cols])
    tr.clear_checkpoints(prefix, s)
    assert not list(tmp_path.iterdir())


def test_a_pack_of_curves_writes_what_each_job_alone_writes_and_a_stopped_pack_retrains_nothing(tmp_path, monkeypatch):
    """`memcap dpc train-pack` (a preset whose dpc jobs pack): each curve's file holds the rows `memcap dpc
    train` writes for it alone; stopped in its second curve, the pack has written nothing, and run again
    it trains only the points it had not finished, then leaves no checkpoint."""
    import re

    import yaml

    import memcap.dpc.train as tr
    from memcap import params as memcap_params
    from memcap.cli import build_parser
    from memcap.dpc import grid
    from test_dpc_pipeline import tiny_dpc

    params = yaml.safe_load(open("params.yaml"))
    params["scale"]["dpc"] = "quick"
    tiny_dpc(params)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    q = memcap_params.load("params.yaml")["dpc"]["quick"]
    curves = [("exp1", "4"), ("exp2", "all")]
    runs = [f"results/dpc/runs/{grid.run_name('quick', q, e, label)}" for e, label in curves]

    def cli(*argv):
        args = build_parser().parse_args(["dpc", *argv, "--threads", "1"])
        args.func(args)

    for (e, label), run in zip(curves, runs):
        cli("train", "--experiment", e, "--series", label, "--settings-key", grid.parse_run_name(run)[3],
            "--out", f"alone/{e}.parquet")
    calls, real_train = [], tr.train
    monkeypatch.setattr(tr, "train", preempted_on_call(4, real_train, calls, lambda *a: None))
    with pytest.raises(KeyboardInterrupt):                       # in exp2's second point
        cli("train-pack", "--runs", *runs)
    assert not list(tmp_path.glob("results/**/*.parquet"))       # every curve is written at the end
    calls.clear()
    monkeypatch.setattr(tr, "train", lambda model, *a, **k: calls.append(k["desc"]) or real_train(model, *a, **k))
    cli("train-pack", "--runs", *runs)
    assert calls == [f"exp2 all x={q['experiments']['exp2']['x']['values'][1]}"], calls   # the rest was kept
    timing = re.compile(r"wall|segments")
    for (e, _), run in zip(curves, runs):
        packed, alone = pd.read_parquet(run), pd.read_parquet(f"alone/{e}.parquet")
        keep = [c for c in alone.columns if not timing.search(c)]
        pd.testing.assert_frame_equal(packed[keep], alone[keep], obj=run)
    assert not list(tmp_path.glob("checkpoints/**/*.pt"))
    with pytest.raises(memcap_params.ParamsError, match="other settings"):   # a name for other settings
        cli("train-pack", "--runs", runs[0].replace(grid.parse_run_name(runs[0])[3], "0" * 8))


def test_fused_loss_is_nll_with_its_gradient_and_the_argmax_hits():
    from memcap.dpc.train import NLLAndHits

    logits = (torch.randn(3, 64, 20, dtype=torch.float64) * 4).requires_grad_()
    target = torch.randint(20, (3, 64))
    loss, hit = NLLAndHits.apply(logits, target)
    assert torch.equal(hit, logits.argmax(-1) == target)
    ref = logits.detach().clone().requires_grad_()
    ref_loss = nll(ref, target)
    assert torch.allclose(loss, ref_loss, rtol=1e-12, atol=1e-12)
    weights = torch.rand(3, 64, dtype=torch.float64)
    (loss * weights).sum().backward()
    (ref_loss * weights).sum().backward()
    assert torch.allclose(logits.grad, ref.grad, rtol=1e-10, atol=1e-12)
    torch.autograd.gradcheck(lambda z: NLLAndHits.apply(z, target[:1, :4])[0], (logits[:1, :4].detach().clone().requires_grad_(),))


def test_a_training_log_has_a_line_per_epoch_and_a_summary(capsys):
    """In a log file (not a terminal) training writes plain lines, not tqdm frames."""
    task = make_task(6, 16 * 4, seed=1)
    cfg = TrainConfig(batch_size=16, batches=4, epochs=3, window=5)
    train(AoT([1, 2], vocab=6, dim=4, head_dim=4, heads=2), task, [1, 2], cfg, progress=True, desc="exp1 4 x=2")
    lines = capsys.readouterr().err.splitlines()
    assert "\r" not in "".join(lines)
    steps = [ln for ln in lines if " steps/s ETA " in ln]
    assert [ln.split()[4] for ln in steps] == ["4/12", "8/12", "12/12"], lines
    assert all("loss" in ln and "acc" in ln for ln in steps)
    assert lines[-1].startswith("exp1 4 x=2: done, 12 steps in") and "acc_table" in lines[-1], lines
