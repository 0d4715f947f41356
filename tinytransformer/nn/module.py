"""Module: what every layer and model shares: its parameters, its sub-layers, train/eval mode;
and inference(model), the block in which a model answers without a tape (evaluation, decoding)."""
import contextlib

from ..tensor import Tensor, recording


def parameter(data, name):
    """A Tensor of data that takes a gradient: a parameter, named name."""
    return Tensor(data, requires_grad=True, name=name)


class Module:
    """A layer: holds parameters (Tensors with requires_grad) and sub-layers as attributes."""

    training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_modules(self, prefix=""):
        """(dotted name, Module) for this module ("" for itself) and every sub-layer, in definition order."""
        yield prefix.rstrip("."), self
        for key, value in vars(self).items():
            if isinstance(value, Module):
                yield from value.named_modules(f"{prefix}{key}.")
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield from item.named_modules(f"{prefix}{key}.{i}.")

    def named_parameters(self):
        """(dotted name, Tensor) for every parameter, sub-layers included, in definition order."""
        for module_name, module in self.named_modules():
            for key, value in vars(module).items():
                if isinstance(value, Tensor) and value.requires_grad:
                    yield f"{module_name}.{key}" if module_name else key, value

    def parameters(self):
        return [p for _, p in self.named_parameters()]

    def modules(self):
        return (module for _, module in self.named_modules())

    def zero_grad(self):
        for p in self.parameters():
            p.grad = None

    def train(self, mode=True):
        """Training mode (dropout on) or, with mode=False, evaluation mode (dropout off)."""
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        return self.train(False)


@contextlib.contextmanager
def inference(model, name):
    """Eval mode inside the block (the model's own mode is restored after); refuses to run inside a Tape."""
    if recording():
        raise RuntimeError(f"{name}: called inside a `with Tape()` block; decoding needs no gradients, "
                           "so call it outside the block")
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)
