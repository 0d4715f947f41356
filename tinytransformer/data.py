"""The tasks' data by their first import path: `tt.data.make_batch`, `tt.data.mask_tokens`, ...

The code lives with its task in tasks/ (sequences.py, masked_lm.py), the token
ids and batch types in vocabulary.py, the worked example in worked_example.py;
this module keeps the names scripts and notebooks import from here.
"""
from .tasks.masked_lm import mask_tokens
from .tasks.sequences import TASKS, make_batch, token_names, vocab_size
from .vocabulary import BERT_N_SPECIAL as MLM_N_SPECIAL
from .vocabulary import BOS, CLS, EOS, MASK, N_SPECIAL, PAD, Batch, LMBatch
from .worked_example import W_K as WORKED_W_K, W_Q as WORKED_W_Q, W_V as WORKED_W_V, X as WORKED_X

__all__ = ["PAD", "BOS", "EOS", "N_SPECIAL", "CLS", "MASK", "MLM_N_SPECIAL", "Batch", "LMBatch", "TASKS",
           "make_batch", "mask_tokens", "token_names", "vocab_size",
           "WORKED_X", "WORKED_W_K", "WORKED_W_Q", "WORKED_W_V"]
