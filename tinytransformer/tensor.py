"""Tensor and Tape: record the ops of a forward pass, replay them backwards.

    with Tape() as tape:
        loss = F.cross_entropy(model(src, tgt_in), tgt_out)
    tape.backward(loss)          # or loss.backward()

Inside a `with Tape()` block every op applied to a Tensor that requires a
gradient is written down, in order, with the cache its backward needs.
backward() walks that list once in reverse, hands each op the gradient of its
output and adds what comes back into the .grad of its inputs, out of place
(grad = grad + g: one array may be shared). Outside a Tape nothing is recorded;
dropout still needs model.eval(). The tape knows nothing about Transformers.

Backward reads the arrays the forward pass saw, so changing one in place in
between (`a.data[0] = 5`) would give a wrong gradient without a word. While a
tape holds them, the data of the leaves it recorded (the parameters and the
Tensors you made, not the ops' outputs: freezing those too costs about 1.5% of
a training step) is read-only: such a change is a ValueError ("assignment
destination is read-only"), as PyTorch refuses it too. backward (or release,
for a tape that is not replayed) makes them writeable again.
"""
from collections import namedtuple

import numpy as np

from . import ops

_active_tapes = []     # the open `with Tape()` blocks, outermost first


def recording():
    """True inside a `with Tape()` block: ops on Tensors that require a gradient are being written down."""
    return bool(_active_tapes)


class Tensor:
    """An ndarray with a .grad; ops on it are recorded by the active Tape."""

    __slots__ = ("data", "grad", "requires_grad", "name", "_tape")
    __array_ufunc__ = None    # ndarray + Tensor calls Tensor.__radd__, never a silent object array

    def __init__(self, data, requires_grad=False, name=None):
        self.data = data if isinstance(data, np.ndarray) else np.asarray(data)
        if requires_grad and self.data.dtype.kind != "f":
            raise TypeError(f"Tensor: requires_grad needs floating-point data, got dtype {self.data.dtype}")
        self.grad, self.requires_grad, self.name = None, requires_grad, name
        self._tape = None     # the tape that recorded the op making this tensor

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    T = property(lambda self: self.transpose(), doc="All axes reversed, as NumPy's ndarray.T (a matrix's transpose).")

    def __repr__(self):
        label = f", name={self.name!r}" if self.name else ""
        return f"Tensor(shape={self.shape}, dtype={self.dtype}, requires_grad={self.requires_grad}{label})"

    def backward(self, grad=None):
        """Backpropagate from this tensor through the tape that recorded it."""
        if self._tape is None:
            raise RuntimeError("backward: this tensor was not computed inside a `with Tape()` block "
                               "from tensors with requires_grad=True, so there is nothing to replay")
        self._tape.backward(self, grad)

    def __add__(self, other): return apply(ops.add_forward, ops.add_backward, self, other)
    def __radd__(self, other): return apply(ops.add_forward, ops.add_backward, other, self)
    def __sub__(self, other): return apply(ops.sub_forward, ops.sub_backward, self, other)
    def __rsub__(self, other): return apply(ops.sub_forward, ops.sub_backward, other, self)
    def __mul__(self, other): return apply(ops.mul_forward, ops.mul_backward, self, other)
    def __rmul__(self, other): return apply(ops.mul_forward, ops.mul_backward, other, self)
    def __truediv__(self, other): return apply(ops.div_forward, ops.div_backward, self, other)
    def __rtruediv__(self, other): return apply(ops.div_forward, ops.div_backward, other, self)
    def __matmul__(self, other): return apply(ops.matmul_forward, ops.matmul_backward, self, other)
    def __rmatmul__(self, other): return apply(ops.matmul_forward, ops.matmul_backward, other, self)
    def __neg__(self): return apply(ops.mul_forward, ops.mul_backward, self, -1.0)
    def sum(self, axis=None, keepdims=False): return apply(ops.sum_forward, ops.sum_backward, self, axis=axis, keepdims=keepdims)
    def mean(self, axis=None, keepdims=False): return apply(ops.mean_forward, ops.mean_backward, self, axis=axis, keepdims=keepdims)
    def reshape(self, *shape): return apply(ops.reshape_forward, ops.reshape_backward, self, shape=shape[0] if len(shape) == 1 else shape)
    def transpose(self, *axes): return apply(ops.transpose_forward, ops.transpose_backward, self, axes=(axes[0] if len(axes) == 1 else axes) or None)


class Record(namedtuple("Record", "name backward cache inputs output")):
    """One line of the tape: which op ran (name, backward), on what (inputs, output), and what backward needs."""

    def __str__(self):
        shapes = " ".join(str(t.shape) if isinstance(t, Tensor) else "const" for t in self.inputs if t is not None)
        return f"{self.name:<20} {shapes} -> {self.output.shape}"


