"""Optimizers, learning-rate schedules, and gradient clipping.

    optimizer = Adam(model.parameters(), lr=0.0)     # or AdamW(..., weight_decay=0.01), as today's LLMs
    schedule = WarmupSchedule(d_model=64, warmup=200)  # or WarmupCosineSchedule(3e-3, warmup=100, cycle=2000)
    for step in range(1, n_steps + 1):
        optimizer.lr = schedule(step)
        optimizer.zero_grad()
        ... forward inside a Tape, tape.backward(loss) ...
        optimizer.step()

An optimizer updates each parameter's .data in place from its .grad; a
parameter whose .grad is None (it did not take part in the loss) is skipped.
"""
import math
import numbers

import numpy as np

from .ops.checks import check_integer, check_number
from .tensor import Tensor


class Optimizer:
    """What SGD and Adam share: the parameter list, the learning rate, zero_grad."""

    def __init__(self, params, lr):
        self.params = list(params)
        for p in self.params:
            if not isinstance(p, Tensor) or not p.requires_grad:
                raise TypeError(f"{type(self).__name__}: every parameter must be a Tensor with "
                                f"requires_grad=True, got {p!r}")
        if len({id(p) for p in self.params}) != len(self.params):
            raise ValueError(f"{type(self).__name__}: a parameter appears twice; it would be updated twice")
        self.lr = lr            # a schedule may set this before each step

    @property
    def lr(self):
        return self._lr

    @lr.setter
    def lr(self, value):         # checked whenever it is set: a negative lr would climb the gradient
        check_number(type(self).__name__, "lr", value, 0)
        self._lr = value

    def zero_grad(self):
        for p in self.params:
            p.grad = None


class SGD(Optimizer):
    """Stochastic gradient descent with momentum and L2 weight decay, as torch.optim.SGD.

        g = grad + weight_decay * w
        v = momentum * v + g          (v starts at 0, so v = g on the first step)
        w = w - lr * v
    """

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
        super().__init__(params, lr)
        check_number("SGD", "momentum", momentum, 0)
        check_number("SGD", "weight_decay", weight_decay, 0)
        self.momentum, self.weight_decay = momentum, weight_decay
        self.velocity = [np.zeros_like(p.data) for p in self.params]

    def step(self):
        """One update; one that would make a weight NaN or infinite (a huge lr) is not made: FloatingPointError,
        every weight kept as it was."""
        updated = []
        for p, v in zip(self.params, self.velocity):
            if p.grad is None:
                continue
            g = p.grad + self.weight_decay * p.data if self.weight_decay else p.grad
            v *= self.momentum
            v += g
            with np.errstate(over="ignore", invalid="ignore"):   # an overflow is checked for just below
                updated.append((p, p.data - self.lr * v))
        if not all(np.isfinite(w).all() for _, w in updated):
            raise FloatingPointError(f"SGD: the update would make weights NaN or infinite (lr={self.lr:g}); the "
                                     "weights are kept as they were")
        for p, w in updated:
            p.data[...] = w


