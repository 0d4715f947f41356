"""`python -m tinytransformer translate --load MODEL.npz "The old dog sees the small cat."`: English to German.

The model is one trained by `train --task translate --save MODEL.npz`; each sentence argument (or, with
none, each line of standard input) becomes one line of German. Punctuation is split off the words before
they are looked up ("dog," is "dog" and ","; a mark the model does not read is left out, "doesn't" is
"does not"), and a word outside the vocabulary is named with the known words closest to it (by edit
distance) as suggestions. Sentences given as arguments are checked against the vocabulary, and the
checkpoint against the task, before any translating. Standard input is read and translated BATCH lines
at a time, so its length costs no memory; a line that cannot be translated (not UTF-8, a word outside
the vocabulary, too long) is answered on stderr with its line number and by an empty line on stdout
(the lines stay aligned), and the rest are translated (exit status 1).

`--words` lists the English words the model knows, by part of speech. `--check` writes the grammar's own
German beside the model's, in brackets, where the grammar can say the sentence (german/parse.py) and the
two differ: a class sees a mistake instead of trusting it.
"""
import re
import sys

from .common import BadInput, say

BATCH = 1024              # lines translated together: the memory stays bounded (benchmarks/translate_stdin.py measures it)
SUGGESTIONS = 3           # at most this many known words offered for an unknown one
# A punctuation mark: anything but a letter, a digit, a space, a hyphen (forty-two) or an apostrophe (doesn't).
PUNCTUATION = re.compile(r"([^\w\s'-])")
NEGATIONS = {"can't": "can not", "won't": "will not", "n't": " not"}     # doesn't -> does not; one rule, two exceptions


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
    sentences = []
    for number, sentence in enumerate(args.sentences, 1):
        readable, problem = model_words(sentence, None)
        if problem:
            raise BadInput(f"sentence {number}: {problem}")
        sentences.append(readable)
    model = translate_model(args)
    if sentences:
        longest = max(len(sentence.split()) for sentence in sentences)
        if longest > model.config.max_len:
            raise BadInput(f"a sentence of {longest} words is longer than the model reads (max_len "
                           f"{model.config.max_len})")
        for start in range(0, len(sentences), BATCH):
            for german in translated(model, sentences[start:start + BATCH], args.beam, args.check):
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


def model_words(sentence, max_len):
    """(the sentence as the words the model reads, joined by spaces, None), or (None, why it cannot be
    translated: empty, a word outside the vocabulary with the closest known words, longer than max_len).
    "The dog, it's big." -> "the dog it's big": punctuation split off, the marks the vocabulary lacks left out."""
    from ..tasks.translation import VOCABULARY, english_tokens

    spaced = PUNCTUATION.sub(r" \1 ", sentence.lower().replace("\u2019", "'"))       # a typographic apostrophe too
    for short, long in NEGATIONS.items():
        spaced = spaced.replace(short, long)
    words = [word for word in english_tokens(spaced) if not PUNCTUATION.fullmatch(word) or word in VOCABULARY.english]
    if not words:
        return None, "the sentence is empty; give an English sentence such as 'The old dog sees the small cat.'"
    unknown = [word for word in dict.fromkeys(words) if word not in VOCABULARY.english]
    if unknown:
        named = [f"{word!r} ({closest_words(word, VOCABULARY.english) or 'no known word is close'})"
                 for word in unknown]
        return None, (f"{', '.join(named)} {'is' if len(unknown) == 1 else 'are'} not in the vocabulary "
                      f"of {len(VOCABULARY.english)} English words (translate --words lists them)")
    if max_len is not None and len(words) > max_len:
        return None, f"a sentence of {len(words)} words is longer than the model reads (max_len {max_len})"
    return " ".join(words), None


def closest_words(word, known):
    """'closest: dog, do': up to SUGGESTIONS words of known, nearest first (of equals, the nearest in length), at
    an edit distance of at most a third of word's length (at least 1); '' if none is that close."""
    limit = max(1, len(word) // 3)
    near = sorted((distance, abs(len(candidate) - len(word)), candidate) for candidate in known
                  if (distance := edit_distance(word, candidate)) <= limit)
    return "closest: " + ", ".join(candidate for *_, candidate in near[:SUGGESTIONS]) if near else ""


def edit_distance(a, b):
    """How many single letters to insert, delete, change, or swap with their neighbour to turn a into b
    (the optimal string alignment distance): edit_distance("dgo", "dog") = 1."""
    before, row = None, list(range(len(b) + 1))             # row[j]: distance of a[:i] to b[:j]
    for i in range(1, len(a) + 1):
        previous, before, row = before, row, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(before[j] + 1, row[j - 1] + 1, before[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], previous[j - 2] + 1)           # two neighbours swapped
    return row[len(b)]


def translated(model, sentences, beam, check=False):
    """The German of each sentence (as model_words gives it; greedy, or beam search of width beam); with check,
    the grammar's own German beside it in brackets where the grammar can say the sentence and the two differ."""
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
    readable, problems = {}, {}
    for number, text, problem in lines:
        readable[number], problems[number] = (None, problem) if problem else model_words(text, model.config.max_len)
    good = [readable[number] for number, _, _ in lines if not problems[number]]
    germans = iter(translated(model, good, beam, check) if good else [])
    for number, _, _ in lines:
        if problems[number]:
            print(f"python -m tinytransformer translate: line {number} of standard input: {problems[number]}",
                  file=sys.stderr)
        say("" if problems[number] else next(germans))
    return sum(1 for problem in problems.values() if problem)
