"""GPT's addition task by its first import path, `tt.addition`: the code lives in tasks/addition.py."""
from .tasks.addition import (ALPHABET, EQUALS, PLUS, AdditionTask, Problems, Split, as_batch, digits_of, encode,
                             problem_text, vocab_size)

__all__ = ["ALPHABET", "EQUALS", "PLUS", "AdditionTask", "Problems", "Split", "as_batch", "digits_of", "encode",
           "problem_text", "vocab_size"]