def op_name(forward):
    """The op's name: name_forward, or its fast twin name_forward_fast (ops/attention_fast.py) -> name."""
    return forward.__name__.removesuffix("_fast").removesuffix("_forward")


def apply(forward, backward, *inputs, **options):
    """Run forward on the arrays of inputs; record it if a tape is active and an input needs a grad."""
    return apply_with_cache(forward, backward, *inputs, **options)[0]


def apply_with_cache(forward, backward, *inputs, **options):
    """apply, also returning the op's cache (F.attention reads the probabilities there)."""
    arrays = [t.data if isinstance(t, Tensor) else t for t in inputs]
    if not (_active_tapes and any(isinstance(t, Tensor) and t.requires_grad for t in inputs)):
        out, cache = forward(*arrays, **options)
        return Tensor(out), cache
    tape = _active_tapes[-1]
    for t in inputs:    # computed on a tape now closed: backward here could not reach what it came from
        if isinstance(t, Tensor) and t._tape is not None and t._tape not in _active_tapes and not tape.holds(t):
            raise ValueError(f"{op_name(forward)}: an input was computed inside another "
                             "`with Tape()` block, now closed, so no gradient could reach what it was computed "
                             "from; compute it inside this block, or pass Tensor(x.data) as a constant")
    out, cache = tape.run_forward(forward, arrays, options)
    out = Tensor(out)
    out.requires_grad, out._tape = True, tape
    record = Record(op_name(forward), backward, cache, inputs, out)
    # what backward will read may not change until it has run: the leaves among the inputs (parameters, inputs)
    frozen = [t.data for t in inputs if isinstance(t, Tensor) and t._tape is None and t.data.flags.writeable]
    for array in frozen:
        array.flags.writeable = False
    for tape in _active_tapes:   # an op inside nested blocks is inside each of them
        tape.records.append(record)
        tape.frozen += frozen
    return out, cache


class Tape:
    """Records ops inside `with Tape() as tape:`; `tape.backward(loss)` replays them in reverse.

    Blocks may nest (an op inside both is recorded in both); replay only one of them per
    forward pass, or the second replay starts from the .grad the first one left.
    """

    def __init__(self):
        self.records, self.released, self.frozen = [], False, []    # frozen: arrays made read-only while recorded

    def __enter__(self):
        _active_tapes.append(self)
        return self

    def __exit__(self, *exc):
        _active_tapes.remove(self)
        if exc[0] is not None:   # the forward pass failed: nothing will be replayed
            self.release()
    def __len__(self): return len(self.records)

    def __str__(self):
        if self.released:
            return "Tape(released: replayed by backward, caches freed)"
        lines = [f"Tape with {len(self.records)} records (op, input shapes -> output shape):"]
        lines += [f"{i:4d}  {record}" for i, record in enumerate(self.records)]
        return "\n".join(lines)

    def backward(self, output, grad=None):
        """Seed output.grad with grad (1 for a scalar), replay the records in reverse, adding into every
        input's .grad out of place (g may be shared with another .grad), then self.release(): once only."""
        if self.released:
            raise RuntimeError("backward: this tape was already replayed and its caches freed; "
                               "run the forward pass again inside a new `with Tape()` block")
        if grad is None:
            if output.data.size != 1:
                raise ValueError(f"backward: output has shape {output.shape}; pass grad= of that shape "
                                 "(only a single number has an implied gradient of 1)")
            grad = np.ones_like(output.data)
        elif np.shape(grad) != output.shape:
            raise ValueError(f"backward: grad has shape {np.shape(grad)} but output has {output.shape}")
        if not self.holds(output):
            raise ValueError("backward: output was not recorded on this tape (it was on another one, or on none); "
                             "call the backward of the tape that recorded it: output.backward()")
        output.grad = grad if output.grad is None else output.grad + grad
        for record in reversed(self.records):
            dout = record.output.grad
            if dout is None:         # this op does not lead to the output
                continue
            grads = self.run_backward(record, dout)
            for t, g in zip(record.inputs, grads):
                if isinstance(t, Tensor) and t.requires_grad and g is not None:
                    t.grad = g if t.grad is None else t.grad + g
        self.release()

    def holds(self, tensor):
        """True if this tape recorded the op that made tensor (a leaf: False)."""
        return tensor._tape is self or any(record.output is tensor for record in self.records)

    def release(self):
        """Free the caches and make the recorded arrays writeable again; the tape can no longer be replayed."""
        for array in self.frozen:
            array.flags.writeable = True
        self.records.clear()
        self.frozen.clear()
        self.released = True

    # run_forward runs on the innermost tape, run_backward on the tape being replayed: ProfilingTape times both.
    def run_forward(self, forward, arrays, options): return forward(*arrays, **options)
    def run_backward(self, record, dout): return record.backward(dout, record.cache)
