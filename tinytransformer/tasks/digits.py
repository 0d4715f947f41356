"""The digits task: a Transformer encoder reads a handwritten digit cut into patches and says which digit it is.

The images are scikit-learn's 8 x 8 handwritten digits (1,797 of them, ten
classes, grey levels 0..16), read from the installed package, never fetched:
`pip install "tinytransformer[vision]"`. One order, drawn once from split_seed,
deals them out: n_held_out test images, then n_validation validation images
carved from the rest, then the training images (297, 300 and 1,200 by
default). Training stops on the validation accuracy; the test accuracy is
measured once, at the end.

Each image is cut into (8 / patch_size)^2 square patches of patch_size^2
pixels, read row by row: a 2 x 2 patch is a "token" of 4 numbers, and an image
a sequence of 16 of them. The model is nn.VisionTransformer (ViT's recipe:
patches -> Linear -> class vector and learned positions -> encoder -> the
class vector's state -> class logits), BERT's post-LN encoder at classroom
size, trained with the same loop as every other task.
"""
import dataclasses

import numpy as np

from .. import functional as F
from .. import nn
from ..nn import inference
from .batches import ImageBatch
from .options import option
from .task import BERT_STYLE, Task, TrainSettings, check_option

IMAGE_SIZE, N_CLASSES, GREY_LEVELS = 8, 10, 16


def load_digits():
    """(images (1797, 8, 8) float in [0, 1], labels (1797,) int64) from scikit-learn's copy of the data set."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise ValueError('digits: the images come with scikit-learn: pip install "tinytransformer[vision]"') from None
    data = sklearn_digits()
    return data.images / GREY_LEVELS, data.target.astype(np.int64)


def to_patches(images, patch_size):
    """images (B, H, W) -> patches (B, (H / p) * (W / p), p * p), each patch's pixels row by row, patches row by row."""
    B, H, W = images.shape
    p = patch_size
    grid = images.reshape(B, H // p, p, W // p, p)                   # (B, rows, p, columns, p)
    return grid.transpose(0, 1, 3, 2, 4).reshape(B, (H // p) * (W // p), p * p)


def from_patches(patches, patch_size, image_size=IMAGE_SIZE):
    """The inverse of to_patches: patches (B, N, p * p) -> images (B, image_size, image_size)."""
    B, p, side = len(patches), patch_size, image_size // patch_size
    grid = patches.reshape(B, side, side, p, p)                        # (B, rows, columns, p, p)
    return grid.transpose(0, 1, 3, 2, 4).reshape(B, image_size, image_size)


@dataclasses.dataclass
class DigitsTask(Task):
    """Classify 8 x 8 handwritten digits from patch_size x patch_size patches; stopped on the validation
    accuracy, tested on n_held_out other images."""
    patch_size: int = option(2, "--patch-size", "side of a square patch in pixels (1, 2, 4 or 8)")
    n_held_out: int = 297            # test images, never trained on nor chosen by
    n_validation: int = 300          # validation images, carved from the rest: 1,200 are left for training
    split_seed: int = 0              # the order that deals the images out is drawn once, from this seed

    name, model_class, model_style, measure, examples = ("digits", nn.VisionTransformer, BERT_STYLE, "accuracy",
                                                         "images")
    settings = TrainSettings(steps=1500, target_accuracy=0.97, eval_every=100)

    def __post_init__(self):
        if self.patch_size not in (1, 2, 4, 8):
            raise ValueError(f"digits: patch_size must divide the 8-pixel side: 1, 2, 4 or 8, got {self.patch_size!r}")
        check_option(self, "n_held_out", 1, 1797 - 2)
        check_option(self, "n_validation", 1, 1797 - 1 - self.n_held_out)
        images, labels = load_digits()
        order = np.random.default_rng(self.split_seed).permutation(len(images))
        held, validation = order[:self.n_held_out], order[self.n_held_out:self.n_held_out + self.n_validation]
        kept = order[self.n_held_out + self.n_validation:]
        patches = to_patches(images, self.patch_size).astype(np.float32)   # (1797, N, P)
        self.train_set = ImageBatch(patches[kept], labels[kept])
        self.validation = ImageBatch(patches[validation], labels[validation])
        self.held_out = ImageBatch(patches[held], labels[held])            # the test split

    def room(self):
        n_patches = (IMAGE_SIZE // self.patch_size) ** 2
        return dict(max_len=n_patches + 1, n_classes=N_CLASSES, patch_pixels=self.patch_size ** 2)

    def check(self, config):
        super().check(config)
        if config.patch_pixels != self.patch_size ** 2:
            raise ValueError(f"train: the config's patch_pixels={config.patch_pixels} does not fit the digits task "
                             f"with {self.patch_size} x {self.patch_size} patches: it needs {self.patch_size ** 2}")

    def describe(self):
        n = (IMAGE_SIZE // self.patch_size) ** 2
        return (f"8 x 8 digits as {n} patches of {self.patch_size} x {self.patch_size}; "
                f"{len(self.train_set.labels)} training images, {self.n_validation} validation, {self.n_held_out} test")

    def batch(self, batch_size, rng):
        rows = rng.integers(0, len(self.train_set.labels), size=batch_size)           # (B,) with replacement
        return ImageBatch(self.train_set.patches[rows], self.train_set.labels[rows])

    def loss(self, model, batch, label_smoothing=0.0):
        return F.cross_entropy(model(batch.patches), batch.labels, label_smoothing=label_smoothing)

    def predict(self, model, patches):
        """The class the model gives each image: (B, N, P) -> (B,)."""
        with inference(model, "DigitsTask.predict"):
            return model(patches).data.argmax(axis=-1)

    def accuracy(self, model, images):
        """The share of images (an ImageBatch) classified right (the exact match of a one-symbol answer)."""
        return float(np.mean(self.predict(model, images.patches) == images.labels))

    def evaluate(self, model):
        """Accuracy on the validation images, which training stops on."""
        return self.accuracy(model, self.validation)

    def test(self, model):
        """Accuracy on the test images and their number."""
        return self.accuracy(model, self.held_out), len(self.held_out.labels)

    def show(self, model, n=3):
        """n validation images drawn in characters, with the model's answer."""
        guesses = self.predict(model, self.validation.patches[:n])
        images = from_patches(self.validation.patches[:n], self.patch_size)
        lines = ["validation images (darker = more ink) and the model's answer"]
        for image, label, guess in zip(images, self.validation.labels[:n], guesses):
            lines += ["".join(" .:-=+*#%@"[min(9, int(v * 10))] * 2 for v in row) for row in image]
            lines += [f"  digit {label}, model says {guess}", ""]
        return lines

    def plot_example(self):
        n = len(self.validation.patches[0])
        names = ["class"] + [f"p{i}" for i in range(n)]
        return (self.validation.patches[:1],), names, names
