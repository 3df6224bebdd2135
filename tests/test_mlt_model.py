"""MLT attention: shapes, mask, parameter count, and the fast query-only path against the reference."""

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from memcap.models import mlt_work
from memcap.models.mlt_attention import MLTAttention, sinusoidal_pe
from memcap.models.mlt_reference import ReferenceMLTAttention
from memcap.tasks.mlt_data import make_data


def _data(context, M=2, T=16, n=5, d=8, task="classification"):
    return make_data(list(range(M)), dataset_size=T, context_size=n, input_dim=d, context=context,
                     task=task, num_classes=7)


def _full_input(data, m):
    ctx = data.contexts[m].expand(data.size, -1, -1) if data.shared else data.contexts[m]
    return torch.cat([data.queries[m][:, None], ctx], 1)


def test_parameter_count_matches_the_paper_formula():
    # the original code's model (docs/method.md, MLT: Model): P = 10,660 + 8,320·H for d = d_h = 64, C = 100.
    for H in (1, 20, 60):
        assert MLTAttention([0], 64, H, 32, out_dim=100).shared_params == 10_660 + 8_320 * H
    assert MLTAttention([0], 64, 30, 32, head_dim=10, out_dim=100).shared_params == 52_900


def test_shapes():
    data = _data("random", M=3, T=10)
    model = MLTAttention([0, 1, 2], input_dim=8, heads=4, context_size=5, head_dim=3, out_dim=7)
    out, alpha = model(data.queries, data.contexts, return_attention=True)
    assert out.shape == (3, 10, 7)
    assert alpha.shape == (3, 10, 4, 5)              # (M, B, H, n): the query row over n context tokens
    torch.testing.assert_close(alpha.sum(-1), torch.ones(3, 10, 4))


