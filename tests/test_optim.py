"""Optimizers against updates computed by hand, the schedules, gradient clipping."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.optim import SGD, Adam, AdamFast, AdamW, WarmupCosineSchedule, WarmupSchedule, clip_grad_norm

from helpers import param


def test_sgd_step_is_w_minus_lr_times_grad():
    w = param([1.0, 2.0])
    w.grad = np.array([0.5, -1.0])
    SGD([w], lr=0.1).step()
    np.testing.assert_allclose(w.data, [0.95, 2.1])


def test_sgd_momentum_and_weight_decay_by_hand():
    w = param([1.0])
    optimizer = SGD([w], lr=0.1, momentum=0.9, weight_decay=0.5)
    w.grad = np.array([2.0])
    optimizer.step()      # g = 2 + 0.5 * 1 = 2.5;  v = 2.5;  w = 1 - 0.25 = 0.75
    np.testing.assert_allclose(w.data, [0.75])
    w.grad = np.array([1.0])
    optimizer.step()      # g = 1 + 0.375 = 1.375;  v = 0.9 * 2.5 + 1.375 = 3.625;  w = 0.75 - 0.3625
    np.testing.assert_allclose(w.data, [0.3875])


def test_adam_first_step_moves_each_weight_by_lr_times_sign_of_grad():
    # step 1: m_hat = g and v_hat = g**2, so the update is lr * g / (|g| + eps)
    w = param([1.0, 2.0, 3.0])
    w.grad = np.array([0.5, -50.0, 3.0])
    Adam([w], lr=0.1).step()
    np.testing.assert_allclose(w.data, [0.9, 2.1, 2.9], rtol=1e-9)


def test_adam_second_step_by_hand():
    w = param([0.0])
    optimizer = Adam([w], lr=0.5, betas=(0.5, 0.75), eps=0.0)
    w.grad = np.array([1.0])
    optimizer.step()                      # m = 0.5, v = 0.25: m_hat = 1, v_hat = 1, w = -0.5
    w.grad = np.array([3.0])
    optimizer.step()                      # m = 0.25 + 1.5 = 1.75, v = 0.1875 + 2.25 = 2.4375
    m_hat, v_hat = 1.75 / 0.75, 2.4375 / (1 - 0.75 ** 2)
    np.testing.assert_allclose(w.data, [-0.5 - 0.5 * m_hat / np.sqrt(v_hat)], rtol=1e-12)


def test_adam_minimises_a_quadratic():
    w = param([3.0, -2.0])
    optimizer = Adam([w], lr=0.05)
    for _ in range(500):
        w.grad = 2 * (w.data - np.array([1.0, 0.5]))       # d/dw |w - (1, 0.5)|^2
        optimizer.step()
    np.testing.assert_allclose(w.data, [1.0, 0.5], atol=1e-3)


@pytest.mark.parametrize("make", [lambda w: SGD([w], lr=0.01), lambda w: Adam([w], lr=0.01), lambda w: AdamFast([w], lr=0.01)],
                         ids=["SGD", "Adam", "AdamFast"])
def test_step_keeps_float32_and_updates_in_place(make):
    w = tt.Tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    optimizer = make(w)
    data = w.data                  # AdamFast made it a view of its one vector; steps change it in place
    w.grad = np.ones(3, dtype=np.float32)
    optimizer.step()
    assert w.data is data and w.data.dtype == np.float32 and np.all(w.data < 1)


def adam_by_the_formula(params, grads_per_step, lr, betas=(0.9, 0.98), eps=1e-9):
    """Adam written per parameter, straight from the docstring, in float64: the reference for both twins."""
    ws = [p.copy() for p in params]
    ms, vs = [np.zeros_like(w) for w in ws], [np.zeros_like(w) for w in ws]
    for t, grads in enumerate(grads_per_step, start=1):
        for w, m, v, g in zip(ws, ms, vs, grads):
            if g is None:
                continue
            m[...] = betas[0] * m + (1 - betas[0]) * g
            v[...] = betas[1] * v + (1 - betas[1]) * g ** 2
            w -= lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps)
    return ws


def steps_of(optimizer_class, start, grads_per_step, replaced_at=None, lr=0.1):
    """The parameters' values after an optimizer of optimizer_class took one step per entry of grads_per_step
    (None: that parameter has no gradient then); before step replaced_at, the first one's .data is replaced."""
    params = [tt.Tensor(w.copy(), requires_grad=True) for w in start]
    optimizer = optimizer_class(params, lr=lr)
    for t, grads in enumerate(grads_per_step):
        if t == replaced_at:
            params[0].data = params[0].data * 2
        for p, g in zip(params, grads):
            p.grad = g
        optimizer.step()
    return [p.data for p in params], optimizer


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adam_and_its_fast_twin_give_the_same_weights_bit_for_bit_and_skip_missing_grads(rng, dtype):
    shapes = [(3, 4), (4,), (2, 2, 3)]
    start = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    # the second parameter has no gradient on step 2: it and its m, v must stay as they were
    grads_per_step = [[rng.standard_normal(shape).astype(dtype) if (t, i) != (1, 1) else None
                       for i, shape in enumerate(shapes)] for t in range(3)]
    plain, _ = steps_of(Adam, start, grads_per_step)
    fast, optimizer = steps_of(AdamFast, start, grads_per_step)
    for a, b, expected in zip(plain, fast, adam_by_the_formula(start, grads_per_step, lr=0.1)):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(a, expected, rtol=1e-12 if dtype == np.float64 else 1e-5)
        assert np.shares_memory(b, optimizer.flat)


