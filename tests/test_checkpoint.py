"""Checkpoints: a round trip gives the same model; every kind of bad file is refused clearly."""
import dataclasses
import json
import os

import numpy as np
import pytest

import tinytransformer as tt
from tinytransformer.nn import Transformer, TransformerConfig

from helpers import tiny_config

SRC = np.array([[3, 4, 5, 6], [6, 5, 0, 0]])            # (2, 4)
TGT_IN = np.array([[1, 3, 4], [1, 6, 5]])               # (2, 3)


def small_model(**changes):
    fields = dict(vocab_size=7, d_model=8, n_heads=2, n_layers=1, d_ff=12, max_len=5, dropout=0.1)
    return Transformer(TransformerConfig(**{**fields, **changes}), rng=0)


@pytest.fixture
def saved(tmp_path):
    """(model, path) of a small model saved to a checkpoint."""
    model = small_model()
    path = tmp_path / "model.npz"
    tt.save_checkpoint(model, path)
    return model, path


def rewrite(path, arrays):
    np.savez(path, **arrays)


def arrays_of(path):
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


@pytest.mark.parametrize("changes", [{}, dict(dtype="float64"), dict(norm_first=True, tie_embeddings=False)],
                         ids=["classroom", "float64", "pre-LN-untied"])
def test_round_trip_gives_identical_logits(tmp_path, changes):
    model = small_model(**changes).eval()
    tt.save_checkpoint(model, tmp_path / "model.npz")
    loaded = tt.load_checkpoint(tmp_path / "model.npz")
    assert loaded.config == model.config
    assert not loaded.training                                     # loaded for inference: dropout off
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]
    np.testing.assert_array_equal(loaded(SRC, TGT_IN).data, model(SRC, TGT_IN).data)


IDS = np.array([[1, 3, 4, 5], [1, 6, 5, 0]])             # (2, 4)
MODEL_CHANGES = {"GPT": dict(norm_first=True, positions="learned", activation="gelu"),
                 "GPT-post-LN-untied": dict(tie_embeddings=False),
                 "BERT": dict(positions="learned", n_classes=3),
                 "BERT-no-head": dict(norm_first=True),
                 "GPT-llama-style": dict(norm_first=True, norm="rms", activation="swiglu", positions="rope",
                                         bias=False)}


@pytest.mark.parametrize("name", list(MODEL_CHANGES))
def test_every_model_round_trips_as_its_own_class(tmp_path, name):
    model_class = getattr(tt.nn, name.split("-")[0])
    model = model_class(tiny_config(model_class.config_class, max_len=5, dropout=0.1, dtype="float32", **MODEL_CHANGES[name]), rng=0).eval()
    tt.save_checkpoint(model, tmp_path / "model.npz")
    loaded = tt.load_checkpoint(tmp_path / "model.npz")
    assert type(loaded) is model_class and loaded.config == model.config and not loaded.training
    assert [n for n, _ in loaded.named_parameters()] == [n for n, _ in model.named_parameters()]
    np.testing.assert_array_equal(loaded(IDS).data, model(IDS).data)
    if getattr(model.config, "n_classes", None):
        np.testing.assert_array_equal(loaded.classify(IDS).data, model.classify(IDS).data)


@pytest.mark.parametrize("key", ["config", "model"])
def test_a_file_without_its_config_or_its_class_is_not_a_checkpoint(saved, key):
    _, path = saved
    rewrite(path, {name: array for name, array in arrays_of(path).items() if name != key})
    with pytest.raises(ValueError, match=f"has no '{key}' entry; it is not a tinytransformer checkpoint"):
        tt.load_checkpoint(path)


def test_an_unknown_model_class_is_refused(saved):
    _, path = saved
    arrays = arrays_of(path)
    arrays["model"] = np.array("T5")
    rewrite(path, arrays)
    with pytest.raises(ValueError, match=r"unknown class 'T5'; this version knows \['Transformer', 'GPT', 'BERT', 'VisionTransformer'\]"):
        tt.load_checkpoint(path)


def test_a_checkpoint_of_one_class_does_not_load_as_another(saved):
    """A Transformer's file relabelled as a GPT: the parameter names do not match, so it is refused."""
    _, path = saved
    arrays = arrays_of(path)
    arrays["model"] = np.array("GPT")
    rewrite(path, arrays)
    with pytest.raises(ValueError, match="unexpected entries"):
        tt.load_checkpoint(path)


def test_only_models_are_saved(tmp_path):
    with pytest.raises(TypeError, match=r"save_checkpoint: model must be one of \['Transformer', 'GPT', 'BERT', 'VisionTransformer'\], "
                                        "got Linear"):
        tt.save_checkpoint(tt.nn.Linear(2, 3, np.random.default_rng(0)), tmp_path / "x.npz")


