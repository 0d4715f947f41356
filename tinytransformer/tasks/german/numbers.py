"""Numbers 2..99 in both languages: one German word, the units before the tens (zweiundvierzig), written as
pieces that end in "+" and are glued to the next (zwei+ und+ vierzig)."""

ENGLISH_UNITS = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
ENGLISH_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
GERMAN_UNITS = ["", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf",
                "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn"]
GERMAN_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]
NUMBERS = range(2, 100)      # one is the article (ein Hund), so the numbers start at two
def english_number(n):
    """2..99 in English words: 42 -> "forty-two" (tens first, joined by a hyphen)."""
    check_number(n)
    if n < 20:
        return ENGLISH_UNITS[n]
    tens, units = divmod(n, 10)
    return ENGLISH_TENS[tens] + (f"-{ENGLISH_UNITS[units]}" if units else "")


def german_number(n):
    """2..99 as German pieces: 42 -> ["zwei+", "und+", "vierzig"], the units first, then "und",
    then the tens, all one word; a one before "und" is "ein" (einundzwanzig)."""
    check_number(n)
    if n < 20:
        return [GERMAN_UNITS[n]]
    tens, units = divmod(n, 10)
    if units == 0:
        return [GERMAN_TENS[tens]]
    return ["ein+" if units == 1 else GERMAN_UNITS[units] + "+", "und+", GERMAN_TENS[tens]]


def check_number(n):
    """Raise ValueError unless n is a number the grammar has words for (NUMBERS)."""
    if n not in NUMBERS:
        raise ValueError(f"german: numbers run from {NUMBERS.start} to {NUMBERS.stop - 1}, got {n!r}")