def test_both_adams_take_in_a_parameter_whose_data_was_replaced(rng):
    # load_checkpoint assigns p.data = loaded array: the parameter must keep training, from the loaded values
    w = param([1.0, 2.0])
    optimizer = AdamFast([w], lr=0.1)
    w.data = np.array([5.0, 6.0])
    w.grad = np.array([1.0, -1.0])
    optimizer.step()
    np.testing.assert_allclose(w.data, [4.9, 6.1], rtol=1e-9)
    assert np.shares_memory(w.data, optimizer.flat)
    start = [rng.standard_normal((2, 3)), rng.standard_normal(4)]
    grads_per_step = [[rng.standard_normal((2, 3)), rng.standard_normal(4)] for _ in range(3)]
    plain, _ = steps_of(Adam, start, grads_per_step, replaced_at=1)
    fast, _ = steps_of(AdamFast, start, grads_per_step, replaced_at=1)
    for a, b in zip(plain, fast):
        np.testing.assert_array_equal(a, b)


def test_the_fast_adam_needs_one_dtype():
    with pytest.raises(TypeError, match="AdamFast: every parameter must have one dtype"):
        AdamFast([param([1.0]), tt.Tensor(np.ones(1, dtype=np.float32), requires_grad=True)], lr=0.1)


def test_parameters_without_grad_are_skipped_and_zero_grad_clears():
    used, unused = param([1.0]), param([1.0])
    optimizer = SGD([used, unused], lr=1.0)
    used.grad = np.array([1.0])
    optimizer.step()
    assert used.data[0] == 0.0 and unused.data[0] == 1.0
    optimizer.zero_grad()
    assert used.grad is None and unused.grad is None


def test_lr_set_by_a_schedule_is_used():
    w = param([1.0])
    optimizer = SGD([w], lr=1.0)
    optimizer.lr = 0.25
    w.grad = np.array([1.0])
    optimizer.step()
    assert w.data[0] == 0.75


