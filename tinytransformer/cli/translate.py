"""`python -m tinytransformer translate --load MODEL.npz "The old dog sees the small cat."`: English to German.

The model is one trained by `train --task translate --save MODEL.npz`; each sentence argument (or, with
none, each line of standard input) becomes one line of German. An argument or line of several sentences
("The dog sleeps. The cat eats.") is split after each . ! or ? and each sentence translated on its own.
Punctuation is split off the words before they are looked up ("dog," is "dog" and ","; a mark the model
does not read is left out, "doesn't" is "does not"), and a word outside the vocabulary is named with the
known words closest to it (by edit distance) as suggestions. A sentence that cannot be translated (a word
outside the vocabulary, too long; on standard input, a line that is not UTF-8) is answered on stderr,
named by its argument or line, and left out of its line of German (an empty line if nothing is left: the
lines stay aligned); the rest are translated (exit status 1). The sentences given as arguments, and the
checkpoint against the task, are checked before any translating, and if none can be translated that is
one line (exit status 2). Standard input is read and translated BATCH lines at a time, so its length costs
no memory.

Beside the model's German, in brackets, the grammar's (german/parse.py) own German where the two differ:
a class sees a mistake instead of trusting it; or "[not checked: outside the grammar the model was
taught]" where the grammar cannot say the English sentence: the model was never taught it, and nothing
checked what it wrote. `--no-check` leaves out the grammar's German (a class looking for the mistake
itself) but not the warning. `--words` lists the English words the model knows, by part of speech.
"""
import functools
import re
import sys

from .common import BadInput, say

BATCH = 1024              # lines translated together: the memory stays bounded (benchmarks/translate_stdin.py measures it)
SUGGESTIONS = 3           # at most this many known words offered for an unknown one
NAMED = 5                 # at most this many unknown words of a sentence named (with suggestions)
LONGEST_SHOWN = 40        # an unknown word is shown up to this many characters
# A punctuation mark: anything but a letter, a digit, a space, a hyphen (forty-two) or an apostrophe (doesn't).
PUNCTUATION = re.compile(r"([^\w\s'-])")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")      # "The dog sleeps. The cat eats." is two sentences
NEGATIONS = {"can't": "can not", "won't": "will not", "n't": " not"}     # doesn't -> does not; one rule, two exceptions


def add_parser(commands):
    """Add the translate command (English to German with a trained model) to the command line's commands."""
    parser = commands.add_parser("translate", help="translate English sentences to German with a model trained "
                                                   "by train --task translate --save MODEL.npz",
                                 description="Translate English sentences to German, one line each: the "
                                             "sentences given, or each line of standard input (a sentence that "
                                             "cannot be translated: a message on stderr, left out of its line, "
                                             "exit status 1). Beside the German, the grammar's own where the "
                                             "two differ, or a warning where the grammar the model was taught "
                                             "cannot say the English: that German was not checked.")
    parser.add_argument("sentences", nargs="*", metavar="SENTENCE", help="English sentences (default: stdin)")
    parser.add_argument("--load", metavar="MODEL.npz",
                        help="a checkpoint saved by train --task translate --save")
    parser.add_argument("--beam", type=int, metavar="K", help="beam search of width K (default: greedy)")
    parser.add_argument("--words", action="store_true", help="list the English words the model knows, by part of "
                                                             "speech (needs no --load), and stop")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="leave out the grammar's German beside the model's where the two differ (the "
                             "warning beside German the grammar cannot check stays)")
    parser.set_defaults(run=translate_command)


