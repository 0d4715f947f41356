"""Decoding with any vocabulary (a tokenizer's own end and padding ids, nucleus sampling, log-probabilities as
they come), and the generate and embed commands on small model files the tests write."""
import json

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer import functional as F
from tinytransformer.__main__ import main
from tinytransformer.decode import Specials, greedy, nucleus, sample

from helpers import decoding_config

pytest.importorskip("gguf", reason="needs the pretrained extra (pip install -e '.[pretrained]')")
from test_pretrained_bert import write_folder  # noqa: E402  (after the skip: both need the pretrained extra)
from test_pretrained_gguf import write_gguf  # noqa: E402


def test_a_vocabulary_of_its_own_may_choose_every_id_and_ends_at_its_own_eos():
    model = tt.nn.GPT(decoding_config())
    prompt = np.array([[3, 4, 5]])
    steps = []
    ids = greedy(model, prompt, 8, specials=Specials(pad=9, eos=7, never=()),
                 each_step=lambda token, logprob: steps.append((int(token[0]), float(logprob[0]))))
    expected, prefix = [], prompt
    for _ in range(8):
        logits = model(prefix).data[0, -1]
        expected.append(int(logits.argmax()))
        assert steps[len(expected) - 1] == (expected[-1], pytest.approx(float(F.log_softmax(logits).data.max())))
        if expected[-1] == 7:
            break
        prefix = np.concatenate([prefix, [[expected[-1]]]], axis=1)
    assert ids[0].tolist() == expected


def test_the_toy_vocabulary_still_never_chooses_pad_or_bos():
    model = tt.nn.GPT(decoding_config())
    for seed in range(5):
        for row in sample(model, np.array([[3, 4, 5], [6, 7, 8]]), 8, rng=seed).tolist():
            end = row.index(tt.EOS) + 1 if tt.EOS in row else len(row)
            assert tt.BOS not in row and tt.PAD not in row[:end] and set(row[end:]) <= {tt.PAD}


def test_nucleus_keeps_the_fewest_most_likely_tokens_that_reach_p():
    z = np.log(np.array([[0.5, 0.1, 0.3, 0.1]]))
    assert np.isfinite(nucleus(z, 0.7)).tolist() == [[True, False, True, False]]     # 0.5 + 0.3 >= 0.7
    assert np.isfinite(nucleus(z, 0.5)).tolist() == [[True, False, False, False]]
    assert np.isfinite(nucleus(z, 1.0)).all()
    model = tt.nn.GPT(decoding_config())
    prompt = np.array([[3, 4, 5]])
    assert np.array_equal(sample(model, prompt, 6, rng=1, top_p=1e-9), greedy(model, prompt, 6))
    with pytest.raises(ValueError, match="top_p must be in"):
        sample(model, prompt, 6, rng=1, top_p=1.5)


def test_generate_prints_the_continuation_and_writes_ids_and_logprobs(tmp_path, capsys):
    write_gguf(tmp_path / "tiny.gguf")
    model, tokenizer = tt.load_pretrained(tmp_path / "tiny.gguf")
    assert main(["generate", "--weights", str(tmp_path / "tiny.gguf"), "the cat", "--max-new-tokens", "6",
                 "--json", str(tmp_path / "out.json")]) == 0
    record = json.loads((tmp_path / "out.json").read_text())
    prompt = tokenizer.encode("the cat")
    assert record["prompt_ids"] == prompt
    assert record["ids"] == greedy(model, np.array([prompt]), 6, specials=tokenizer.specials)[0].tolist()[
        :len(record["ids"])]
    assert len(record["logprobs"]) == len(record["ids"]) and max(record["logprobs"]) <= 0
    assert capsys.readouterr().out == record["text"] + "\n" and record["text"] == tokenizer.decode(record["ids"])


def test_generate_refuses_what_cannot_work_in_one_line(tmp_path, capsys):
    write_gguf(tmp_path / "tiny.gguf")
    assert main(["generate", "--weights", str(tmp_path / "tiny.gguf"), "--chat", "hello"]) == 2
    assert "--chat: this model's chat template is not ChatML" in capsys.readouterr().err
    assert main(["generate", "--weights", str(tmp_path / "none.gguf"), "hello"]) == 2
    assert "none.gguf is neither a file nor one of the names" in capsys.readouterr().err
    assert main(["generate", "--weights", str(tmp_path / "tiny.gguf"), "hi", "--max-new-tokens", "40"]) == 2
    assert "max_len must be between 1 and" in capsys.readouterr().err


def test_without_the_pretrained_extra_the_command_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    import sys
    write_gguf(tmp_path / "tiny.gguf")
    monkeypatch.setitem(sys.modules, "gguf", None)                  # import gguf now fails
    assert main(["generate", "--weights", str(tmp_path / "tiny.gguf"), "hello"]) == 2
    assert "pip install 'tinytransformer[pretrained]'" in capsys.readouterr().err


def test_embed_prints_similarities_and_writes_unit_rows(tmp_path, capsys):
    write_folder(tmp_path / "bert")
    assert main(["embed", "--weights", str(tmp_path / "bert"), "the cat sat", "a mat", "the cat sat",
                 "--json", str(tmp_path / "e.json")]) == 0
    rows = np.array(json.loads((tmp_path / "e.json").read_text())["embeddings"])
    assert rows.shape == (3, 8) and np.allclose(np.linalg.norm(rows, axis=1), 1)
    out = capsys.readouterr().out
    assert out.startswith("3 sentence(s), 8 numbers each, length 1") and "cosine similarity:" in out
    assert out.splitlines()[-1].split()[1:] == [f"{x:.3f}" for x in rows[2] @ rows.T]