def test_bad_parameters_are_refused():
    w = param([1.0])
    with pytest.raises(ValueError, match="appears twice"):
        Adam([w, w], lr=0.1)
    with pytest.raises(TypeError, match="requires_grad"):
        SGD([tt.Tensor(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="lr"):
        SGD([w], lr=-1.0)


def test_warmup_schedule_values_and_peak():
    schedule = WarmupSchedule(d_model=64, warmup=100, scale=2.0)
    assert schedule(1) == pytest.approx(2.0 * 64 ** -0.5 * 100 ** -1.5)         # linear rise: step * warmup^-1.5
    assert schedule(400) == pytest.approx(2.0 * 64 ** -0.5 * 400 ** -0.5)       # decay: step^-0.5
    values = [schedule(step) for step in range(1, 1001)]
    assert int(np.argmax(values)) + 1 == 100                                   # the peak is at step = warmup
    assert max(values) == pytest.approx(2.0 / np.sqrt(64 * 100))
    with pytest.raises(ValueError, match="count from 1"):
        schedule(0)


def test_clip_grad_norm_scales_all_gradients_together():
    a, b = param([0.0, 0.0]), param([0.0])
    a.grad, b.grad = np.array([3.0, 0.0]), np.array([4.0])
    total = clip_grad_norm([a, b], max_norm=1.0)
    assert total == pytest.approx(5.0)
    np.testing.assert_allclose(a.grad, [0.6, 0.0])
    np.testing.assert_allclose(b.grad, [0.8])


def test_clip_grad_norm_below_the_limit_changes_nothing():
    a = param([0.0, 0.0])
    grad = np.array([0.3, 0.4])
    a.grad = grad
    assert clip_grad_norm([a], max_norm=1.0) == pytest.approx(0.5)
    assert a.grad is grad


def test_clip_grad_norm_is_out_of_place():
    # two tensors may share one gradient array: clipping one must not change the other
    a, b = param([0.0]), param([0.0])
    shared = np.array([10.0])
    a.grad = shared
    clip_grad_norm([a], max_norm=1.0)
    b.grad = shared
    assert shared[0] == 10.0 and a.grad[0] == pytest.approx(1.0)


@pytest.mark.torch
def test_adam_and_sgd_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) for _ in range(5)]
    for ours_cls, theirs_cls, options in [
            (Adam, torch.optim.Adam, dict(betas=(0.9, 0.98), eps=1e-9)),
            (AdamW, torch.optim.AdamW, dict()),                                  # both sides' defaults
            (AdamW, torch.optim.AdamW, dict(betas=(0.8, 0.95), eps=1e-6, weight_decay=0.3)),
            (SGD, torch.optim.SGD, dict(momentum=0.9, weight_decay=0.01))]:
        ours = param(w0.copy())
        theirs = torch.tensor(w0.copy(), requires_grad=True)
        opt_ours, opt_theirs = ours_cls([ours], lr=0.1, **options), theirs_cls([theirs], lr=0.1, **options)
        for step, g in enumerate(grads, start=1):
            opt_ours.lr = 0.1 / step
            for group in opt_theirs.param_groups:
                group["lr"] = 0.1 / step
            ours.grad, theirs.grad = g, torch.tensor(g)
            opt_ours.step()
            opt_theirs.step()
        np.testing.assert_allclose(ours.data, theirs.detach().numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=ours_cls.__name__)


@pytest.mark.torch
def test_adamw_equals_torch_step_for_step_on_two_parameters_under_a_cosine_schedule():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    w0 = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    ours = [param(w.copy()) for w in w0]
    theirs = [torch.tensor(w.copy(), requires_grad=True) for w in w0]
    opt_ours = AdamW(ours, lr=0.0, weight_decay=0.1)
    opt_theirs = torch.optim.AdamW(theirs, lr=0.0, weight_decay=0.1)
    schedule = WarmupCosineSchedule(0.05, warmup=3, cycle=10, min_lr=0.005)
    for step in range(1, 13):
        opt_ours.lr = schedule(step)
        for group in opt_theirs.param_groups:
            group["lr"] = schedule(step)
        for a, b in zip(ours, theirs):
            g = rng.standard_normal(a.shape)
            a.grad, b.grad = g, torch.tensor(g)
        opt_ours.step()
        opt_theirs.step()
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


def test_adamw_decay_is_decoupled_from_the_gradient_by_hand():
    # a zero gradient: Adam's update is 0, so AdamW's step is the decay alone, w * (1 - lr * weight_decay)
    w = param([2.0, -4.0])
    w.grad = np.zeros(2)
    AdamW([w], lr=0.1, weight_decay=0.5).step()
    np.testing.assert_allclose(w.data, [2.0 * 0.95, -4.0 * 0.95], rtol=1e-12)
    # first step with a gradient: decay, then lr * sign(g) (m_hat = g, v_hat = g^2), whatever g's size
    w = param([1.0, 1.0])
    w.grad = np.array([1000.0, -0.001])
    AdamW([w], lr=0.1, eps=0.0, weight_decay=0.5).step()
    np.testing.assert_allclose(w.data, [0.95 - 0.1, 0.95 + 0.1], rtol=1e-12)


def test_adamw_keeps_float32_and_skips_a_parameter_without_a_gradient():
    w, unused = (tt.Tensor(np.ones(n, np.float32), requires_grad=True) for n in (3, 1))
    optimizer = AdamW([w, unused], lr=0.1)
    w.grad = np.ones(3, np.float32)
    optimizer.step()
    assert w.data.dtype == np.float32 and unused.data[0] == 1.0    # not decayed either, as torch


