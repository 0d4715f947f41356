"""Cross-entropy fused with log-softmax, as torch.nn.functional.cross_entropy.

For one position with logits z (V,) and target class c, and label smoothing eps,
the target distribution is q = (1 - eps) * one_hot(c) + eps / V (over all V
classes) and the loss is -sum_v q_v log softmax(z)_v. The mean is taken over
the positions whose target is not ignore_index.
"""
import numpy as np

from .checks import check_float, check_ids
from .softmax import log_softmax_forward


def cross_entropy_forward(logits, targets, ignore_index=None, label_smoothing=0.0):
    """logits (..., V), targets (...) integers in [0, V)  ->  scalar mean loss."""
    check_float("cross_entropy", logits=logits)
    if logits.ndim < 1:
        raise ValueError("cross_entropy: logits must have a class axis (..., V), got a scalar")
    if not isinstance(targets, np.ndarray) or targets.shape != logits.shape[:-1]:
        shape = getattr(targets, "shape", type(targets).__name__)
        raise ValueError(f"cross_entropy: targets must have shape {logits.shape[:-1]} "
                         f"(logits {logits.shape} without the class axis), got {shape}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    check_ids("cross_entropy", targets, what="target")
    V = logits.shape[-1]
    counted = np.ones(targets.shape, dtype=bool) if ignore_index is None else targets != ignore_index
    check_ids("cross_entropy", targets[counted], V, what="target")
    n = int(counted.sum())
    if n == 0:
        raise ValueError("cross_entropy: every target equals ignore_index; the mean over zero targets "
                         "is undefined (PyTorch returns nan)")
    safe_targets = np.where(counted, targets, 0)                      # ignored ones point anywhere valid
    logp, _ = log_softmax_forward(logits, axis=-1)                    # (..., V), never log(softmax)
    logp_target = np.take_along_axis(logp, safe_targets[..., None], axis=-1)[..., 0]  # (...)
    per_position = -(1.0 - label_smoothing) * logp_target - label_smoothing / V * logp.sum(axis=-1)
    loss = (per_position * counted).sum() / n
    return np.asarray(loss, dtype=logits.dtype), (logp, safe_targets, counted, n, label_smoothing)


def cross_entropy_backward(dout, cache):
    logp, safe_targets, counted, n, label_smoothing = cache
    V = logp.shape[-1]
    # loss = -(1/n) sum_counted sum_v q_v log softmax(z)_v  ->  dz = (softmax(z) - q) / n
    # at counted positions (sum_v q_v = 1), and 0 at ignored ones
    # with q = (1 - label_smoothing) * one_hot(target) + label_smoothing / V, subtracted term by term
    probs_minus_q = np.exp(logp)                                                # (..., V) softmax(z)
    probs_minus_q -= label_smoothing / V                                        # in place
    rows = probs_minus_q.reshape(-1, V)                                         # (N, V), a view
    # = probs_minus_q - (1 - label_smoothing) * one_hot(target), subtracted only where one_hot is 1
    rows[np.arange(len(rows)), safe_targets.reshape(-1)] -= 1.0 - label_smoothing
    dlogits = probs_minus_q * ((dout / n) * counted[..., None])                # (..., V), 0 where ignored
    return dlogits, None
