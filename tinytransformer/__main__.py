"""Command line: `python -m tinytransformer gradcheck`."""
import argparse
import sys

import numpy as np


def gradcheck_command(args):
    """Check every op's backward against finite differences and print a table."""
    from .gradcheck import gradcheck
    from .op_checks import CHECKS

    rng = np.random.default_rng(args.seed)
    print(f"Gradient check of every op: float64, central differences (eps=1e-6), random upstream "
          f"gradient,\npass = allclose(analytic, numeric, atol=1e-5, rtol=1e-3)\n")
    print(f"{'op':<28}{'input':<10}{'max rel error':>15}  result")
    print("-" * 62)
    failures = total = 0
    for check in CHECKS:
        inputs = check.make_inputs(rng)
        results = gradcheck(check.fn, *inputs.values(), names=list(inputs), rng=rng, raise_on_failure=False)
        total += len(results)
        for r in results:
            failures += not r.passed
            print(f"{check.name:<28}{r.name:<10}{r.max_rel_error:>15.2e}  {'pass' if r.passed else 'FAIL'}")
    print("-" * 62)
    print(f"{total - failures} of {total} gradients agree with finite differences"
          + ("" if not failures else f"; {failures} FAILED"))
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinytransformer",
                                     description="A Transformer in NumPy, with hand-derived backward passes.")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("gradcheck", help="check every op's backward pass against finite differences")
    check.add_argument("--seed", type=int, default=0, help="seed of the random inputs and upstream gradients")
    check.set_defaults(run=gradcheck_command)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
