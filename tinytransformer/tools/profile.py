"""Where does a training step spend its time? Ask a tape that times its ops.

ProfilingTape is a Tape that adds up the seconds of every op's forward and
backward, by op name; the plain Tape carries no timers. What is left of a
step's wall time is the optimiser and Python's own bookkeeping (building
Tensors, walking the tape). Any clock will do: time.process_time counts the
process's CPU seconds, which a busy machine inflates far less than the wall
clock (with one BLAS thread; more threads add theirs up).
"""
import time

from ..tensor import Tape, op_name


class ProfilingTape(Tape):
    """A Tape that also fills seconds[name] = {"forward": s, "backward": s, "calls": n}, timed by clock."""

    def __init__(self, clock=time.perf_counter):
        super().__init__()
        self.seconds = {}
        self.clock = clock

    def _add(self, name, phase, seconds):
        totals = self.seconds.setdefault(name, {"forward": 0.0, "backward": 0.0, "calls": 0})
        totals[phase] += seconds
        totals["calls"] += phase == "forward"

    def run_forward(self, forward, arrays, options):
        start = self.clock()
        result = super().run_forward(forward, arrays, options)
        self._add(op_name(forward), "forward", self.clock() - start)
        return result

    def run_backward(self, record, dout):
        start = self.clock()
        grads = super().run_backward(record, dout)
        self._add(record.name, "backward", self.clock() - start)
        return grads


def profile_steps(model, batch, optimizer, loss_fn, steps=20, clock=time.perf_counter):
    """Run `steps` training steps on one batch; return (seconds by op, seconds per step), timed by clock.

    loss_fn(model, batch) -> scalar Tensor: any task's loss (tasks/task.py: Task.loss).
    """
    totals = {}
    start = clock()
    for _ in range(steps):
        with ProfilingTape(clock) as tape:
            loss = loss_fn(model, batch)
        tape.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        for name, seconds in tape.seconds.items():
            into = totals.setdefault(name, {"forward": 0.0, "backward": 0.0, "calls": 0})
            for key in into:
                into[key] += seconds[key]
    return totals, (clock() - start) / steps


def profile_table(totals, step_seconds, steps):
    """A table of milliseconds per step by op, largest first, with what the ops do not explain."""
    rows = sorted(totals.items(), key=lambda item: -(item[1]["forward"] + item[1]["backward"]))
    ms = 1e3 / steps
    lines = [f"{'op':<20}{'calls':>7}{'forward ms':>12}{'backward ms':>13}{'total ms':>10}{'share':>8}",
             "-" * 70]
    in_ops = 0.0
    for name, t in rows:
        total = (t["forward"] + t["backward"]) * ms
        in_ops += total
        lines.append(f"{name:<20}{t['calls'] // steps:>7}{t['forward'] * ms:>12.3f}{t['backward'] * ms:>13.3f}"
                     f"{total:>10.3f}{total / (step_seconds * 1e3):>8.1%}")
    step_ms = step_seconds * 1e3
    lines += ["-" * 70,
              f"{'all ops':<20}{'':>7}{'':>12}{'':>13}{in_ops:>10.3f}{in_ops / step_ms:>8.1%}",
              f"{'optimiser + Python':<20}{'':>7}{'':>12}{'':>13}{step_ms - in_ops:>10.3f}"
              f"{(step_ms - in_ops) / step_ms:>8.1%}",
              f"{'one training step':<20}{'':>7}{'':>12}{'':>13}{step_ms:>10.3f}"]
    return "\n".join(lines)
