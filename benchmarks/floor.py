"""The matrix-product floor of one training step, against a whole step of each library.

Every training step must do the matrix products of its linear layers and of
attention, forward and backward, whatever library does them. This script
records one forward pass of the classroom model on a tape, takes the shapes of
those products from it, and times just those BLAS calls on ready-made arrays:
no Python, no elementwise work, no allocation of activations. No library can
take a step in less time on this machine, and the time left between this floor
and a step is what everything else (attention's softmax, layer norm, Adam, the
tape) may spend. Run from the repository root:

    PYTHONPATH=. python benchmarks/floor.py [--threads 1 --repeats 50]

With more than one thread PyTorch must be left out (--no-torch): in one process
its idle threads and OpenBLAS's slow each other down.
"""
import argparse
import statistics
import time

from common import classroom_config, import_torch_reference, use_threads


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="BLAS / torch threads")
    parser.add_argument("--repeats", type=int, default=50, help="timed steps of each kind")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    args = parser.parse_args(argv)
    if args.threads > 1 and not args.no_torch:
        parser.error(f"--threads {args.threads} needs --no-torch: in one process each library's "
                     "idle threads slow the other down")
    return args


def step_products(model, batch):
    """{"linear": pairs, "attention": pairs}: the (a, b) whose products a @ b one
    training step computes, forward and backward, by the op that needs them.

    Operands are contiguous copies of the real activations and weights (random
    numbers stand in for the upstream gradients), so BLAS runs at its best.
    """
    import numpy as np

    from tinytransformer.tensor import Tape
    rng = np.random.default_rng(0)
    src, tgt_in, _ = batch
    with Tape() as tape:
        model(src, tgt_in)
    pairs = {"linear": [], "attention": []}
    for record in tape.records:
        if record.name == "linear":
            x2, W, _, _ = record.cache                              # x2 (N, d_in), W (d_in, d_out)
            dy = rng.standard_normal((x2.shape[0], W.shape[1])).astype(x2.dtype)
            # y = x @ W;  dx = dy @ W.T;  dW = x.T @ dy
            pairs["linear"] += [(x2, W), (dy, W.T), (x2.T, dy)]
        elif record.name == "attention":
            q, k, v, weights, _ = record.cache                      # (B, h, T, d_k), weights (B, h, T_q, T_k)
            dout = rng.standard_normal(q.shape[:-1] + v.shape[-1:]).astype(q.dtype)
            dS = rng.standard_normal(weights.shape).astype(q.dtype)
            # S = q @ k.T;  out = W @ v;  dv = W.T @ dout;  dW = dout @ v.T;  dq = dS @ k;  dk = dS.T @ q
            pairs["attention"] += [(q, k.swapaxes(-1, -2)), (weights, v),
                                   (weights.swapaxes(-1, -2), dout), (dout, v.swapaxes(-1, -2)),
                                   (dS, k), (dS.swapaxes(-1, -2), q)]
    return {op: [(np.ascontiguousarray(a), np.ascontiguousarray(b)) for a, b in op_pairs]
            for op, op_pairs in pairs.items()}


def flops(pairs):
    """2 FLOPs (a multiply and an add) per multiply-add of each product a @ b."""
    return sum(2 * a.size * b.shape[-1] for a, b in pairs)


def main(argv=None):
    args = parse_args(argv)
    use_threads(args.threads)
    import numpy as np

    import tinytransformer as tt
    from tinytransformer.tasks.sequences import make_batch, transformer_loss
    from tinytransformer.optim import Adam
    from tinytransformer.train import train_step

    rng = np.random.default_rng(0)
    batches = [make_batch("reverse", 64, 10, 10, rng) for _ in range(args.repeats + 10)]
    model = tt.nn.Transformer(classroom_config(), rng=0)
    optimizer = Adam(model.parameters(), lr=1e-3)
    pairs = step_products(model, batches[0])

    def products(op_pairs):
        for a, b in op_pairs:
            a @ b

    runners = {f"{op} products": lambda batch, op_pairs=op_pairs: products(op_pairs)
               for op, op_pairs in pairs.items()}
    runners |= {"tinytransformer step": lambda batch: train_step(model, optimizer, batch, transformer_loss)}
    reference = None if args.no_torch else import_torch_reference(args.threads)
    if reference is not None:
        torch_model = reference.build_model(reference.CLASSROOM_MODEL, seed=0)
        torch_optimizer = reference.make_optimizer(torch_model)

        def torch_step(batch):
            reference.train_step(torch_model, torch_optimizer, *reference.to_tensors(batch), lr=1e-3)
        runners["PyTorch eager step"] = torch_step

    times = {name: [] for name in runners}
    for i, batch in enumerate(batches):
        for name, run in runners.items():      # take turns, one step each
            start = time.perf_counter()
            run(batch)
            if i >= 10:                          # the first 10 warm up
                times[name].append(1e3 * (time.perf_counter() - start))

    median = {name: statistics.median(ms) for name, ms in times.items()}
    print(f"classroom model, {args.threads} thread(s), median of {args.repeats} steps taken in turns")
    for op, op_pairs in pairs.items():
        ms = median[f"{op} products"]
        print(f"{op + ' products':<24}{ms:>8.2f} ms   {len(op_pairs)} products, "
              f"{flops(op_pairs) / 1e6:.0f} MFLOP, {flops(op_pairs) / ms / 1e6:.0f} GFLOP/s")
    floor = sum(median[f"{op} products"] for op in pairs)
    print(f"{'all matrix products':<24}{floor:>8.2f} ms   (the floor)")
    for name in runners:
        if name.endswith("step"):
            print(f"{name:<24}{median[name]:>8.2f} ms")
    if "PyTorch eager step" in median:
        target = 0.6 * median["PyTorch eager step"]
        print(f"0.6 x PyTorch's step    {target:>8.2f} ms: {target - floor:.2f} ms left for "
              "everything but the matrix products")


if __name__ == "__main__":
    main()
