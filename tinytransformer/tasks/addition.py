"""Addition as next-token prediction: a decoder-only model reads "a+b=" and writes the sum.

Tokens: PAD, BOS, EOS = 0, 1, 2 (vocabulary.py), then the characters of ALPHABET:
the digits 0..9 are 3..12, "+" is 13 and "=" is 14.

One problem with digits=3, 123 + 45 = 168:

    text     123+045=8610</s>     both operands written with 3 digits, the sum with 4, reversed
    ids      the prompt "123+045=" and then the answer "8610" and EOS

Why this format. Fixed widths put every digit at the same position in every
problem, so a position means "the tens of b" once and for all. The sum is
written least significant digit first, the order of addition by hand: each
digit then depends on two operand digits and the carry out of the digit just
written, all in view. Written most significant digit first, the first digit
would depend on every carry still to come. (To read the answer, reverse it:
problem_text does.)

The test problems (held out) and the validation problems are drawn once from
every (a, b) pair, apart, and training draws only from the others: disjoint by
construction (Split below). Training stops on the validation exact match; the
test exact match is measured once, at the end.
"""
import dataclasses
from typing import NamedTuple

import numpy as np

from .. import nn
from ..decode import greedy
from ..vocabulary import EOS, N_SPECIAL, PAD
from .batches import LMBatch
from .options import option
from .task import GPT_STYLE, Task, check_option, exact_match, language_model_loss

ALPHABET = "0123456789+="
PLUS, EQUALS = N_SPECIAL + 10, N_SPECIAL + 11


VOCAB_SIZE = N_SPECIAL + len(ALPHABET)          # the model's vocabulary: the special tokens and ALPHABET


class Problems(NamedTuple):
    """Addition problems: the prompts 'a+b=' and their answers (the sum's digits reversed, then EOS)."""
    prompt: np.ndarray    # (B, 2 * digits + 2) "a+b="
    answer: np.ndarray    # (B, digits + 2) the sum's digits reversed, then EOS