def test_warmup_cosine_schedule_by_hand():
    schedule = WarmupCosineSchedule(1e-3, warmup=10, cycle=110, min_lr=1e-4)
    assert schedule(0) == 0.0                                   # from 0 at step 0
    assert schedule(5) == pytest.approx(5e-4)                   # linear: 1e-3 * 5 / 10
    assert schedule(10) == pytest.approx(1e-3)                  # the peak at step = warmup
    assert schedule(60) == pytest.approx(5.5e-4)                # half way down the cosine: (1e-3 + 1e-4) / 2
    assert schedule(35) == pytest.approx(1e-4 + 9e-4 * (1 + np.cos(np.pi / 4)) / 2)   # a quarter of the way
    assert schedule(110) == pytest.approx(1e-4) and schedule(5000) == 1e-4     # flat after cycle
    values = [schedule(step) for step in range(200)]
    assert all(a <= b for a, b in zip(values[:10], values[1:11]))            # rises to the peak ...
    assert all(a >= b for a, b in zip(values[10:], values[11:]))             # ... never rises after it
    assert WarmupCosineSchedule(2.0, warmup=0, cycle=4)(0) == 2.0             # no warmup: the peak at step 0
    assert WarmupCosineSchedule(2.0, warmup=0, cycle=4)(2) == pytest.approx(1.0)


BAD_OPTIONS = {
    "lr nan": (lambda w: AdamW([w], lr=float("nan")), r"AdamW: lr must be a finite number >= 0, got nan"),
    "beta1 of 1": (lambda w: AdamW([w], lr=0.1, betas=(1.0, 0.999)), r"AdamW: betas\[0\] must be a finite number in \[0, 1\), got 1.0"),
    "beta2 negative": (lambda w: Adam([w], lr=0.1, betas=(0.9, -0.1)), r"Adam: betas\[1\] must be a finite number in \[0, 1\), got -0.1"),
    "eps negative": (lambda w: AdamW([w], lr=0.1, eps=-1e-8), r"AdamW: eps must be a finite number >= 0, got -1e-08"),
    "weight decay negative": (lambda w: AdamW([w], lr=0.1, weight_decay=-0.01),
                              r"AdamW: weight_decay must be a finite number >= 0, got -0.01"),
    "weight decay nan": (lambda w: AdamW([w], lr=0.1, weight_decay=float("nan")),
                         r"AdamW: weight_decay must be a finite number >= 0, got nan"),
    "warmup past cycle": (lambda w: WarmupCosineSchedule(1e-3, warmup=200, cycle=100),
                          r"WarmupCosineSchedule: warmup \(200\) must not exceed cycle \(100\)"),
    "max_lr nan": (lambda w: WarmupCosineSchedule(float("nan"), warmup=1, cycle=2),
                   r"WarmupCosineSchedule: max_lr must be a finite number >= 0, got nan"),
    "min_lr above max_lr": (lambda w: WarmupCosineSchedule(1e-3, warmup=1, cycle=2, min_lr=1e-2),
                            r"WarmupCosineSchedule: min_lr \(0.01\) must not exceed max_lr \(0.001\)"),
    "warmup not an integer": (lambda w: WarmupCosineSchedule(1e-3, warmup=2.5, cycle=9),
                              r"WarmupCosineSchedule: warmup must be an integer >= 0, got 2.5"),
    "a negative step": (lambda w: WarmupCosineSchedule(1e-3, warmup=2, cycle=9)(-1),
                        r"WarmupCosineSchedule: steps count from 0, got -1"),
}


@pytest.mark.parametrize("make, message", BAD_OPTIONS.values(), ids=BAD_OPTIONS.keys())
def test_bad_optimizer_and_schedule_options_are_one_clear_line(make, message):
    with pytest.raises(ValueError, match=message):
        make(param([1.0]))


def test_adamw_keeps_the_weights_when_an_update_would_overflow():
    """The decay too waits for the check: an infinite gradient leaves every weight as it was."""
    w = tt.Tensor(np.ones(3), requires_grad=True)
    w.grad = np.array([1.0, np.inf, 1.0])
    with pytest.raises(FloatingPointError, match="AdamW: the update of step 1 would make weights NaN or infinite"):
        AdamW([w], lr=0.1, weight_decay=0.5).step()
    np.testing.assert_array_equal(w.data, np.ones(3))
