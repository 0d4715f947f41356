"""Mixed strings for comparing tokenizers: words of a vocabulary between runs of letters, digits, punctuation,
every kind of space, accents and combining marks, other scripts, ideographs, emoji, control characters."""
import numpy as np

POOLS = ["abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789",
         "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "  \t\n\r\u00a0\u2003\u3000\x0b\x0c\x85", "éèêëàâäôöüçñÉÀÇÑßøåæœ",
         "αβγδΣΩςπ", "абвгдЖЯ", "東京日本語中文한국어かなカナ", "🦜😀👍🏽❤️\u200d", "\u0301\u0308\u0327",
         "\x00\x01\x1f\x7f\u200b\ufeff\ufffd", "–—“”‘’«»…¿¡§°€£¥©®™±×÷",
         "İıŁłĲﬁⅫ²½①", "'s 't 're 've 'm 'll 'd 'S", "def f(x):\n    return x ** 2  # square\n"]


def mixed_strings(n, words, seed=0):
    """n strings of 1 to 11 parts, each a word of words (often with a space after) or a run of 1 to 5
    characters of one pool."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.integers(1, 12)):
            if rng.random() < 0.4:
                parts.append(words[rng.integers(len(words))] + (" " if rng.random() < 0.7 else ""))
            else:
                pool = POOLS[rng.integers(len(POOLS))]
                parts.append("".join(pool[rng.integers(len(pool))] for _ in range(rng.integers(1, 6))))
        out.append("".join(parts))
    return out
