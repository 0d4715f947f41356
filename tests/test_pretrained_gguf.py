"""Loading a LLaMA from a GGUF file, on small files the tests write with ggml's own writer: each tensor lands
in its parameter, the model computes what a LLaMA computes, and damaged or hostile files are one line each."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.pretrained import load_gguf
from tinytransformer.pretrained.byte_level import gpt2_characters

gguf = pytest.importorskip("gguf", reason="needs the pretrained extra (pip install -e '.[pretrained]')")

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MERGES = ["Ġ t", "h e", "Ġt he", "Ġ a", "i n"]
D, H, H_KV, D_FF, LAYERS = 16, 4, 2, 32, 2   # Q8_0 quantizes rows of 32


def tiny_vocabulary():
    """The file's tokens: the special tokens first, then the 256 bytes in GPT-2's alphabet, then each merge."""
    characters = gpt2_characters()
    tokens = SPECIALS + [characters[b] for b in range(256)] + [m.replace(" ", "") for m in MERGES]
    return tokens, [3] * len(SPECIALS) + [1] * (len(tokens) - len(SPECIALS))


def tiny_tensors(rng, vocab_size, tied=True):
    """{GGUF name: float32 array (out, in)} of a tiny LLaMA."""
    d_kv = H_KV * D // H
    tensors = {"token_embd.weight": rng.standard_normal((vocab_size, D)), "output_norm.weight": 1 + rng.random(D)}
    for i in range(LAYERS):
        tensors.update({f"blk.{i}.attn_norm.weight": 1 + rng.random(D), f"blk.{i}.ffn_norm.weight": 1 + rng.random(D),
                        f"blk.{i}.attn_q.weight": rng.standard_normal((D, D)) / 4,
                        f"blk.{i}.attn_k.weight": rng.standard_normal((d_kv, D)) / 4,
                        f"blk.{i}.attn_v.weight": rng.standard_normal((d_kv, D)) / 4,
                        f"blk.{i}.attn_output.weight": rng.standard_normal((D, D)) / 4,
                        f"blk.{i}.ffn_gate.weight": rng.standard_normal((D_FF, D)) / 4,
                        f"blk.{i}.ffn_up.weight": rng.standard_normal((D_FF, D)) / 4,
                        f"blk.{i}.ffn_down.weight": rng.standard_normal((D, D_FF)) / 4})
    if not tied:
        tensors["output.weight"] = rng.standard_normal((vocab_size, D))
    return {name: a.astype(np.float32) for name, a in tensors.items()}


def write_gguf(path, tensors=None, settings=None, tokens=None, token_types=None, merges=MERGES, tied=True,
               quantize=()):
    """A tiny LLaMA GGUF at path; settings override {key: value}; quantize: the names stored as Q8_0."""
    default_tokens, default_types = tiny_vocabulary()
    tokens = default_tokens if tokens is None else tokens
    tensors = tiny_tensors(np.random.default_rng(0), len(tokens), tied) if tensors is None else tensors
    writer = gguf.GGUFWriter(str(path), "llama")
    values = {"block_count": LAYERS, "context_length": 32, "embedding_length": D, "feed_forward_length": D_FF,
              "head_count": H, "head_count_kv": H_KV, "rope_freq_base": 500.0, "layer_norm_rms_eps": 1e-5,
              **(settings or {})}
    for key, value in values.items():
        getattr(writer, f"add_{key}")(value)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list(tokens)
    writer.add_token_types(default_types if token_types is None else token_types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(2)
    for name, array in tensors.items():
        if name in quantize:
            writer.add_tensor(name, gguf.quants.quantize(array, gguf.GGMLQuantizationType.Q8_0),
                              raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return tensors


def llama_logits(tensors, ids, theta=500.0, eps=1e-5):
    """A LLaMA's logits written out in NumPy from the file's tensors (rotate-half rope on the file's
    interleaved pairs), an independent reading of what each tensor means. ids (T,) -> (T, V)."""
    T, d_k = len(ids), D // H

    def rms(x, gamma):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * gamma

    def rotate(x):                          # x (heads, T, d_k): pair (2i, 2i+1) turns by t * theta^(-2i/d_k)
        angle = np.arange(T)[:, None] * theta ** (-np.arange(0, d_k, 2) / d_k)
        even, odd = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = even * np.cos(angle) - odd * np.sin(angle)
        out[..., 1::2] = even * np.sin(angle) + odd * np.cos(angle)
        return out

    x = tensors["token_embd.weight"][ids].astype(np.float64)
    for i in range(LAYERS):
        w = {name.split(".")[2]: a.astype(np.float64) for name, a in tensors.items() if name.startswith(f"blk.{i}.")}
        h = rms(x, w["attn_norm"])
        q = rotate((h @ w["attn_q"].T).reshape(T, H, d_k).transpose(1, 0, 2))
        k = rotate((h @ w["attn_k"].T).reshape(T, H_KV, d_k).transpose(1, 0, 2))
        v = (h @ w["attn_v"].T).reshape(T, H_KV, d_k).transpose(1, 0, 2)
        k, v = np.repeat(k, H // H_KV, axis=0), np.repeat(v, H // H_KV, axis=0)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(d_k) + np.triu(np.full((T, T), -np.inf), 1)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        out = (p / p.sum(-1, keepdims=True)) @ v
        x = x + out.transpose(1, 0, 2).reshape(T, D) @ w["attn_output"].T
        h = rms(x, w["ffn_norm"])
        gate = h @ w["ffn_gate"].T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ w["ffn_up"].T)) @ w["ffn_down"].T
    x = rms(x, tensors["output_norm.weight"])
    return x @ tensors.get("output.weight", tensors["token_embd.weight"]).T.astype(np.float64)


@pytest.mark.parametrize("tied", [True, False])
def test_a_small_llama_computes_what_its_tensors_say(tmp_path, tied):
    tensors = write_gguf(tmp_path / "tiny.gguf", tied=tied)
    model, tokenizer = load_gguf(tmp_path / "tiny.gguf")
    c = model.config
    assert (c.d_model, c.n_heads, c.n_kv_heads, c.n_layers, c.d_ff, c.max_len) == (D, H, H_KV, LAYERS, D_FF, 32)
    assert (c.rope_theta, c.embedding_scale, c.tie_embeddings, c.norm, c.activation) == (500.0, False, tied, "rms",
                                                                                          "swiglu")
    assert np.array_equal(model.layers[1].self_attn.W_k.W.data, tensors["blk.1.attn_k.weight"].T)
    ids = np.array([5, 80, 9, 261, 3, 40])
    ours = model(ids[None]).data[0]
    assert np.abs(ours - llama_logits(tensors, ids)).max() < 1e-4


def test_quantized_tensors_are_turned_back_into_numbers(tmp_path):
    tensors = write_gguf(tmp_path / "q.gguf", quantize={"blk.0.ffn_down.weight"})
    model, _ = load_gguf(tmp_path / "q.gguf")
    loaded = model.layers[0].feed_forward.linear2.W.data.T
    scale = np.abs(tensors["blk.0.ffn_down.weight"]).max()
    assert 0 < np.abs(loaded - tensors["blk.0.ffn_down.weight"]).max() < scale / 100    # 8-bit steps of a block


def test_the_files_tokenizer_is_its_byte_level_bpe_in_its_own_ids(tmp_path):
    write_gguf(tmp_path / "tiny.gguf")
    _, tok = load_gguf(tmp_path / "tiny.gguf")
    tokens, _ = tiny_vocabulary()
    ids = tok.encode(" the cat in 42")
    assert [tokens[i] for i in ids] == ["Ġthe", "Ġ", "c", "a", "t", "Ġ", "in", "Ġ", "4", "2"]
    assert tok.decode(ids) == " the cat in 42"
    assert tok.encode("<|im_end|>", allowed_special="all") == [2] and tok.special_tokens["<|im_start|>"] == 1
    assert tok.decode([1, 260], include_special=True) == "<|im_start|>he" and tok.decode([1, 260]) == "he"
    assert tok.eos_id == 2


HOSTILE = {
    "not a GGUF file": (lambda p: p.write_bytes(b"PK\x03\x04" + bytes(100)), "is not a readable GGUF file"),
    "truncated": (lambda p: (write_gguf(p), p.write_bytes(p.read_bytes()[:5000])), "is not a readable GGUF file"),
    "another architecture": (lambda p: write_gguf(p) and corrupt_architecture(p), "holds a 'bloom' model"),
    "a billion layers": (lambda p: write_gguf(p, settings={"block_count": 10**9}), "llama.block_count = 1000000000"),
    "heads that do not share out": (lambda p: write_gguf(p, settings={"head_count_kv": 3}),
                                    "describes an impossible model"),
    "a tensor of the wrong shape": (lambda p: write_gguf(p, settings={"feed_forward_length": 20}),
                                    "has blk.0.ffn_gate.weight of shape (32, 16); its settings need (20, 16)"),
    "a missing tensor": (lambda p: write_gguf(p, tensors={k: v for k, v in tiny_tensors(
        np.random.default_rng(0), 264).items() if k != "blk.1.attn_q.weight"}), "has no tensor 'blk.1.attn_q.weight'"),
    "a stray tensor": (lambda p: write_gguf(p, tensors={**tiny_tensors(np.random.default_rng(0), 264),
                                                        "rope_freqs.weight": np.ones(2, np.float32)}),
                       "holds a tensor 'rope_freqs.weight' this model does not have"),
    "NaN weights": (lambda p: write_gguf(p, tensors={**tiny_tensors(np.random.default_rng(0), 264),
                                                     "output_norm.weight": np.full(D, np.nan, np.float32)}),
                    "holds NaN or infinite values in final_norm.gamma"),
    "a merge of unknown tokens": (lambda p: write_gguf(p, merges=MERGES + ["x yz"]), "has an unusable tokenizer"),
    "fewer token types than tokens": (lambda p: write_gguf(p, token_types=[3] * 3 + [1] * 100),
                                      "lists 264 tokens but 103 token types"),
    "a token outside GPT-2's alphabet": (lambda p: write_gguf(p, tokens=tiny_vocabulary()[0][:-1] + ["\u4e00"]),
                                         "is not a character of GPT-2's byte alphabet"),
}


def corrupt_architecture(path):
    """general.architecture (the first "llama" of the file) made "bloom"."""
    path.write_bytes(path.read_bytes().replace(b"llama", b"bloom", 1))
    return True


@pytest.mark.parametrize("case", HOSTILE)
def test_a_damaged_or_hostile_file_is_one_line(tmp_path, case):
    make, message = HOSTILE[case]
    path = tmp_path / "bad.gguf"
    make(path)
    with pytest.raises(ValueError, match="load_pretrained: .*bad.gguf") as error:
        load_gguf(path)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_path_that_is_not_a_file_is_refused(tmp_path):
    with pytest.raises(FileNotFoundError, match="no file at"):
        load_gguf(tmp_path / "none.gguf")
    with pytest.raises(ValueError, match="is a folder, not a file of a model"):
        load_gguf(tmp_path)
    with pytest.raises(FileNotFoundError, match="neither a file nor one of the names"):
        tt.load_pretrained("smollm3")
