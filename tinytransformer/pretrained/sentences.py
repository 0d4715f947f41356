"""Sentence embeddings from a BERT, as sentence-transformers makes them: the last layer's vectors averaged
over each sentence's tokens ([CLS] and [SEP] included, PAD left out), then scaled to length 1, so that the
dot product of two embeddings is their cosine similarity."""
import numpy as np

from ..nn import inference


def embed(model, tokenizer, sentences):
    """sentences (a list of str) -> (N, d_model) float64 rows of length 1. Each sentence is cut to
    tokenizer.max_tokens tokens ([CLS] and [SEP] included), as sentence-transformers cuts it."""
    if isinstance(sentences, str) or not all(isinstance(s, str) for s in sentences):
        raise TypeError("embed: expected a list of str")
    limit = getattr(tokenizer, "max_tokens", model.config.max_len)
    rows = [tokenizer.encode(s) for s in sentences]                                # [CLS] ... [SEP]
    rows = [row if len(row) <= limit else row[:limit - 1] + [tokenizer.sep_id] for row in rows]
    T = max(len(row) for row in rows)
    ids = np.full((len(rows), T), tokenizer.pad_id, dtype=np.int64)                # (N, T)
    for i, row in enumerate(rows):
        ids[i, :len(row)] = row
    real = (ids != tokenizer.pad_id)[..., None]                                     # (N, T, 1)
    with inference(model, "embed"):
        hidden = model.encode(ids).data.astype(np.float64)                          # (N, T, d_model)
    mean = (hidden * real).sum(axis=1) / real.sum(axis=1)                           # (N, d_model)
    return mean / np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