def check_adam_options(name, betas, eps):
    """betas (beta1, beta2) each in [0, 1) and eps >= 0, or one line naming the one that is not."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
    for which, beta in zip(("betas[0]", "betas[1]"), betas):
        check_number(name, which, beta, 0, 1, high_open=True)
    check_number(name, "eps", eps, 0)


class Adam(Optimizer):
    """Adam (Kingma and Ba, 2015) with the paper's betas = (0.9, 0.98) and eps = 1e-9.

    With t the number of steps taken so far (from 1):
        m = beta1 * m + (1 - beta1) * g              running mean of the gradient
        v = beta2 * v + (1 - beta2) * g**2           running mean of its square
        m_hat = m / (1 - beta1**t),  v_hat = v / (1 - beta2**t)    undo the bias towards 0
        w = w - lr * m_hat / (sqrt(v_hat) + eps)

    Written plainly, one parameter at a time; AdamFast is its twin over one flat vector, the same numbers
    bit for bit, which the training loop runs. An update that would make any weight NaN or infinite is
    not made: step raises FloatingPointError and the weights stay as they were (m, v and t have moved on:
    stop training).
    """
    weight_decay = 0.0          # decoupled weight decay: AdamW's, none in Adam

    def __init__(self, params, lr, betas=(0.9, 0.98), eps=1e-9):
        super().__init__(params, lr)
        check_adam_options(type(self).__name__, betas, eps)
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        self.m = [np.zeros_like(p.data) for p in self.params]      # each parameter's m and v, its shape
        self.v = [np.zeros_like(p.data) for p in self.params]

    def step(self):
        self.t += 1
        correction1 = 1.0 - self.beta1 ** self.t
        correction2 = 1.0 - self.beta2 ** self.t
        updated = []                              # (parameter, its new values), made before any is written
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:                   # no gradient: this parameter (and its m, v) stay as they are
                continue
            g = p.grad
            m *= self.beta1
            m += (1.0 - self.beta1) * g
            v *= self.beta2
            v += (1.0 - self.beta2) * g ** 2
            with np.errstate(over="ignore", invalid="ignore"):   # an overflow is checked for just below
                # AdamW: w shrinks towards 0 apart from the gradient's update
                decayed = p.data * (1.0 - self.lr * self.weight_decay) if self.weight_decay else p.data
                updated.append((p, decayed - self.lr * (m / correction1) / (np.sqrt(v / correction2) + self.eps)))
        check_update(self, updated)
        for p, w in updated:
            p.data[...] = w


def check_update(optimizer, updated):
    """FloatingPointError (one line) if any new weight in updated ([(parameter, new values)]) is NaN or infinite."""
    if not all(np.isfinite(w).all() for _, w in updated):     # an overflow (a huge lr, an infinite gradient)
        raise FloatingPointError(f"{type(optimizer).__name__}: the update of step {optimizer.t} would make weights "
                                 f"NaN or infinite (lr={optimizer.lr:g}); the weights are kept as they were")


class AdamFast(Adam):
    """Adam's twin for speed: the same numbers, bit for bit, over one flat vector (Adam without weight decay).

    The update is the same for every weight, so all parameters live in one flat vector (self.flat) and each
    parameter's .data is a view into it: one update over the whole vector instead of one per parameter
    (about 2-4% of a classroom step, benchmarks/ab_speedups.py). A parameter whose .data was replaced
    (load_checkpoint does so) is copied back into the vector before the next step, so it keeps training.
    """

    def __init__(self, params, lr, betas=(0.9, 0.98), eps=1e-9):
        Optimizer.__init__(self, params, lr)
        check_adam_options(type(self).__name__, betas, eps)
        dtypes = {p.data.dtype for p in self.params}
        if len(dtypes) > 1:
            raise TypeError(f"{type(self).__name__}: every parameter must have one dtype (they share one vector), "
                            f"got {dtypes}")
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.t = 0
        sizes = [p.data.size for p in self.params]
        self.flat = np.empty(sum(sizes), dtype=dtypes.pop() if dtypes else np.float64)
        ends = np.cumsum(sizes)
        self.slices = [slice(end - size, end) for size, end in zip(sizes, ends)]
        self.views = [None] * len(self.params)
        for i in range(len(self.params)):
            self._adopt(i)
        self.m = np.zeros_like(self.flat)
        self.v = np.zeros_like(self.flat)
        self.grad = np.zeros_like(self.flat)     # the gradients, gathered into one vector

    def _adopt(self, i):
        """Copy parameter i's values into its slice of the vector and make its .data a view of that slice."""
        p = self.params[i]
        self.flat[self.slices[i]] = p.data.reshape(-1)                            # (size,)
        self.views[i] = p.data = self.flat[self.slices[i]].reshape(p.data.shape)  # back to p's shape

    def step(self):
        skipped = []
        for i, (p, part) in enumerate(zip(self.params, self.slices)):
            if p.data is not self.views[i]:      # replaced since the last step: take the new values in
                self._adopt(i)
            if p.grad is None:                   # no gradient: this parameter (and its m, v) stay as they are
                skipped.append((part, self.flat[part].copy(), self.m[part].copy(), self.v[part].copy()))
                self.grad[part] = 0
            else:
                self.grad[part] = p.grad.reshape(-1)                                # (size,)
        self.t += 1
        correction1 = 1.0 - self.beta1 ** self.t
        correction2 = 1.0 - self.beta2 ** self.t
        g = self.grad
        self.m *= self.beta1
        self.m += (1.0 - self.beta1) * g
        self.v *= self.beta2
        self.v += (1.0 - self.beta2) * g ** 2
        with np.errstate(over="ignore", invalid="ignore"):   # an overflow is checked for just below
            updated = self.flat - self.lr * (self.m / correction1) / (np.sqrt(self.v / correction2) + self.eps)
        for part, w, m, v in skipped:
            updated[part], self.m[part], self.v[part] = w, m, v
        check_update(self, [(None, updated)])
        self.flat[...] = updated


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter, 2019), as torch.optim.AdamW step for step:

        w = w - lr * weight_decay * w                 the decay, apart from the gradient
        w = w - lr * m_hat / (sqrt(v_hat) + eps)      Adam's update, m and v as in Adam

    Adam with an L2 term adds weight_decay * w to the gradient instead, so the
    decay is divided by sqrt(v_hat) like the rest of it: weights with large
    gradients are barely decayed. Here every weight decays by the same factor.
    The decay is PyTorch's, lr times weight_decay; Loshchilov and Hutter's
    Algorithm 2 multiplies their lambda by the schedule multiplier eta_t only
    (w = w - eta_t * lambda * w, the base rate alpha apart), so their lambda is
    this weight_decay times the base rate.
    Every parameter is decayed, as torch does for one parameter group. The
    defaults are torch's: betas (0.9, 0.999), eps 1e-8, weight_decay 0.01.
    """

    def __init__(self, params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        check_number("AdamW", "weight_decay", weight_decay, 0)
        super().__init__(params, lr, betas, eps)
        self.weight_decay = weight_decay


def check_step(name, step, first):
    """A schedule's step: a finite number >= first (a NaN step would give a NaN learning rate)."""
    if isinstance(step, bool) or not isinstance(step, numbers.Real) or not np.isfinite(step) or step < first:
        raise ValueError(f"{name}: steps count from {first}, got {step!r}")