def test_sinusoidal_pe_values():
    pe = sinusoidal_pe(3, 4)
    assert pe[0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert pe[2, 0] == pytest.approx(torch.sin(torch.tensor(2.0)).item())
    assert pe[2, 3] == pytest.approx(torch.cos(torch.tensor(2.0 / 100)).item(), rel=1e-6)


@pytest.mark.parametrize("value_dim", [1, 3])
@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("context, head_dim, raw", [
    ("shared", 4, False), ("shared", 8, False),
    ("random", 4, False),    # (W_Q^T e) then W_K
    ("random", 8, False),    # A_h = W_K W_Q^T (d_h = d), the rows embedded
    ("random", 8, True),     # A_h, the rows left raw (W_emb, b and pe folded in)
])
def test_fast_path_equals_full_attention_reference(context, task, head_dim, raw, value_dim):
    """Same weights: same outputs and same gradients as the original full-attention computation."""
    data = _data(context, task=task)
    out_dim = 7 if task == "classification" else 1
    fast = MLTAttention([0, 1], input_dim=8, heads=3, context_size=5, head_dim=head_dim, out_dim=out_dim,
                        value_dim=value_dim).double()
    fast._folds_embedding = lambda batch: raw
    out = fast(data.queries.double(), data.contexts.double())
    for m in range(2):
        ref = ReferenceMLTAttention(fast, m).double()
        out_ref = ref(_full_input(data, m).double())
        torch.testing.assert_close(out[m], out_ref, rtol=0, atol=1e-12)
        loss = (lambda o: F.cross_entropy(o, data.labels[m])) if task == "classification" else \
            (lambda o: F.mse_loss(o[:, 0], data.labels[m].double()))
        fast.zero_grad()
        loss(fast(data.queries.double(), data.contexts.double())[m]).backward()
        loss(out_ref).backward()
        for name, p in fast.named_parameters():
            torch.testing.assert_close(p.grad[m], getattr(ref, name).grad, rtol=0, atol=1e-12)


def test_a_context_per_example_stays_raw_where_that_takes_fewer_multiply_adds():
    """The rule that chose it (measured on one CPU thread, B = 256, d = d_h = 64: raw rows x3.9 at H = 1,
    x1.56 at H = 20, x1.35 at H = 30, x0.95 at H = 60, x0.85 at n = 1): raw for H = 1-30 at n = 32 and for
    n = 60, embedded for H = 60 or n = 1, and never without A_h (d_h well below d)."""
    def raw(H, n=32, dh=None):
        return MLTAttention([0], 64, H, n, head_dim=dh)._folds_embedding(256)
    assert raw(1) and raw(20) and raw(30) and raw(20, n=60)
    assert not raw(60) and not raw(20, n=1) and not raw(20, dh=8)


@pytest.mark.parametrize("context", ["shared", "random"])
@pytest.mark.parametrize("H, n, dh", [(1, 32, 64), (20, 32, 64), (60, 32, 64), (20, 1, 64), (20, 60, 64), (30, 32, 10)])
def test_the_work_count_is_what_the_model_multiplies(context, H, n, dh):
    """mlt_work.example_work (the packs' padding cost) against torch's count of the forward pass's
    products, in whichever order the model takes them (raw rows or embedded, A_h formed or not): within
    0.5% (the count adds the head outputs' H·n elementwise products, which torch does not count)."""
    model = MLTAttention([0], input_dim=64, heads=H, context_size=n, head_dim=dh, out_dim=100)
    assert mlt_work.example_work(64, H, n, dh, 100, context == "random", 256) == \
        pytest.approx(_forward_multiply_adds(model, context, 256), rel=5e-3)


def test_the_work_count_tells_the_model_s_orders_of_products_apart(monkeypatch):
    """The comparison above fails when the count assumes another order than the model takes: the
    random-context rows counted as embedded while the model leaves them raw (H = 20, n = 32)."""
    model = MLTAttention([0], input_dim=64, heads=20, context_size=32, out_dim=100)
    assert model._folds_embedding(256)
    torch_count = _forward_multiply_adds(model, "random", 256)
    monkeypatch.setattr(mlt_work, "folds_embedding", lambda *a: False)
    assert mlt_work.example_work(64, 20, 32, 64, 100, True, 256) != pytest.approx(torch_count, rel=5e-3)


def _forward_multiply_adds(model: MLTAttention, context: str, B: int) -> float:
    d, n = model.input_dim, model.context_size
    q = torch.rand(1, B, d)
    c = torch.rand(1, n, d) if context == "shared" else torch.rand(1, B, n, d)
    with FlopCounterMode(display=False) as count, torch.no_grad():
        model(q, c)
    return count.get_total_flops() / 2 / B


def test_query_never_attends_to_itself():
    data = _data("random")
    ref = ReferenceMLTAttention(MLTAttention([0], 8, 3, 5, out_dim=7))
    alpha, _ = ref.attention(_full_input(data, 0))
    assert torch.all(alpha[:, :, :, 0] == 0)         # column 0 (the query) gets no weight, every row


def test_changing_a_masked_or_unread_token_changes_nothing():
    """Rows 1..n of the output are never read, and the query is no key: only the context as keys
    and the query as query matter. Perturbing the query's key/value contribution must not matter."""
    data = _data("random")
    fast = MLTAttention([0], 8, 3, 5, out_dim=7).double()
    q, c = data.queries[:1].double(), data.contexts[:1].double()
    base = fast(q, c)
    # In the reference the query row is also row 0 of keys/values; the mask must hide it.
    ref = ReferenceMLTAttention(fast).double()
    x = _full_input(data, 0).double()
    alpha, emb = ref.attention(x)
    v = torch.einsum("bld,hd->bhl", emb, ref.w_v)
    v_perturbed = v.clone()
    v_perturbed[:, :, 0] += 1e3                      # a huge change to the query's value
    heads = (alpha @ v[..., None])[:, :, 0, 0]
    heads_perturbed = (alpha @ v_perturbed[..., None])[:, :, 0, 0]
    torch.testing.assert_close(heads, heads_perturbed, rtol=0, atol=0)
    torch.testing.assert_close(ref(x), base[0], rtol=0, atol=1e-12)


def test_batched_models_are_independent():
    """Model m is the same model (init and outputs) whether it is built alone or batched."""
    data = _data("shared", M=3)
    many = MLTAttention([0, 1, 2], 8, 3, 5, out_dim=7)
    alone = MLTAttention([1], 8, 3, 5, out_dim=7)
    for name, p in alone.named_parameters():
        torch.testing.assert_close(p[0], getattr(many, name)[1], rtol=0, atol=0)
    torch.testing.assert_close(many(data.queries, data.contexts)[1],
                               alone(data.queries[1:2], data.contexts[1:2])[0])


def test_data_draws_are_seeded_and_shaped():
    a, b = _data("random", M=2), _data("random", M=2)
    assert torch.equal(a.queries, b.queries) and torch.equal(a.contexts, b.contexts)
    assert a.contexts.shape == (2, 16, 5, 8) and _data("shared").contexts.shape == (2, 5, 8)
    assert not torch.equal(a.queries[0], a.queries[1])            # seeds differ
    assert a.labels.dtype == torch.long and int(a.labels.max()) < 7
    assert float(a.queries.min()) >= 0 and float(a.queries.max()) < 1


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("heads,head_dim,value_dim", [(1, 8, 1), (3, 4, 1), (9, 8, 1), (1, 8, 4), (3, 4, 2)])
def test_the_hand_written_shared_context_gradient_is_the_reference_gradient(task, heads, head_dim, value_dim):
    """The training step's gradient (memcap.models.mlt_shared_grad) equals the original full-attention
    model's autograd gradient of each model's mean loss, per model, to float64 rounding."""
    from memcap.models.mlt_shared_grad import shared_context_grads

    data = _data("shared", M=3, T=16, task=task)
    out_dim = 7 if task == "classification" else 1
    fast = MLTAttention([0, 1, 2], input_dim=8, heads=heads, context_size=5, head_dim=head_dim,
                        out_dim=out_dim, value_dim=value_dim).double()
    labels = data.labels if task == "classification" else data.labels.double()
    shared_context_grads(fast, data.queries.double(), data.contexts.double(), labels, task == "classification")
    for m in range(3):
        ref = ReferenceMLTAttention(fast, m).double()
        out = ref(_full_input(data, m).double())
        loss = F.cross_entropy(out, labels[m]) if task == "classification" else F.mse_loss(out[:, 0], labels[m])
        loss.backward()
        for name, p in fast.named_parameters():
            torch.testing.assert_close(p.grad[m], getattr(ref, name).grad, rtol=0, atol=1e-12)



# ---- values per head (d_v) -------------------------------------------------------------------------

def test_one_value_a_head_is_the_paper_model_bit_for_bit():
    """d_v = 1: the paper's parameter shapes and initial draws (drawn here in the paper model's order),
    and its outputs and gradients on fixed weights: a plain loop over heads with W_V^h a vector."""
    from memcap.models.mlt_attention import _uniform, _xavier_bound

    d, H, n, dh, C = 8, 3, 5, 4, 7
    model = MLTAttention([5], input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=C)
    g, lin = torch.Generator().manual_seed(5), 1 / d ** 0.5
    drawn = {"emb_w": _uniform((d, d), lin, g), "emb_b": _uniform((d,), lin, g),
             "w_q": _uniform((H, d, dh), _xavier_bound(dh, d), g), "w_k": _uniform((H, d, dh), _xavier_bound(dh, d), g),
             "w_v": _uniform((H, d), _xavier_bound(1, d), g), "w_o": _uniform((H, d), _xavier_bound(d, H), g),
             "dec_w": _uniform((d, C), lin, g), "dec_b": _uniform((C,), lin, g)}
    assert [k for k, _ in model.named_parameters()] == list(drawn)
    for k, v in model.named_parameters():
        assert v.shape[1:] == drawn[k].shape and torch.equal(v[0], drawn[k]), k
    assert model.shapes == [(H, dh, n)] and model.shared_params == mlt_work.param_count(d, H, dh, C)

    model = model.double()
    data = _data("shared", M=1)
    out = model(data.queries.double(), data.contexts.double())[0]
    F.cross_entropy(out, data.labels[0], reduction="sum").backward()
    w = {k: v.detach()[0].clone().requires_grad_() for k, v in model.named_parameters()}
    pe = model.pe.double()
    E = data.contexts[0].double() @ w["emb_w"] + w["emb_b"] + pe[1:n + 1]
    ref = []
    for q in data.queries[0].double():
        e = q @ w["emb_w"] + w["emb_b"] + pe[0]
        heads = torch.stack([torch.softmax((E @ w["w_k"][h]) @ (w["w_q"][h].T @ e) / d ** 0.5, 0) @ (E @ w["w_v"][h])
                             for h in range(H)])
        ref.append((heads @ w["w_o"]) @ w["dec_w"] + w["dec_b"])
    ref = torch.stack(ref)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    F.cross_entropy(ref, data.labels[0], reduction="sum").backward()
    for k, v in model.named_parameters():
        torch.testing.assert_close(v.grad[0], w[k].grad, rtol=0, atol=1e-12, msg=k)


def test_values_per_head_widen_the_readout_and_count_their_parameters():
    d, H, n, dh, C, dv = 8, 3, 5, 4, 7, 4
    model = MLTAttention([0], input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=C, value_dim=dv)
    assert model.w_v.shape == model.w_o.shape == (1, H * dv, d) and model.shapes == [(H, dh, n, dv)]
    assert model.shared_params == sum(p[0].numel() for p in model.parameters())
    assert mlt_work.param_count(d, H, dh, C, dv) - mlt_work.param_count(d, H, dh, C) == 2 * H * (dv - 1) * d
    # each of a head's values reads the head's attention: with its other values zero, value 0 alone is d_v = 1's head
    one = MLTAttention([0], input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=C).double()
    wide = MLTAttention([0], input_dim=d, heads=H, context_size=n, head_dim=dh, out_dim=C, value_dim=dv).double()
    with torch.no_grad():
        for k, v in one.named_parameters():
            if k in ("w_v", "w_o"):
                rows = torch.zeros(1, H, dv, d, dtype=torch.float64)
                rows[:, :, 0] = v
                getattr(wide, k).copy_(rows.flatten(1, 2))
            else:
                getattr(wide, k).copy_(v)
    data = _data("random", M=1)
    torch.testing.assert_close(wide(data.queries.double(), data.contexts.double()),
                               one(data.queries.double(), data.contexts.double()), rtol=0, atol=1e-12)


def test_a_pack_of_models_with_different_values_per_head_equals_each_alone():
    data = _data("shared", M=3)
    models = [MLTAttention([s], 8, H, 5, head_dim=4, out_dim=7, value_dim=dv) for s, H, dv in ((0, 2, 1), (1, 3, 4), (2, 1, 2))]
    packed = MLTAttention.stack(models)
    assert packed.value_dim == 4 and [packed.param_count(m) for m in range(3)] == [m.shared_params for m in models]
    out = packed(data.queries, data.contexts)
    for m, alone in enumerate(models):
        torch.testing.assert_close(out[m], alone(data.queries[m:m + 1], data.contexts[m:m + 1])[0], rtol=1e-5, atol=1e-6)


def test_a_forward_changed_without_its_hand_gradient_stops_training_before_a_step(monkeypatch):
    """The shared-context trainer steps on a hand-written gradient: a run first checks it against autograd's
    gradient of the model's own forward. Changed forward (a temperature in the scores), unchanged
    gradient: StaleGradient names the model and the parameters, nothing trains; unchanged: it trains."""
    from memcap.models import mlt_attention
    from memcap.training.step import StaleGradient
    from memcap.training.config import TrainConfig
    from memcap.training.loop import train

    cfg = TrainConfig(lr=1e-2, batch_size=8, epochs=1, min_steps=3, eval_every=3, early_stop=False)

    def run():
        data = _data("shared", M=2, T=16)
        model = MLTAttention([0, 1], input_dim=8, heads=2, context_size=5, head_dim=4, out_dim=7)
        return train(model, data, [0, 1], cfg, True, progress=False)

    results, _ = run()
    assert [r.steps_run for r in results] == [3, 3]
    masked = mlt_attention.MLTAttention.masked
    monkeypatch.setattr(mlt_attention.MLTAttention, "masked", lambda self, s: masked(self, 2 * s))
    with pytest.raises(StaleGradient, match=r"MLTAttention: the hand-written shared-context gradient .* "
                                            r"not autograd's .*w_q \(largest difference"):
        run()
