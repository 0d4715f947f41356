"""nn/vision.py: the vision encoder's gradients, its class position, its checks, and its checkpoint."""
import numpy as np
import pytest

import tinytransformer as tt
from helpers import (analytic_gradients, assert_a_wrong_gradient_is_caught, assert_gradients_along_random_directions,
                     tiny_config)
from tinytransformer.nn import VisionTransformer

PATCHES = np.random.default_rng(3).random((3, 4, 5))                  # (B, N, P): 4 patches of 5 numbers
LABELS = np.array([0, 2, 1])


def config(**changes):
    return tiny_config(tt.VisionConfig, max_len=5, n_classes=3, patch_pixels=5, positions="learned",
                       activation="gelu", **changes)


def loss_of(model):
    return tt.functional.cross_entropy(model(PATCHES), LABELS)


@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_model_gradient_along_random_directions(norm_first):
    model = VisionTransformer(config(norm_first=norm_first), rng=0)
    grads = analytic_gradients(model, loss_of)
    assert all(g is not None for g in grads.values()), "every parameter has a gradient"
    assert_gradients_along_random_directions(model, loss_of, grads)


def test_directional_check_catches_a_wrong_class_vector_gradient():
    assert_a_wrong_gradient_is_caught(VisionTransformer(config(), rng=0), loss_of, "class_vector")


def test_the_class_vector_reads_every_patch():
    """Changing one patch changes the class logits (the class position attends to all), and the class vector
    enters position 0 only: the patch outputs do not depend on it except through attention."""
    model = VisionTransformer(config(), rng=0).eval()
    changed = PATCHES.copy()
    changed[0, 3] += 1.0
    assert np.abs(model(changed).data[0] - model(PATCHES).data[0]).max() > 1e-6
    assert np.array_equal(model(changed).data[1:], model(PATCHES).data[1:])      # other images untouched


@pytest.mark.parametrize("patches, message", [
    (np.zeros((3, 4, 6)), r"float array \(B, N, 5\)"),
    (np.zeros((3, 4, 5), dtype=np.int64), r"float array"),
    (np.zeros((3, 5, 5)), r"need max_len >= 6"),
])
def test_bad_patches_get_one_clear_line(patches, message):
    with pytest.raises(ValueError, match=message):
        VisionTransformer(config(), rng=0)(patches)


def test_a_config_of_another_family_is_refused():
    with pytest.raises(TypeError, match="VisionTransformer: config must be a VisionConfig, got BERTConfig"):
        VisionTransformer(tiny_config(tt.BERTConfig, n_classes=3), rng=0)
    with pytest.raises(TypeError, match="patch_pixels"):
        tt.VisionConfig(n_classes=3)                                       # a vision config needs its patches


def test_saved_and_loaded_it_answers_the_same(tmp_path):
    model = VisionTransformer(config(), rng=0).eval()
    tt.save_checkpoint(model, tmp_path / "vit.npz")
    loaded = tt.load_checkpoint(tmp_path / "vit.npz")
    assert type(loaded) is VisionTransformer
    np.testing.assert_array_equal(loaded(PATCHES).data, model(PATCHES).data)