def test_the_file_needs_no_pickle(saved):
    _, path = saved
    arrays = arrays_of(path)                                       # would raise if any entry were pickled
    assert json.loads(str(arrays["config"]))["d_model"] == 8 and str(arrays["model"]) == "Transformer"
    assert all(a.dtype != object for a in arrays.values())


def test_save_writes_exactly_the_path_given_and_leaves_no_temporary_file(tmp_path):
    tt.save_checkpoint(small_model(), tmp_path / "model.ckpt")
    assert os.listdir(tmp_path) == ["model.ckpt"]                  # no ".npz" appended, no leftovers
    tt.load_checkpoint(tmp_path / "model.ckpt")


def test_save_replaces_a_checkpoint_but_not_another_file(tmp_path, saved):
    _, path = saved
    tt.save_checkpoint(small_model(d_model=4), path)              # a checkpoint: replaced
    assert tt.load_checkpoint(path).config.d_model == 4
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    with pytest.raises(FileExistsError, match="not a tinytransformer checkpoint"):
        tt.save_checkpoint(small_model(), notes)
    assert notes.read_text() == "my notes"


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint file"):
        tt.load_checkpoint(tmp_path / "nothing.npz")


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.999])
def test_truncated_file(saved, keep):
    _, path = saved
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(ValueError, match="not an .npz checkpoint|damaged"):
        tt.load_checkpoint(path)


def test_random_bytes(tmp_path):
    path = tmp_path / "random.npz"
    path.write_bytes(np.random.default_rng(0).bytes(5000))
    with pytest.raises(ValueError, match="not an .npz checkpoint"):
        tt.load_checkpoint(path)


