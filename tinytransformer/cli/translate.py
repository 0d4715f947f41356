"""`python -m tinytransformer translate --load MODEL.npz "The old dog sees the small cat."`: English to German.

The model is one trained by `train --task translate --save MODEL.npz`; each sentence argument (or, with
none, each line of standard input) becomes one line of German. Sentences given as arguments are checked
against the vocabulary, and the checkpoint against the task, before any translating. Standard input is
read and translated BATCH lines at a time, so its length costs no memory; a line that cannot be
translated (not UTF-8, a word outside the vocabulary, too long) is answered on stderr and by an empty
line on stdout (the lines stay aligned), and the rest are translated (exit status 1).

`--words` lists the English words the model knows, by part of speech. `--check` writes the grammar's own
German beside the model's, in brackets, where the grammar can say the sentence (german/parse.py) and the
two differ: a class sees a mistake instead of trusting it.
"""
import sys

from .common import BadInput, say

BATCH = 1024              # lines translated together: 20,000 lines took 7.5 s at 1024, 9.0 s at 256, 26 s at 64


def add_parser(commands):
    """Add the translate command (English to German with a trained model) to the command line's commands."""
    parser = commands.add_parser("translate", help="translate English sentences to German with a model trained "
                                                   "by train --task translate --save MODEL.npz",
                                 description="Translate English sentences to German, one line each: the "
                                             "sentences given, or each line of standard input (a line that "
                                             "cannot be translated: a message on stderr, an empty line on "
                                             "stdout, exit status 1).")
    parser.add_argument("sentences", nargs="*", metavar="SENTENCE", help="English sentences (default: stdin)")
    parser.add_argument("--load", metavar="MODEL.npz",
                        help="a checkpoint saved by train --task translate --save")
    parser.add_argument("--beam", type=int, metavar="K", help="beam search of width K (default: greedy)")
    parser.add_argument("--words", action="store_true", help="list the English words the model knows, by part of "
                                                             "speech (needs no --load), and stop")
    parser.add_argument("--check", action="store_true", help="beside the model's German, the grammar's own where "
                                                             "the grammar can say the sentence and the two differ")
    parser.set_defaults(run=translate_command)


def translate_command(args):
    """Print the German of each sentence (given, or each line of standard input) by the --load model; return 0
    (1 if a line of standard input could not be translated)."""
    if args.words:
        from ..tasks.german import english_parts_of_speech
        for part, words in english_parts_of_speech().items():
            say(f"{part} ({len(words)}): {' '.join(words)}")
        return 0
    if args.load is None:
        raise BadInput("--load MODEL.npz is required (a checkpoint saved by train --task translate --save)")
    if args.beam is not None and args.beam < 1:
        raise BadInput(f"--beam must be a width >= 1 (1 is greedy), got {args.beam}")
    for number, sentence in enumerate(args.sentences, 1):
        problem = sentence_problem(sentence, None)
        if problem:
            raise BadInput(f"sentence {number}: {problem}")
    model = translate_model(args)
    if args.sentences:
        longest = max(len(encoded(sentence)) for sentence in args.sentences)
        if longest > model.config.max_len:
            raise BadInput(f"a sentence of {longest} words is longer than the model reads (max_len "
                           f"{model.config.max_len})")
        for start in range(0, len(args.sentences), BATCH):
            for german in translated(model, args.sentences[start:start + BATCH], args.beam, args.check):
                say(german)
        return 0
    return translate_stdin(model, args.beam, args.check)


def translate_model(args):
    """The --load checkpoint, checked to be a model of the translate task, and --beam against memory."""
    from ..checkpoint import load_checkpoint
    from ..memory import check_fits
    from ..nn import Transformer
    from ..tasks.translation import ROOM

    try:
        model = load_checkpoint(args.load)
    except (ValueError, OSError) as error:
        raise BadInput(f"--load {args.load}: {error}") from None
    c = model.config
    if type(model) is not Transformer or c.vocab_size != ROOM["vocab_size"] or c.max_len < ROOM["max_len"]:
        raise BadInput(f"--load {args.load}: a {type(model).__name__} with vocab_size {c.vocab_size} "
                       f"and max_len {c.max_len} is not a model of the translate task's generated "
                       f"pairs (a Transformer with vocab_size {ROOM['vocab_size']}, max_len >= {ROOM['max_len']}); "
                       "train one with train --task translate --save PATH")
    if args.beam is not None:       # each beam of each sentence: its keys and values, layer by layer, and its logits
        try:
            check_fits(8 * args.beam * BATCH * c.max_len * (4 * c.n_layers * c.d_model + c.vocab_size),
                       f"--beam {args.beam} (of {BATCH} sentences at a time)", "translate")
        except ValueError as error:
            raise BadInput(str(error).removeprefix("translate: ")) from None
    return model


def encoded(sentence):
    """The English sentence's token ids (ValueError if a word is not in the vocabulary)."""
    from ..tasks.translation import VOCABULARY
    return VOCABULARY.encode_english(sentence)


def sentence_problem(sentence, max_len):
    """Why sentence cannot be translated (a word outside the vocabulary, longer than max_len), or None."""
    try:
        length = len(encoded(sentence))
    except ValueError as error:
        return str(error).removeprefix("translate: ")
    if max_len is not None and length > max_len:
        return f"a sentence of {length} words is longer than the model reads (max_len {max_len})"
    return None


def translated(model, sentences, beam, check=False):
    """The German of each sentence (greedy, or beam search of width beam); with check, the grammar's own
    German beside it in brackets where the grammar can say the sentence and the two differ."""
    from ..tasks.translation import grammar_translation, translate
    germans = translate(model, sentences, beam)
    if check:
        grammars = [grammar_translation(sentence) for sentence in sentences]
        germans = [german if grammar in (None, german) else f"{german}    [the grammar: {grammar}]"
                   for german, grammar in zip(germans, grammars)]
    return germans


def stdin_lines():
    """(line number, the line's text or None, why it cannot be read or None) for each line of standard input,
    read as bytes and decoded one line at a time: a line that is not UTF-8 spoils only itself."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    for number, line in enumerate(stream, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as error:
                yield number, None, f"not UTF-8 text (byte 0x{line[error.start]:02x} at position {error.start})"
                continue
        yield number, line.rstrip("\r\n"), None


def translate_stdin(model, beam, check=False):
    """Translate standard input BATCH lines at a time, each answer printed in the line's place; a line that
    cannot be translated is said on stderr and left empty on stdout. -> exit status: 1 if any was."""
    failed, seen, batch = 0, 0, []
    for line in stdin_lines():
        seen += 1
        batch.append(line)
        if len(batch) == BATCH:
            failed += translate_batch(model, batch, beam, check)
            batch = []
    if not seen:
        raise BadInput("no sentence: give English sentences as arguments or one per line on standard input")
    failed += translate_batch(model, batch, beam, check)
    return 1 if failed else 0


def translate_batch(model, lines, beam, check=False):
    """Translate lines [(number, text, problem)] and print each answer in its place -> how many failed."""
    problems = {number: problem or sentence_problem(text, model.config.max_len) for number, text, problem in lines}
    good = [text for number, text, _ in lines if not problems[number]]
    germans = iter(translated(model, good, beam, check) if good else [])
    for number, _, _ in lines:
        if problems[number]:
            print(f"python -m tinytransformer translate: line {number} of standard input: {problems[number]}",
                  file=sys.stderr)
        say("" if problems[number] else next(germans))
    return sum(1 for problem in problems.values() if problem)
