"""Pre-splitting: cut text into chunks before BPE, so that no merge crosses a chunk's edge.

Why (GPT-2, Radford et al. 2019, section 2.2): run on raw text, BPE learns
"dog", "dog.", "dog!", "dog?" and "dog," as separate tokens, because each
occurs often enough to be worth a merge; vocabulary slots go to copies of one
word glued to the punctuation after it. GPT-2 therefore never merges across
character classes (letters, digits, anything else), with one exception: a
single space may lead a word, so " dog" is one token and a sentence costs
about one token per common word. A merge can then join bytes only inside a
chunk such as " dog", "." or "123".

SPLIT_PATTERN is written here with the standard library's `re`, which has no
Unicode category classes such as GPT-2's \\p{L}; it builds them from `\\w`
(letters, digits and the underscore, in every script) and `\\d` (decimal
digits). Two differences from GPT-2: the contractions match in any case ("'S"
as well as "'s"; GPT-2 matched lower case only), and a numeral that is not a
decimal digit, such as "²", counts as a letter (GPT-2: as a number).
"""
import re

SPLIT_PATTERN = r"""
    '(?i:[sdmt]|ll|ve|re)     # a contraction: 's 't 'd 'm 'll 've 're ("it's" -> "it", "'s")
  | \ ?[^\W\d_]+              # an optional space, then letters: " dog", "Hello", " naïve"
  | \ ?\d+                    # an optional space, then digits: " 2026"
  | \ ?(?:[^\s\w]|_)+         # an optional space, then anything else: " (", "!?", "__"
  | \s+(?!\S)                 # spaces that no word follows, or all but the last before a word
  | \s+                       # any other run of whitespace ("\n" before a word)
"""

KNOWN_PATTERNS = (SPLIT_PATTERN, None)     # what a tokenizer file may hold without trust_pattern=True

# Where encode_iterable may cut a long text: before a line end that a non-space character follows.
LINE_CUT = re.compile(r"\n(?=\S)")


def compile_pattern(pattern, who):
    """The compiled pre-split pattern (verbose syntax), or None for no pre-splitting."""
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise TypeError(f"{who}: pattern must be a str (a regular expression) or None, got {type(pattern).__name__}")
    try:
        return re.compile(pattern, re.VERBOSE)
    except re.error as error:
        raise ValueError(f"{who}: pattern is not a valid regular expression: {error}") from None


def split_text(text, pattern):
    """The chunks of text, in order; "".join(chunks) == text for any pattern.

    Text the pattern does not match (between two matches) becomes a chunk of its
    own, so nothing is lost even with a pattern that misses characters.
    pattern None: the whole text is one chunk (no pre-splitting).
    """
    if pattern is None:
        return [text] if text else []
    chunks, end = [], 0
    for match in pattern.finditer(text):
        if match.start() > end:
            chunks.append(text[end:match.start()])          # what the pattern skipped
        if match.end() > match.start():
            chunks.append(match.group())
        end = max(end, match.end())
    if end < len(text):
        chunks.append(text[end:])
    return chunks


def special_pattern(names):
    """A compiled pattern that finds the special tokens names in a text (None for no names): at each place
    the longest name that starts there, so of "<a>" and "<a><b>", the text "<a><b>" holds the second.
    Its split gives [ordinary, special, ordinary, ...]: the special tokens at the odd places."""
    if not names:
        return None
    longest_first = sorted(names, key=lambda name: (-len(name), name))
    return re.compile("(" + "|".join(re.escape(name) for name in longest_first) + ")")


def split_special(text, specials):
    """text as [ordinary, special, ordinary, ...], cut at each special token the compiled specials finds."""
    return [text] if specials is None else specials.split(text)


def last_line_cut(text, start, specials=None):
    r"""The last place q >= start where text can be cut into text[:q] and text[q:] that pre-split as the
    whole does (0 if there is none): just before a line end that a non-space character follows, and that
    character does not begin a special token (specials: the compiled special_pattern, or None).

    Why the two halves split alike there, with SPLIT_PATTERN: let W be the run of whitespace that ends
    with that line end. Only the two whitespace alternatives can match a line end (a leading space is
    " ", never "\n"), so every match before W ends where W starts, having looked no further than W's first
    character. In the whole text W is followed by a non-space, so `\s+(?!\S)` takes W less its last
    character, then `\s+` takes the line end alone; cut before that line end, the first half ends with
    W less its last character, which `\s+(?!\S)` takes whole at the end of the text, and the second half
    starts with the line end, taken alone as before. Cut anywhere else and they can differ: "a\n\nB"
    splits "a", "\n", "\n", "B", but "a\n\n" alone splits "a", "\n\n". A special token must not hold a
    line end (it could be cut in two), and must not start right after one: "\n\n<|endoftext|>" ends
    its ordinary text with "\n\n", one chunk.
    """
    cut = 0
    for match in LINE_CUT.finditer(text, max(start, 0)):
        if specials is None or not specials.match(text, match.end()):
            cut = match.start()
    return cut
