"""tasks/digits.py: the patches, the split, and a short run that learns (skipped without scikit-learn)."""
import numpy as np
import pytest

pytest.importorskip("sklearn")

from tinytransformer.__main__ import main  # noqa: E402
from tinytransformer.tasks import make_task  # noqa: E402
from tinytransformer.tasks.digits import DigitsTask, from_patches, load_digits, to_patches  # noqa: E402
from tinytransformer.train import train  # noqa: E402


@pytest.fixture(scope="module")
def task():
    return DigitsTask()


def test_patches_are_the_image_square_by_square():
    image = np.arange(64.0).reshape(1, 8, 8)
    patches = to_patches(image, 2)                                     # (1, 16, 4)
    assert patches.shape == (1, 16, 4)
    assert patches[0, 0].tolist() == [0, 1, 8, 9]                      # the top-left 2 x 2 square, row by row
    assert patches[0, 1].tolist() == [2, 3, 10, 11]                    # the next square to its right
    assert patches[0, 4].tolist() == [16, 17, 24, 25]                  # the first square of the second row
    for size in (1, 2, 4, 8):
        assert np.array_equal(from_patches(to_patches(image, size), size), image)


def test_the_split_is_fixed_and_test_and_validation_images_are_never_trained_on(task):
    images, _ = load_digits()
    assert images.shape == (1797, 8, 8) and 0 <= images.min() and images.max() == 1
    assert (len(task.held_out.labels), len(task.validation.labels), len(task.train_set.labels)) == (297, 300, 1200)
    rows = {name: {row.tobytes() for row in part.patches}
            for name, part in (("test", task.held_out), ("validation", task.validation), ("train", task.train_set))}
    assert sum(map(len, rows.values())) == 1797                         # the three parts share no image
    assert len(rows["test"] | rows["validation"] | rows["train"]) == 1797
    again = DigitsTask()
    assert np.array_equal(again.held_out.patches, task.held_out.patches)
    assert np.array_equal(again.validation.patches, task.validation.patches)
    assert not np.array_equal(DigitsTask(split_seed=1).held_out.labels, task.held_out.labels)


def test_batches_come_from_the_training_images_only(task):
    batch = task.batch(64, np.random.default_rng(0))
    train_rows = {row.tobytes() for row in task.train_set.patches}
    assert batch.patches.shape == (64, 16, 4) and batch.patches.dtype == np.float32
    assert all(row.tobytes() in train_rows for row in batch.patches)


@pytest.mark.slow
def test_a_short_run_learns_far_beyond_chance(task):
    result = train(None, task, steps=200, eval_every=0, progress=False)
    assert result.exact_match > 0.6 and result.test_exact_match > 0.6  # validation and test; chance: 0.1
    assert result.test_size == 297


@pytest.mark.parametrize("size", [3, 0, 16])
def test_a_patch_that_does_not_tile_the_image_is_refused(size):
    with pytest.raises(ValueError, match="patch_size must divide the 8-pixel side"):
        make_task("digits", patch_size=size)


@pytest.mark.slow
def test_the_command_line_trains_it_with_its_flag(capsys):
    code = main(["train", "--task", "digits", "--patch-size", "4", "--steps", "100", "--eval-every", "0"])
    out = capsys.readouterr().out
    assert "4 patches of 4 x 4" in out and "validation accuracy" in out and "on 297 images, touched once" in out
    assert code == 1                                                    # 100 steps do not reach 97%
