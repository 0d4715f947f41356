"""The token ids every model and task shares.

    PAD, BOS, EOS = 0, 1, 2     every vocabulary starts with these: padding, begin, end
    CLS, MASK = 3, 4            BERT's vocabulary adds these two; its symbols start at 5

A task's own symbols come after its special tokens (N_SPECIAL = 3, or
BERT_N_SPECIAL = 5), so no number above ever changes.
"""
PAD, BOS, EOS = 0, 1, 2
N_SPECIAL = 3
CLS, MASK = 3, 4                 # BERT's vocabulary only: [CLS] is the summary position, [MASK] hides a token
BERT_N_SPECIAL = 5