def digits_of(numbers, width):
    """Each number's decimal digits, most significant first, zero-padded: (B,) -> (B, width)."""
    powers = 10 ** np.arange(width - 1, -1, -1)                           # (width,)
    return (np.asarray(numbers)[:, None] // powers) % 10                  # (B, width)


def encode(a, b, digits):
    """Problems a + b for arrays a, b (B,) of numbers below 10**digits."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1 or a.min(initial=0) < 0 or b.min(initial=0) < 0 \
            or max(a.max(initial=0), b.max(initial=0)) >= 10 ** digits:
        raise ValueError(f"addition.encode: need a and b of one shape (B,) with numbers in 0..{10 ** digits - 1}, "
                         f"got shapes {a.shape} and {b.shape}")
    B = len(a)
    prompt = np.concatenate([digits_of(a, digits) + N_SPECIAL, np.full((B, 1), PLUS),
                             digits_of(b, digits) + N_SPECIAL, np.full((B, 1), EQUALS)], axis=1)   # (B, 2 * digits + 2)
    reversed_sum = digits_of(a + b, digits + 1)[:, ::-1] + N_SPECIAL      # (B, digits + 1)
    answer = np.concatenate([reversed_sum, np.full((B, 1), EOS)], axis=1)                # (B, digits + 2)
    return Problems(prompt.astype(np.int64), answer.astype(np.int64))


def as_batch(problems):
    """The LMBatch that teaches problems: the model reads the prompt and the answer without its EOS,
    and is scored only where it predicts the answer (the operands are random: nothing to learn there)."""
    prompt, answer = problems
    P = prompt.shape[1]
    ids = np.concatenate([prompt, answer[:, :-1]], axis=1)               # (B, P + digits + 1)
    targets = np.full(ids.shape, PAD, dtype=np.int64)
    targets[:, P - 1:] = answer                                          # "=" predicts the first digit
    return LMBatch(ids, targets)


def problem_text(prompt, answer=None):
    """One problem as text, the sum read back in the usual order: "123+045=" and "8610</s>" -> "123+045=168"."""
    text = "".join(ALPHABET[i - N_SPECIAL] for i in prompt)
    if answer is None:
        return text
    digits = [ALPHABET[i - N_SPECIAL] if N_SPECIAL <= i < N_SPECIAL + 10 else "?"
              for i in np.asarray(answer) if i not in (EOS, PAD)]
    return text + "".join(reversed(digits))


class Split:
    """All (a, b) with a, b < 10**digits, numbered a * 10**digits + b; n_held_out of them, drawn once from
    seed, are held out for the test, n_validation others for validation, and training draws uniformly
    from the rest."""

    def __init__(self, digits, n_held_out=1000, seed=0, n_validation=0):
        self.digits, self.n_problems = digits, 10 ** (2 * digits)
        if not 1 <= digits <= 6 or not 1 <= n_held_out or not 0 <= n_validation \
                or n_held_out + n_validation >= self.n_problems:
            raise ValueError(f"addition.Split: need 1 <= digits <= 6, n_held_out >= 1, n_validation >= 0 and "
                             f"n_held_out + n_validation < {self.n_problems}, got {digits}, {n_held_out} and {n_validation}")
        rng = np.random.default_rng(seed)
        self.held_out_numbers = np.sort(rng.choice(self.n_problems, n_held_out, replace=False))   # (H,)
        others = np.setdiff1d(np.arange(self.n_problems), self.held_out_numbers)                  # (n_problems - H,)
        validation_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
        self.validation_numbers = np.sort(validation_rng.choice(others, n_validation, replace=False))   # (V,)
        kept_out = np.union1d(self.held_out_numbers, self.validation_numbers)                     # (H + V,) sorted
        # kept_out[j] - j problems that training draws come before kept_out[j]
        self.free_before = kept_out - np.arange(len(kept_out))                                     # (H + V,)

    def problems(self, numbers):
        a, b = np.divmod(numbers, 10 ** self.digits)
        return encode(a, b, self.digits)

    def training_numbers(self, batch_size, rng):
        """batch_size problem numbers drawn uniformly from those neither held out nor kept for validation."""
        k = rng.integers(0, self.n_problems - len(self.free_before), size=batch_size)   # (B,) the k-th free problem
        return k + np.searchsorted(self.free_before, k, side="right")          # skip those kept out before it

    def training_batch(self, batch_size, rng):
        return as_batch(self.problems(self.training_numbers(batch_size, rng)))

    def held_out_problems(self):
        return self.problems(self.held_out_numbers)

    def validation_problems(self):
        return self.problems(self.validation_numbers)


@dataclasses.dataclass
class AdditionTask(Task):
    """Split's problems for GPT; stopped on greedy decoding of the validation problems, tested on the test ones."""
    digits: int = option(2, "--digits", "digits of each number")
    n_held_out: int | None = None    # test problems: 1000, or a tenth of all problems if that is fewer
    n_validation: int | None = None  # validation problems, never trained on: as many as n_held_out's default
    split_seed: int = 0              # the test and validation problems are drawn once, from this seed

    name, model_class, model_style, examples = "addition", nn.GPT, GPT_STYLE, "problems"

    def __post_init__(self):
        check_option(self, "digits", 1, 6)
        if self.n_held_out is None:
            self.n_held_out = min(1000, 10 ** (2 * self.digits) // 10)
        if self.n_validation is None:
            self.n_validation = min(1000, 10 ** (2 * self.digits) // 10)
        self.split = Split(self.digits, self.n_held_out, self.split_seed, self.n_validation)
        self.held_out = self.split.held_out_problems()                  # the test split
        self.validation = self.split.validation_problems()

    def room(self):
        return dict(vocab_size=VOCAB_SIZE, max_len=3 * self.digits + 3)

    def describe(self):
        return (f"{self.digits}-digit numbers, {len(self.split.validation_numbers)} validation and "
                f"{len(self.split.held_out_numbers)} test problems never trained on")

    def batch(self, batch_size, rng):
        return self.split.training_batch(batch_size, rng)

    loss = staticmethod(language_model_loss)

    def solved(self, model, problems):
        """The exact match of greedy decoding on problems (a Problems)."""
        prompt, answer = problems
        return exact_match(greedy(model, prompt, max_len=answer.shape[1]), answer)

    def evaluate(self, model):
        return self.solved(model, self.validation)

    def test(self, model):
        return self.solved(model, self.held_out), len(self.held_out.prompt)

    def show(self, model, n=3):
        prompt, answer = (ids[:n] for ids in self.validation)
        predicted = greedy(model, prompt, max_len=answer.shape[1])
        lines = ["validation problems (the sum read back in the usual order):"]
        for p, a, guess in zip(prompt, answer, predicted):
            lines.append(f"  {problem_text(p, a):<{4 * self.digits + 4}} predicted {problem_text(p, guess)}")
        return lines

    def plot_example(self):
        ids = as_batch(Problems(*(ids[:1] for ids in self.validation))).ids   # (1, T)
        names = list(problem_text(ids[0]))
        return (ids,), names, names