class WarmupSchedule:
    """The paper's learning rate (section 5.3), times a scale factor:

        lr(step) = scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5),  step = 1, 2, ...

    It rises linearly for `warmup` steps, peaks at scale * (d_model * warmup)**-0.5
    when step = warmup, then decays as 1/sqrt(step).
    """

    def __init__(self, d_model, warmup, scale=1.0):
        check_integer("WarmupSchedule", "d_model", d_model, 1)
        check_integer("WarmupSchedule", "warmup", warmup, 1)
        check_number("WarmupSchedule", "scale", scale, 0, low_open=True)
        self.d_model, self.warmup, self.scale = d_model, warmup, scale

    def __call__(self, step):
        check_step("WarmupSchedule", step, 1)
        return self.scale * self.d_model ** -0.5 * min(step ** -0.5, step * self.warmup ** -1.5)


class WarmupCosineSchedule:
    """Linear warmup, then a half cosine down to min_lr, then flat: the schedule of today's LLMs.

        lr(step) = max_lr * step / warmup                                      step <= warmup
                 = min_lr + (max_lr - min_lr) * (1 + cos(pi * progress)) / 2   warmup < step < cycle
                 = min_lr                                                       step >= cycle
        progress = (step - warmup) / (cycle - warmup),  step = 0, 1, 2, ... (counted from 0, as is cycle)
    """

    def __init__(self, max_lr, warmup, cycle, min_lr=0.0):
        for name, value in (("max_lr", max_lr), ("min_lr", min_lr)):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < math.inf:
                raise ValueError(f"WarmupCosineSchedule: {name} must be a finite number >= 0, got {value!r}")
        if min_lr > max_lr:
            raise ValueError(f"WarmupCosineSchedule: min_lr ({min_lr}) must not exceed max_lr ({max_lr})")
        for name, value in (("warmup", warmup), ("cycle", cycle)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
                raise ValueError(f"WarmupCosineSchedule: {name} must be an integer >= 0, got {value!r}")
        if warmup > cycle:
            raise ValueError(f"WarmupCosineSchedule: warmup ({warmup}) must not exceed cycle ({cycle}), "
                             "which counts from step 0 too")
        self.max_lr, self.warmup, self.cycle, self.min_lr = max_lr, warmup, cycle, min_lr

    def __call__(self, step):
        check_step("WarmupCosineSchedule", step, 0)
        if step <= self.warmup:
            return self.max_lr * step / self.warmup if self.warmup else self.max_lr
        if step >= self.cycle:
            return self.min_lr
        progress = (step - self.warmup) / (self.cycle - self.warmup)       # in (0, 1)
        return self.min_lr + (self.max_lr - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))


def clip_grad_norm(params, max_norm):
    """Scale every gradient by the same factor so that their joint L2 norm is at most max_norm.

        total_norm = sqrt(sum over all gradients of sum(g**2))
        if total_norm > max_norm:  g = g * max_norm / total_norm

    Returns total_norm before clipping; a NaN or infinite norm is a FloatingPointError, the gradients unchanged. Out of place (p.grad = p.grad * s): one
    gradient array may be shared by two tensors, so it is never changed in place.
    """
    check_number("clip_grad_norm", "max_norm", max_norm, 0, low_open=True)
    with_grad = [p for p in params if p.grad is not None]
    total_norm = float(np.sqrt(sum(float(np.sum(p.grad.astype(np.float64) ** 2)) for p in with_grad)))
    if not np.isfinite(total_norm):           # scaling by max_norm / inf would turn an infinite gradient into NaN
        raise FloatingPointError(f"clip_grad_norm: the gradients' joint norm is {total_norm} (a gradient holds "
                                 "NaN or infinite values); nothing was clipped")
    if total_norm > max_norm:
        s = max_norm / total_norm
        for p in with_grad:
            p.grad = p.grad * s
    return total_norm