def translate_command(args):
    """Print the German of each sentence (given, or each line of standard input) by the --load model; return 0
    (1 if a sentence could not be translated)."""
    if args.words:
        given = [name for name, value in (("SENTENCE arguments", args.sentences), ("--load", args.load),
                                          ("--beam", args.beam is not None), ("--no-check", not args.check)) if value]
        if given:
            raise BadInput(f"--words lists the words the model knows and stops: it takes no sentence, --load, "
                           f"--beam or --no-check, got {', '.join(given)}")
        from ..tasks.german import english_parts_of_speech
        from ..tasks.german.parse import ONLY_IN
        for part, words in english_parts_of_speech().items():
            words = [word for word in words if word not in ONLY_IN]
            say(f"{part} ({len(words)}): {' '.join(words)}")
        uses = ", ".join(f"{word} ({use})" for word, (use, _) in ONLY_IN.items())
        say(f"only in some phrases ({len(ONLY_IN)}): {uses}")
        return 0
    if args.load is None:
        raise BadInput("--load MODEL.npz is required (a checkpoint saved by train --task translate --save)")
    if args.beam is not None and args.beam < 1:
        raise BadInput(f"--beam must be a width >= 1 (1 is greedy), got {args.beam}")
    if not args.sentences:
        return translate_stdin(translate_model(args), args.beam, args.check)
    lines = [(number, text, None) for number, text in enumerate(args.sentences, 1)]
    refuse_if_none_translates(lines, None)                 # before any work
    model = translate_model(args)
    refuse_if_none_translates(lines, model.config.max_len)
    failed = 0
    for start in range(0, len(lines), BATCH):
        failed += translate_batch(model, lines[start:start + BATCH], args.beam, args.check, argument_place)
    return 1 if failed else 0


def refuse_if_none_translates(lines, max_len):
    """BadInput (one line: the first sentence's problem, and how many more) if no sentence of lines can be
    translated."""
    readings = {line[0]: line_readings(line, max_len) for line in lines}        # argument number -> readings
    problems = [message for number, reading in readings.items()
                for message in problems_of(number, reading, argument_place)]
    if len(problems) == sum(map(len, readings.values())):
        more = f" (and {len(problems) - 1} more cannot be translated)" if len(problems) > 1 else ""
        raise BadInput(problems[0] + more)


def argument_place(number, k, count):
    """How a message names sentence k (from 1) of count in argument number: 'sentence 2', or 'argument 2,
    sentence 1' if the argument holds several."""
    return f"sentence {number}" if count == 1 else f"argument {number}, sentence {k}"


def stdin_place(number, k, count):
    """How a message names sentence k (from 1) of count in line number of standard input."""
    return f"line {number} of standard input" + (f", sentence {k}" if count > 1 else "")


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
    expected = (f"is not a model of the translate task's generated pairs (a Transformer with vocab_size "
                f"{ROOM['vocab_size']}, max_len >= {ROOM['max_len']}); train one with train --task translate "
                "--save PATH")
    if type(model) is not Transformer:                       # a digits model has no vocabulary
        raise BadInput(f"--load {args.load}: a {type(model).__name__} {expected}")
    if c.vocab_size != ROOM["vocab_size"] or c.max_len < ROOM["max_len"]:
        raise BadInput(f"--load {args.load}: a Transformer with vocab_size {c.vocab_size} and max_len {c.max_len} "
                       f"{expected}")
    if args.beam is not None:       # each beam of each sentence: its keys and values, layer by layer, and its logits
        try:
            check_fits(8 * args.beam * BATCH * c.max_len * (4 * c.n_layers * c.d_model + c.vocab_size),
                       f"--beam {args.beam} (of {BATCH} sentences at a time)", "translate")
        except ValueError as error:
            raise BadInput(str(error).removeprefix("translate: ")) from None
    return model


def sentences_of(text):
    """The sentences of a line: split after each . ! or ? that a space follows; a piece with no letter or
    digit (" , . !") is no sentence, but a line of none is one (empty) sentence."""
    pieces = [piece for piece in SENTENCE_END.split(text.strip()) if re.search(r"\w", piece)]
    return pieces or [text]


def line_readings(line, max_len):
    """[(the words the model reads, None) or (None, why not)] for each sentence of line (number, text, problem)."""
    number, text, problem = line
    return [(None, problem)] if problem else [model_words(sentence, max_len) for sentence in sentences_of(text)]


