"""`python -m tinytransformer handin`: the zip a student uploads holds the package and nothing else, and the grader
reads it."""
import shutil
import zipfile
from pathlib import Path

import pytest

from tinytransformer.__main__ import main
from tinytransformer.course import edition
from tinytransformer.course.reading import read_submission

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def student(tmp_path):
    """An edition's folder as a student leaves it: the package, a .venv, caches, notebooks with outputs, .git."""
    root = tmp_path / "edition"
    shutil.copytree(REPO / "tinytransformer", root / "tinytransformer", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text("[project]\nname = 'tinytransformer'\n")
    for junk in (".venv/lib/python3.11/site-packages/numpy/core.so", "tinytransformer/ops/__pycache__/basic.pyc",
                 "notebooks/01.ipynb", ".git/objects/pack.pack", "tinytransformer/.ipynb_checkpoints/x.py",
                 ".pytest_cache/v/cache", "tests/test_x.py"):
        (root / junk).parent.mkdir(parents=True, exist_ok=True)
        (root / junk).write_bytes(b"\0" * 100_000)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / ".venv" / "bin").mkdir()
    (root / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    return root


def names_in(path):
    with zipfile.ZipFile(path) as z:
        return z.namelist()


def test_handin_zips_the_package_and_nothing_else(student, monkeypatch, capsys):
    monkeypatch.chdir(student / "notebooks")                  # run from a folder inside the edition
    assert main(["handin"]) == 0
    out = capsys.readouterr().out
    written = student / "handin.zip"
    names = names_in(written)
    package = sorted(p.relative_to(student).as_posix() for p in (student / "tinytransformer").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts)
    assert sorted(names) == package
    assert f"wrote {written}: {written.stat().st_size / 1024:.0f} kB, {len(package)} files:" in out
    assert "tinytransformer/ops/ (" in out and "Upload this file" in out
    wanted = {p.as_posix() for p in edition.op_files(student).values()}
    assert set(read_submission(written, wanted)) == wanted
    assert written.stat().st_size < 2 ** 20


def test_handin_refuses_a_link_the_grader_would_refuse(student, capsys):
    (student / "tinytransformer" / "ops" / "mine.py").symlink_to(student / "pyproject.toml")
    assert main(["handin", "--edition", str(student)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("tinytransformer/ops/mine.py is a symbolic link, which the grader refuses: put the file "
                        "itself there") and "\n" not in err
    assert not (student / "handin.zip").exists()


def test_handin_says_what_the_grader_would_refuse(student, capsys):
    basic = student / "tinytransformer" / "ops" / "basic.py"
    basic.write_text("# coding: latin-1\n" + basic.read_text())
    assert main(["handin", "--edition", str(student), "--output", str(student / "mine.zip")]) == 2
    err = capsys.readouterr().err
    assert "the grader would not read tinytransformer/ops/basic.py: it declares its encoding as latin-1" in err


def test_handin_outside_an_edition_is_one_line(tmp_path, capsys):
    assert main(["handin", "--edition", str(tmp_path)]) == 2
    assert "not in a student edition" in capsys.readouterr().err


def test_the_editions_readme_tells_the_student_to_run_handin():
    text = edition.STUDENT_README.read_text()
    hand_in = text[text.index("## Hand it in"):text.index("## What matches")]
    assert "python -m tinytransformer handin" in hand_in and "handin.zip" in hand_in and ".venv" in hand_in
    assert "the folder that holds `pyproject.toml`" not in hand_in
