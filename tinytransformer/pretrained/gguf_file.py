"""A LLaMA-style language model from a GGUF file (llama.cpp's format): the library's GPT and the file's tokenizer.

A GGUF file holds its settings as named values ("llama.block_count": 30) and its
weights as named tensors, many of them quantized (Q4_1: blocks of 32 numbers as
4-bit steps of one scale and one minimum). ggml's own reader (the `gguf` package)
reads the header and turns each tensor back into float32. Each GGUF tensor of
a LLaMA maps onto one parameter of the library's GPT (modern block: RMSNorm
before each sublayer, SwiGLU, rotary positions, no biases, no embedding scale):

    token_embd.weight   (V, d_model)        embed.table
    blk.i.attn_norm     (d_model,)          layers.i.norm1.gamma
    blk.i.attn_q|k|v|output  (out, in)      layers.i.self_attn.W_q|W_k|W_v|W_o.W, transposed to (in, out)
    blk.i.ffn_norm      (d_model,)          layers.i.norm2.gamma
    blk.i.ffn_gate|up|down   (out, in)      layers.i.feed_forward.linear1|linear3|linear2.W, transposed
    output_norm         (d_model,)          final_norm.gamma
    output.weight       (V, d_model)        output.W, transposed (absent: tied to the embedding)

GGUF stores a shape fastest axis first ([in, out]), so as an array the matrix is (out, in), PyTorch's layout;
the library's is x @ W with W (in, out). llama.cpp's converter already reordered the rows of q and k so that
rope turns neighbouring pairs (x[2i], x[2i+1]), the library's (RoFormer's) convention.

The file is not trusted: its settings are checked (kinds and bounds) before a config is made, every
tensor's name, type and shape against that config, and the memory the weights need against the machine,
before any tensor is turned into numbers; every failure is one ValueError naming the file.
"""
import numpy as np

from ..decode import Specials
from ..memory import check_fits
from ..nn import GPT, TransformerConfig
from ..tokenizer.saved_file import short
from .byte_level import FileBPE
from .checks import UntrustedFile, check_shapes, load_parameters

# bounds on a file's settings, before anything is built from them
MAX = {"n_layers": 1024, "d_model": 2**16, "n_heads": 1024, "d_ff": 2**18, "vocab_size": 2**18, "max_len": 2**20}
SETTINGS = {"n_layers": "block_count", "d_model": "embedding_length", "n_heads": "attention.head_count",
            "d_ff": "feed_forward_length", "max_len": "context_length"}     # the config's field: llama.<key>


def load_gguf(path):
    """The model and tokenizer of a LLaMA GGUF file -> (GPT in eval mode, FileBPE)."""
    file = UntrustedFile(path, "load_pretrained")
    reader = file.guarded(lambda: gguf_reader(file.path), "is not a readable GGUF file")
    fields = reader.fields

    def setting(key, kind=None, default=None):
        """The file's value of key (default if absent; None: required); kind str or list: its type checked.
        Numbers are checked by file.value, with the caller's bounds."""
        if key not in fields:
            if default is None:
                file.fail(f"has no {key!r} setting")
            return default
        got = file.guarded(lambda: fields[key].contents(), f"has an unreadable {key!r}")
        if kind in (str, list) and not isinstance(got, kind):
            file.fail(f"has {key!r} of type {type(got).__name__}; expected {kind.__name__}")
        return got

    architecture = setting("general.architecture", str)
    if architecture != "llama":
        file.fail(f"holds a {short(architecture)} model; this reader knows 'llama'")
    sizes = {field: file.value(f"llama.{key}", setting(f"llama.{key}"), int, 1, MAX[field])
             for field, key in SETTINGS.items()}
    n_kv_heads = file.value("llama.attention.head_count_kv",
                            setting("llama.attention.head_count_kv", default=sizes["n_heads"]), int, 1, MAX["n_heads"])
    tokens = setting("tokenizer.ggml.tokens", list)
    vocab_size = file.value("the number of tokens", len(tokens), int, 1, MAX["vocab_size"])
    theta = file.value("llama.rope.freq_base", setting("llama.rope.freq_base", default=10000.0), float, 0.0, 1e12)
    eps = file.value("llama.attention.layer_norm_rms_epsilon", setting("llama.attention.layer_norm_rms_epsilon"),
                     float, 0.0, 1.0)
    tensors = file.guarded(lambda: {t.name: t for t in reader.tensors}, "has an unreadable tensor list")
    config = file.guarded(lambda: TransformerConfig.llama_style(
        vocab_size, **sizes, n_kv_heads=n_kv_heads, rope_theta=theta, norm_eps=eps, embedding_scale=False,
        tie_embeddings="output.weight" not in tensors), "describes an impossible model", exact=True)
    rope_dims = file.value("llama.rope.dimension_count", setting("llama.rope.dimension_count", default=config.d_k),
                           int, 1, None)
    if rope_dims != config.d_k:
        file.fail(f"turns {rope_dims} of each head's {config.d_k} numbers by rope; this reader turns them all")
    names = parameter_names(config)
    shapes = file.guarded(lambda: {name: tuple(int(n) for n in reversed(t.shape)) for name, t in tensors.items()},
                          "has an unreadable tensor shape")
    check_shapes(file, file_shapes(config), shapes)
    for name in names:
        kind, held = tensors[name].tensor_type, tensors[name].data.nbytes
        if kind not in dequantizable():
            file.fail(f"stores {name} as {kind.name}, which this reader cannot turn into numbers")
        if held != quantized_bytes(kind, shapes[name]):
            file.fail(f"holds {held} bytes for {name}; {kind.name} of shape {shapes[name]} takes "
                      f"{quantized_bytes(kind, shapes[name])}")
    if setting("tokenizer.ggml.model", str) != "gpt2":
        file.fail("has a tokenizer that is not a byte-level BPE (tokenizer.ggml.model is not 'gpt2')")
    tokenizer = file.guarded(lambda: FileBPE(tokens, setting("tokenizer.ggml.token_type", list),
                                             setting("tokenizer.ggml.merges", list),
                                             setting("tokenizer.ggml.pre", str, "gpt2")),
                             "has an unusable tokenizer", exact=True)
    tokenizer.eos_id = file.value("tokenizer.ggml.eos_token_id", setting("tokenizer.ggml.eos_token_id"), int, 0,
                                  vocab_size - 1)
    tokenizer.specials = Specials(pad=tokenizer.eos_id, eos=tokenizer.eos_id, never=())    # for decode.py
    tokenizer.chat_template = setting("tokenizer.chat_template", str, "")
    check_fits(8 * sum(int(np.prod(shape)) for shape in shapes.values()), "the model's weights",
               f"load_pretrained: {file.path}")
    model = GPT(config)
    arrays = {ours: file.guarded(lambda: dequantized(tensors[theirs], shapes[theirs]),
                                 f"has an unreadable tensor {theirs}")
              for theirs, ours in names.items()}
    load_parameters(file, model, arrays)
    return model.eval(), tokenizer


