"""BERT's corpus by its first import path, `tt.mlm`: the code lives in tasks/masked_lm.py, and the
weight transfer into a classifier beside BERT (nn/bert.py)."""
from .nn.bert import classifier_from, transfer_weights
from .tasks.masked_lm import make_sequences, pretraining_batch, vocab_size
from .vocabulary import BERT_N_SPECIAL as MLM_N_SPECIAL
from .vocabulary import LabelledBatch

__all__ = ["LabelledBatch", "MLM_N_SPECIAL", "classifier_from", "make_sequences", "pretraining_batch",
           "transfer_weights", "vocab_size"]