def test_bytes_damaged_inside_the_archive(saved):
    _, path = saved
    data = bytearray(path.read_bytes())
    data[len(data) // 2: len(data) // 2 + 8] = b"\xff" * 8       # the middle of some parameter
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged"):
        tt.load_checkpoint(path)


def test_mis_shaped_parameter(saved):
    _, path = saved
    arrays = arrays_of(path)
    arrays["decoder.0.cross_attn.W_k.W"] = np.zeros((8, 4), dtype=np.float32)
    rewrite(path, arrays)
    with pytest.raises(ValueError, match=r"decoder.0.cross_attn.W_k.W is float32 \(8, 4\) but the config "
                                         r"needs float32 \(8, 8\)"):
        tt.load_checkpoint(path)


def test_wrong_dtype(saved):
    _, path = saved
    arrays = arrays_of(path)
    arrays["embed.table"] = arrays["embed.table"].astype(np.float64)
    rewrite(path, arrays)
    with pytest.raises(ValueError, match="embed.table is float64"):
        tt.load_checkpoint(path)


def test_missing_and_extra_parameters(saved):
    _, path = saved
    arrays = arrays_of(path)
    del arrays["encoder.0.norm2.beta"]
    arrays["encoder.5.norm2.beta"] = np.zeros(8, dtype=np.float32)
    rewrite(path, arrays)
    with pytest.raises(ValueError, match=r"missing parameters \['encoder.0.norm2.beta'\], "
                                         r"unexpected entries \['encoder.5.norm2.beta'\]"):
        tt.load_checkpoint(path)


def test_config_that_does_not_match_the_parameters(saved):
    model, path = saved
    arrays = arrays_of(path)
    config = json.loads(str(arrays["config"]))
    arrays["config"] = np.array(json.dumps({**config, "n_layers": 2}))
    rewrite(path, arrays)
    with pytest.raises(ValueError, match=f"the model it describes has more parameters than the file's "
                                         f"{sum(p.data.size for p in model.parameters()):,}$"):
        tt.load_checkpoint(path)


@pytest.mark.parametrize("config", ["not json", json.dumps({"vocab_size": 7, "colour": "red"}),
                                    json.dumps({"vocab_size": 7, "d_model": 8, "n_heads": 3})])
def test_invalid_config(saved, config):
    _, path = saved
    arrays = arrays_of(path)
    arrays["config"] = np.array(config)
    rewrite(path, arrays)
    with pytest.raises(ValueError, match="invalid config"):
        tt.load_checkpoint(path)


def test_npz_without_config_or_with_pickled_entries(tmp_path):
    path = tmp_path / "other.npz"
    np.savez(path, weights=np.ones(3))
    with pytest.raises(ValueError, match="no 'config' entry"):
        tt.load_checkpoint(path)
    np.savez(path, config=np.array([{"vocab_size": 7}], dtype=object))   # an object array is pickled
    with pytest.raises(ValueError, match="damaged.*allow_pickle"):
        tt.load_checkpoint(path)


def test_non_finite_parameter(saved):
    _, path = saved
    arrays = arrays_of(path)
    arrays["encoder.0.feed_forward.linear1.b"][3] = np.nan
    rewrite(path, arrays)
    with pytest.raises(ValueError, match="linear1.b holds NaN"):
        tt.load_checkpoint(path)


# Every model option, one at a time, in every family: saved, loaded, the same outputs bit for bit.
FAMILIES = {"Transformer": lambda m: m(SRC, TGT_IN), "GPT": lambda m: m(IDS), "BERT": lambda m: m(IDS),
            "VisionTransformer": lambda m: m(np.random.default_rng(0).standard_normal((2, 4, 6)))}
OPTIONS = [dict(positions="learned"), dict(positions="rope"), dict(norm="rms"), dict(activation="gelu"),
           dict(activation="swiglu"), dict(bias=False), dict(norm_first=True), dict(tie_embeddings=False),
           dict(n_classes=3), dict(embedding_scale=False), dict(embedding_norm=True), dict(n_kv_heads=2),
           dict(positions="rope", rope_theta=100000.0), dict(attention="flash")]


def option_cases():
    for family in FAMILIES:
        config_class = getattr(tt.nn, family).config_class
        fields = {f.name for f in config_class.__dataclass_fields__.values()}
        for option in OPTIONS:
            if set(option) <= fields:
                yield pytest.param(family, option, id=f"{family}-{'-'.join(f'{k}={v}' for k, v in option.items())}")


def option_model(family, option):
    model_class = getattr(tt.nn, family)
    sizes = dict(patch_pixels=6, n_classes=3) if family == "VisionTransformer" else {}
    config = tiny_config(model_class.config_class, max_len=5, dropout=0.1, dtype="float32", **{**sizes, **option})
    return model_class(config, rng=1).eval()


@pytest.mark.parametrize("family, option", list(option_cases()))
def test_every_option_of_every_family_round_trips(tmp_path, family, option):
    model = option_model(family, option)
    tt.save_checkpoint(model, tmp_path / "model.npz")
    loaded = tt.load_checkpoint(tmp_path / "model.npz")
    assert type(loaded) is type(model) and loaded.config == model.config
    assert [(n, p.shape) for n, p in loaded.named_parameters()] == [(n, p.shape) for n, p in model.named_parameters()]
    np.testing.assert_array_equal(FAMILIES[family](loaded).data, FAMILIES[family](model).data)


def test_every_option_is_covered():
    """Each field of a config that switches a part of the model (a bool or a str, dtype aside; and n_classes,
    a head) has a round-trip case above: a new option fails here until it has one. (Numbers that change a
    shape, n_kv_heads, or a computation, rope_theta, have their cases too.)"""
    configs = (tt.TransformerConfig, tt.BERTConfig, tt.VisionConfig)
    switches = {f.name for config in configs for f in dataclasses.fields(config)
                if f.type in (bool, str) and f.name != "dtype"} | {"n_classes"}
    values = {"positions": set(tt.nn.config.POSITIONS), "norm": {"layer", "rms"},
              "activation": {"relu", "gelu", "swiglu"}, "attention": {"ordinary", "flash"}}
    covered = {key for option in OPTIONS for key in option}
    assert switches <= covered, switches - covered
    for field, allowed in values.items():
        default = tt.nn.config.ModelConfig.__dataclass_fields__[field].default
        assert {default} | {o[field] for o in OPTIONS if field in o} == allowed, field


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_config_describing_more_than_the_file_holds_is_refused_before_anything_large(tmp_path, family):
    """The config is checked by building its model with a generator that draws no more numbers than the
    file holds: a config asking for 10^8 of anything stops before the draw, within 8 MB (tracemalloc's peak)."""
    import tracemalloc
    path = tmp_path / "model.npz"
    tt.save_checkpoint(option_model(family, {}), path)
    arrays = arrays_of(path)
    config = json.loads(str(arrays["config"]))
    big = "patch_pixels" if family == "VisionTransformer" else "vocab_size"
    for field, value in [(big, 10 ** 8), ("d_ff", 10 ** 8), ("n_layers", 10 ** 5)]:
        rewrite(path, {**arrays, "config": np.array(json.dumps({**config, field: value}))})
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match=r"does not match its config: the model it describes has more "
                                                 r"parameters than the file's [\d,]+$"):
                tt.load_checkpoint(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 8 * 2 ** 20, (field, peak)


def test_a_config_describing_a_model_of_the_same_size_but_other_shapes_is_refused(saved):
    """A config whose model is no larger than the file's but shaped otherwise (d_ff 6, not 12, and 4 heads) is
    refused at the first parameter of another shape: names and shapes are compared, not counts."""
    _, path = saved
    arrays = arrays_of(path)
    config = json.loads(str(arrays["config"]))
    rewrite(path, {**arrays, "config": np.array(json.dumps({**config, "n_heads": 4, "d_model": 8, "d_ff": 6}))})
    with pytest.raises(ValueError, match=r"parameter encoder.0.feed_forward.*is float32 \(8, 12\) but the config "
                                         r"needs float32 \(8, 6\)$"):
        tt.load_checkpoint(path)