def gguf_reader(path):
    """ggml's reader of the GGUF file at path (the optional extra's gguf package)."""
    import gguf          # the optional extra: pip install "tinytransformer[pretrained]"
    return gguf.GGUFReader(path)


def dequantizable():
    """The tensor types the gguf package turns into float32 here."""
    import gguf
    T = gguf.GGMLQuantizationType
    return {T.F32, T.F16, T.BF16, T.Q8_0, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q4_K, T.Q5_K, T.Q6_K, T.Q8_K}


def quantized_bytes(kind, shape):
    """The bytes a tensor of shape (..., last) takes in GGUF type kind: whole blocks along its last axis (-1: none)."""
    import gguf
    block, block_bytes = gguf.GGML_QUANT_SIZES[kind]
    if shape[-1] % block:
        return -1
    return int(np.prod(shape[:-1], dtype=np.int64)) * (shape[-1] // block) * block_bytes


def dequantized(tensor, shape):
    """A GGUF tensor's numbers as float32 of shape (rows first); a matrix (out, in) turned to the library's (in, out)
    (not the embedding table: its rows are the tokens')."""
    import gguf
    numbers = np.asarray(gguf.quants.dequantize(tensor.data, tensor.tensor_type), dtype=np.float32).reshape(shape)
    return numbers.T if numbers.ndim == 2 and not tensor.name.startswith("token_embd") else numbers


def file_shapes(config):
    """{GGUF tensor name: its shape as an array (rows first)} for a LLaMA of config."""
    c = config
    d, d_kv, V = c.d_model, c.kv_heads * c.d_k, c.vocab_size
    shapes = {"token_embd.weight": (V, d), "output_norm.weight": (d,)}
    per_layer = {"attn_norm.weight": (d,), "attn_q.weight": (d, d), "attn_k.weight": (d_kv, d),
                 "attn_v.weight": (d_kv, d), "attn_output.weight": (d, d), "ffn_norm.weight": (d,),
                 "ffn_gate.weight": (c.d_ff, d), "ffn_up.weight": (c.d_ff, d), "ffn_down.weight": (d, c.d_ff)}
    for i in range(c.n_layers):
        shapes.update({f"blk.{i}.{name}": shape for name, shape in per_layer.items()})
    if not c.tie_embeddings:
        shapes["output.weight"] = (V, d)
    return shapes


def parameter_names(config):
    """{GGUF tensor name: the library's parameter name} for a LLaMA of config."""
    names = {"token_embd.weight": "embed.table", "output_norm.weight": "final_norm.gamma"}
    per_layer = {"attn_norm.weight": "norm1.gamma", "attn_q.weight": "self_attn.W_q.W",
                 "attn_k.weight": "self_attn.W_k.W", "attn_v.weight": "self_attn.W_v.W",
                 "attn_output.weight": "self_attn.W_o.W", "ffn_norm.weight": "norm2.gamma",
                 "ffn_gate.weight": "feed_forward.linear1.W", "ffn_up.weight": "feed_forward.linear3.W",
                 "ffn_down.weight": "feed_forward.linear2.W"}
    for i in range(config.n_layers):
        names.update({f"blk.{i}.{theirs}": f"layers.{i}.{ours}" for theirs, ours in per_layer.items()})
    if not config.tie_embeddings:
        names["output.weight"] = "output.W"
    return names
