"""`python -m tinytransformer translate --load MODEL.npz "The old dog sees the small cat."`: English to German.

The model is one trained by `train --task translate --save MODEL.npz`; each sentence argument (or, with
none, each line of standard input) becomes one line of German. Every sentence is checked against the
vocabulary, and the checkpoint against the task, before any translating.
"""
import sys

from .common import BadInput


def add_parser(commands):
    """Add the translate command (English to German with a trained model) to the command line's commands."""
    parser = commands.add_parser("translate", help="translate English sentences to German with a model trained "
                                                   "by train --task translate --save MODEL.npz",
                                 description="Translate English sentences to German, one line each: the "
                                             "sentences given, or each line of standard input.")
    parser.add_argument("sentences", nargs="*", metavar="SENTENCE", help="English sentences (default: stdin)")
    parser.add_argument("--load", required=True, metavar="MODEL.npz",
                        help="a checkpoint saved by train --task translate --save")
    parser.add_argument("--beam", type=int, metavar="K", help="beam search of width K (default: greedy)")
    parser.set_defaults(run=translate_command)


def translate_command(args):
    """Print the German of each sentence (given, or each line of standard input) by the --load model; return 0."""
    from ..checkpoint import load_checkpoint
    from ..nn import Transformer
    from ..tasks.translation import ROOM, VOCABULARY, translate

    if args.beam is not None and args.beam < 1:
        raise BadInput(f"--beam must be a width >= 1 (1 is greedy), got {args.beam}")
    sentences = args.sentences or sys.stdin.read().splitlines()
    if not sentences:
        raise BadInput("no sentence: give English sentences as arguments or one per line on standard input")
    for number, sentence in enumerate(sentences, 1):
        try:
            VOCABULARY.encode_english(sentence)
        except ValueError as error:
            where = f"sentence {number}" if args.sentences else f"line {number} of standard input"
            raise BadInput(f"{where}: {str(error).removeprefix('translate: ')}") from None
    try:
        model = load_checkpoint(args.load)
    except (ValueError, OSError) as error:
        raise BadInput(f"--load {args.load}: {error}") from None
    if type(model) is not Transformer or model.config.vocab_size != ROOM["vocab_size"] \
            or model.config.max_len < ROOM["max_len"]:
        raise BadInput(f"--load {args.load}: a {type(model).__name__} with vocab_size {model.config.vocab_size} "
                       f"and max_len {model.config.max_len} is not a model of the translate task's generated "
                       f"pairs (a Transformer with vocab_size {ROOM['vocab_size']}, max_len >= {ROOM['max_len']}); "
                       "train one with train --task translate --save PATH")
    longest = max(len(VOCABULARY.encode_english(sentence)) for sentence in sentences)
    if longest > model.config.max_len:
        raise BadInput(f"a sentence of {longest} words is longer than the model reads (max_len "
                       f"{model.config.max_len})")
    for german in translate(model, sentences, args.beam):
        print(german)
    return 0
