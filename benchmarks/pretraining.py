"""Does masked-LM pretraining help BERT answer a question about its sequences? Pretrained against scratch.

For each seed: pretrain a BERT by masked-language modelling on the
copy-or-reverse corpus (tinytransformer/mlm.py: unlabelled, fresh sequences
every step), then fine-tune it, [CLS] head new, on a few labelled sequences
(is the second half a copy or a reverse of the first?); and train the same
model from scratch on the same labelled sequences for the same number of
steps. Both are measured by held-out accuracy (1000 sequences, none of them
among the labelled ones) after every --eval-every steps. The pretrained
model has had --pretrain-steps more steps of compute on unlabelled data: that
is the comparison pretraining makes. Run from the repository root:

    PYTHONPATH=. python benchmarks/pretraining.py --seeds 0 1 2 3 4
"""
import argparse
import os
import statistics


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--pretrain-steps", type=int, default=1500)
    parser.add_argument("--fine-tune-steps", type=int, default=300)
    parser.add_argument("--labelled", type=int, default=256, help="labelled training sequences")
    parser.add_argument("--eval-every", type=int, default=50)
    args = parser.parse_args(argv)

    from tinytransformer.mlm import classifier_from
    from tinytransformer.tasks import DEFAULTS, make_task
    from tinytransformer.train import EVAL_SEED_OFFSET, train

    d = DEFAULTS["classify"]
    sizes = dict(d_model=d["d_model"], n_heads=d["heads"], n_layers=d["layers"], d_ff=d["d_ff"], dropout=0.0)
    schedule = dict(batch_size=d["batch_size"], lr_scale=d["lr"], warmup=d["warmup"], progress=False)
    print(f"BERT d_model {sizes['d_model']}, {sizes['n_heads']} heads, {sizes['n_layers']} layers; "
          f"pretraining {args.pretrain_steps} steps, fine-tuning {args.fine_tune_steps} steps on "
          f"{args.labelled} labelled sequences; load {os.getloadavg()[0]:.2f}\n")
    print(f"{'seed':>4}  {'pretrained: accuracy by step':<44}{'scratch: accuracy by step':<44}")
    finals = {"pretrained": [], "scratch": []}
    for seed in args.seeds:
        mlm_task = make_task("mlm", seed=seed + EVAL_SEED_OFFSET)
        pretrained = train(mlm_task.config(**sizes), mlm_task, steps=args.pretrain_steps, seed=seed,
                           eval_every=0, **schedule).model
        question = make_task("classify", seed=seed + EVAL_SEED_OFFSET, labelled=args.labelled)
        runs = {
            "pretrained": train(None, question, model=classifier_from(pretrained, 2, rng=seed),
                                steps=args.fine_tune_steps, seed=seed, eval_every=args.eval_every,
                                target_accuracy=None, **schedule),
            "scratch": train(question.config(**sizes), question, steps=args.fine_tune_steps, seed=seed,
                             eval_every=args.eval_every, target_accuracy=None, **schedule),
        }
        cells = []
        for name, result in runs.items():
            finals[name].append(result.exact_match)
            cells.append(" ".join(f"{accuracy:.2f}" for _, accuracy in result.eval_history))
        print(f"{seed:>4}  {cells[0]:<44}{cells[1]:<44}", flush=True)
    wins = sum(p > s for p, s in zip(finals["pretrained"], finals["scratch"]))
    print(f"\nheld-out accuracy after {args.fine_tune_steps} fine-tuning steps, over {len(args.seeds)} seeds:")
    for name, values in finals.items():
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        print(f"  {name:<11} mean {statistics.mean(values):.3f}  sd {spread:.3f}  "
              f"min {min(values):.3f}  max {max(values):.3f}")
    print(f"  pretrained ahead on {wins} of {len(args.seeds)} seeds; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
