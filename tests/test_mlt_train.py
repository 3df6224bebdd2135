"""MLT training protocol: steps rule, LR schedule, lowest-loss checkpoint, early stop, resume."""

import math

import pytest
import torch

from memcap import checkpoint
from memcap.models.mlt_attention import MLTAttention
from memcap.schedules import mlt_lr, mlt_num_steps
from memcap.tasks.mlt_data import make_data
from memcap.train import TrainConfig, train


def test_steps_rule_matches_the_paper_table():
    # spec mahdavi.md §2.3: T -> S = max(floor(500 T / 256), 50k)
    assert [mlt_num_steps(T, 50_000) for T in (10_000, 30_000, 50_000, 90_000, 130_000)] == \
        [50_000, 58_593, 97_656, 175_781, 253_906]
    assert mlt_num_steps(10_000, 300_000) == 300_000


@pytest.mark.parametrize("total", [100, 1000, 58_593])
def test_lr_schedule_equals_torch_sequential_lr(total):
    """Warm-up from 0.01·lr over floor(S/20) steps, then cosine to 0: torch's own schedulers agree."""
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1e-3)
    warm = total // 20
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [
        torch.optim.lr_scheduler.LinearLR(opt, 0.01, 1.0, total_iters=warm),
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warm)], milestones=[warm])
    for step in range(total):
        if step % max(1, total // 97) == 0 or step in (warm - 1, warm, warm + 1, total - 1):
            assert mlt_lr(step, total, 1e-3) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-6, abs=1e-12)
        opt.step()
        sched.step()
    assert mlt_lr(0, total, 1e-3) == pytest.approx(1e-5)
    assert mlt_lr(warm, total, 1e-3) == pytest.approx(1e-3)


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
    from memcap.train import evaluate
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
    cfg = TrainConfig(lr=1e-2, batch_size=16, epochs=1, min_steps=40, eval_every=10)
    runs = []
    for _ in range(2):
        data, model = _setup(context="random")
        runs.append(train(model, data, [0, 1], cfg, classification=True, progress=False)[0])
    assert runs[0] == runs[1]


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
    assert resumed == full


def _train_until(model, data, cfg, path, stop_step):
    """Run `train` with checkpoints at every evaluation and kill it (an exception) after stop_step."""
    real_save = checkpoint.save

    class Killed(Exception):
        pass

    def save_then_maybe_die(p, state, config):
        real_save(p, state, config)
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
    from memcap.train import _loss_and_hits
    labels = torch.tensor([[0, 1, 2, 3]])
    uniform = torch.zeros(1, 4, 8)                     # C = 8: NLL = 3 bits = log2 C -> 0 bits known
    assert _loss_and_hits(uniform, labels, True)[2].item() == pytest.approx(0.0, abs=1e-6)
    confident = torch.full((1, 4, 8), -50.0)
    confident[0, torch.arange(4), labels[0]] = 50.0    # NLL ~ 0 -> all 3 bits of each label
    assert _loss_and_hits(confident, labels, True)[2].item() == pytest.approx(12.0, rel=1e-6)
    wrong = -confident                                 # confidently wrong: clipped at 0, not negative
    assert _loss_and_hits(wrong, labels, True)[2].item() == 0.0
