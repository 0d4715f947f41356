"""What the train command writes (--save, --json, --plot): checked before training starts, written
atomically after it (files.py), and a trained model never lost to a failed write."""
import json
import os
import tempfile

import numpy as np

from .common import BadInput, tell


OUTPUT_EXTENSIONS = {"--save": (".npz",), "--json": (".json",), "--plot": (".png", ".svg", ".pdf")}


def check_train_outputs(args, pretrained):
    """Every file train will write must be writable before training starts (files.check_outputs): a trained
    model is never lost to a missing folder, a taken name or a missing plotting library."""
    from ..checkpoint import is_checkpoint
    from ..files import OutputError, check_outputs as check
    outputs = {flag: getattr(args, flag[2:]) for flag in OUTPUT_EXTENSIONS}
    try:
        check(outputs, OUTPUT_EXTENSIONS, inputs={"--pretrained": pretrained}, force=args.force,
              is_ours={"--save": is_checkpoint, "--json": is_summary, "--plot": is_plot})
    except OutputError as error:
        raise BadInput(str(error)) from None
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise BadInput("--plot needs matplotlib: pip install 'tinytransformer[plot]'") from None


def is_summary(path):
    """True if path holds a summary train --json wrote."""
    from ..files import json_keys
    return {"task", "steps", "losses"} <= json_keys(path)


def is_plot(path):
    """True if path holds an image matplotlib wrote (it signs its PNG, SVG and PDF files)."""
    try:
        with open(path, "rb") as f:
            return b"matplotlib" in f.read(4096).lower()
    except OSError:
        return False


def save_or_keep(model, path, step, force=False):
    """Save the trained model to path (replacing a file that is not a checkpoint only if force) and return the
    path it went to; should that fail now (a full disk, a file put there during training, the folder removed),
    save it in a new temporary folder instead, say where in one line, and return that path. Signals wait for
    the file to be written (train.StopSignals)."""
    from .. import checkpoint
    from ..files import reason as why
    from ..train import StopSignals
    with StopSignals():
        try:
            checkpoint.save_checkpoint(model, path, step=step, force=force)
            return path
        except ValueError as error:
            reason = error
        except OSError as error:
            reason = why(error) if error.errno else error
        fallback = os.path.join(tempfile.mkdtemp(prefix="tinytransformer-"), os.path.basename(path) or "model.npz")
        try:
            checkpoint.save_checkpoint(model, fallback, step=step)
        except (OSError, ValueError) as error:
            raise BadInput(f"could not write {path} ({reason}) nor {fallback} ({error}); the model is lost") from None
    tell(f"train: could not write {path} ({reason}); the trained model is saved in {fallback}")
    return fallback


def write_summary(path, summary, force):
    """The --json summary, written atomically (files.write_output: checked again now); a NaN or infinity is
    written as null (JSON has neither)."""
    from ..files import OutputError, write_output
    summary = {key: None if isinstance(value, float) and not np.isfinite(value) else value
               for key, value in summary.items()}
    text = json.dumps(summary, indent=1, allow_nan=False)
    try:
        write_output("--json", path, lambda f: f.write(text.encode("utf-8")), is_ours=is_summary, force=force)
    except OutputError as error:
        raise BadInput(str(error)) from None


def plot_training(result, task, path, force=False):
    """A PNG: the loss curve, and the last layer's attention on one held-out example (mean over heads):
    cross-attention for the encoder-decoder, self-attention for GPT and BERT; the loss curve alone for a
    task without an example to plot (its plot_example gives None).

    Row t of the heatmap is the position whose query attends (for the encoder-decoder, the decoder
    position that predicts the t-th target token).
    """
    from ..tools import plot

    example = task.plot_example()
    figure, axes = plot.plt.subplots(1, 1 if example is None else 2, figsize=(6 if example is None else 12, 4.5),
                                     layout="constrained", squeeze=False)
    plot.loss_curve(result.losses, ax=axes[0, 0], steps=range(1, len(result.losses) + 1), log_scale=True,
                    title=f"{result.task}: training loss")
    if example is not None:
        inputs, key_labels, query_labels = example
        model = result.model.eval()
        model(*inputs)                                                  # fills each layer's .probs
        probs_by_layer = model.attention_probs()
        names = list(probs_by_layer)
        last = ([name for name in names if name.endswith("cross_attn")] or names)[-1]
        probs = probs_by_layer[last][0].mean(axis=0)                     # (h, T_q, T_k) -> (T_q, T_k)
        plot.attention_heatmap(probs, x_labels=key_labels, y_labels=query_labels,
                               ax=axes[0, 1], title=f"{last}, mean over heads")
    from ..files import OutputError, write_output
    try:
        write_output("--plot", path, lambda f: figure.savefig(f, format=os.path.splitext(path)[1][1:].lower(), dpi=100),
                     is_ours=is_plot, force=force)
    except OutputError as error:
        raise BadInput(str(error)) from None
    finally:
        plot.plt.close(figure)