def problems_of(number, readings, place):
    """The messages for the sentences of line number that cannot be translated, naming each by place(number,
    k, count)."""
    return [f"{place(number, k, len(readings))}: {problem}" for k, (_, problem) in enumerate(readings, 1) if problem]


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
        named = [f"{shown(word)} ({suggestions(word) or 'no known word is close'})"
                 for word in unknown[:NAMED]]
        more = f" and {len(unknown) - NAMED} more words" if len(unknown) > NAMED else ""
        return None, (f"{', '.join(named)}{more} {'is' if len(unknown) == 1 else 'are'} not in the vocabulary "
                      f"of {len(VOCABULARY.english)} English words (translate --words lists them)")
    if max_len is not None and len(words) > max_len:
        return None, f"a sentence of {len(words)} words is longer than the model reads (max_len {max_len})"
    return " ".join(words), None


def shown(word):
    """A word as a message names it: quoted, and cut after LONGEST_SHOWN characters."""
    if len(word) <= LONGEST_SHOWN:
        return repr(word)
    return f"{word[:LONGEST_SHOWN]!r}... ({len(word):,} characters)"


@functools.lru_cache(maxsize=4096)           # the lines of standard input may repeat an unknown word
def suggestions(word):
    """closest_words of word among the English words of the vocabulary."""
    from ..tasks.translation import VOCABULARY
    return closest_words(word, VOCABULARY.english)


def closest_words(word, known):
    """'closest: dog, do': up to SUGGESTIONS words of known, nearest first (of equals, the nearest in length), at
    an edit distance of at most a third of word's length (at least 1); '' if none is that close. A known word
    is compared only if its length and its letters could be that close, so a search costs little more than
    one look at each known word, however long the word is."""
    limit, letters = max(1, len(word) // 3), frozenset(word)
    near = sorted((distance, abs(len(candidate) - len(word)), candidate) for candidate in known
                  if abs(len(candidate) - len(word)) <= limit and letters_apart(letters, candidate) <= limit
                  and (distance := edit_distance(word, candidate)) <= limit)
    return "closest: " + ", ".join(candidate for *_, candidate in near[:SUGGESTIONS]) if near else ""


def letters_apart(letters, word):
    """A lower bound of the edit distance of a word of letters (a set) to word: an edit brings in or takes out
    at most one letter of each, so it is at least the letters one of them has and the other lacks."""
    other = letters_of(word)
    return max(len(letters - other), len(other - letters))


@functools.lru_cache(maxsize=8192)
def letters_of(word):
    """The set of letters in word (a cheap bound before the edit distance)."""
    return frozenset(word)


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


def translate_stdin(model, beam, check):
    """Translate standard input BATCH lines at a time, each answer printed in the line's place. -> exit
    status: 1 if a sentence could not be translated."""
    failed, seen, batch = 0, 0, []
    for line in stdin_lines():
        seen += 1
        batch.append(line)
        if len(batch) == BATCH:
            failed += translate_batch(model, batch, beam, check, stdin_place)
            batch = []
    if not seen:
        raise BadInput("no sentence: give English sentences as arguments or one per line on standard input")
    failed += translate_batch(model, batch, beam, check, stdin_place)
    return 1 if failed else 0


def translate_batch(model, lines, beam, check, place):
    """Translate lines [(number, text, problem)] and print each line's German in its place (its sentences
    joined; a warning beside a sentence the grammar cannot check, and with check the grammar's German where
    it differs); a sentence that cannot be translated is said on stderr, named by place. -> how many failed."""
    from ..tasks.translation import translate_checked
    readings = {line[0]: line_readings(line, model.config.max_len) for line in lines}    # line number -> readings
    good = [words for reading in readings.values() for words, _ in reading if words]
    checked = iter(translate_checked(model, good, beam) if good else [])
    failed = 0
    for number, reading in readings.items():
        for message in problems_of(number, reading, place):
            print(f"python -m tinytransformer translate: {message}", file=sys.stderr)
            failed += 1
        say("  ".join(next(checked).line(check) for words, _ in reading if words))
    return failed
