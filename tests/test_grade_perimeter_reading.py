"""Reading a submission at the grader's perimeter: links, encodings, a zip that lies about its size, what a
student's folder holds beside the edition, and the temporary trees a killed run leaves."""
import json
import os
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from tinytransformer.course import isolation, reading, submission
from tinytransformer.course.reading import BadSubmission, read_submission

BASIC = "tinytransformer/ops/basic.py"
WANTED = {BASIC, "tinytransformer/tensor.py"}
SOURCE = b"def add_backward(dout, cache):\n    return dout, dout\n"


def edition(folder, source=SOURCE):
    """A folder holding a (tiny) edition: tinytransformer/ops/basic.py and tinytransformer/tensor.py."""
    (folder / "tinytransformer" / "ops").mkdir(parents=True)
    (folder / BASIC).write_bytes(source)
    (folder / "tinytransformer" / "tensor.py").write_bytes(b"class Tape:\n    pass\n")
    return folder


def zipped(path, members, links=()):
    """A zip of {name: bytes}, and symbolic-link entries {name: target}."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
        for name, target in dict(links).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return path


def refused(path, *words):
    with pytest.raises(BadSubmission) as caught:
        read_submission(path, WANTED)
    message = str(caught.value)
    assert "\n" not in message and all(w in message for w in words), message
    return message


def test_an_edition_reads_as_before(tmp_path):
    assert read_submission(edition(tmp_path / "alice"), WANTED)[BASIC] == SOURCE


def test_a_submission_that_is_a_symbolic_link_is_refused(tmp_path):
    """A path linking to the instructor's checkout or a classmate's folder would be graded as theirs."""
    classmate = edition(tmp_path / "classmate")
    (tmp_path / "alice").symlink_to(classmate)
    refused(tmp_path / "alice", "symbolic link")
    zipped(tmp_path / "bob.zip", {BASIC: SOURCE})
    (tmp_path / "carol.zip").symlink_to(tmp_path / "bob.zip")
    refused(tmp_path / "carol.zip", "symbolic link")


def test_a_folder_holding_a_linked_zip_or_file_is_refused(tmp_path):
    zipped(tmp_path / "classmate.zip", {BASIC: SOURCE, "tinytransformer/tensor.py": b""})
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "upload.zip").symlink_to(tmp_path / "classmate.zip")
    refused(tmp_path / "alice", "upload.zip is a symbolic link")
    bob = edition(tmp_path / "bob")
    (bob / BASIC).unlink()
    (bob / BASIC).symlink_to(tmp_path / "classmate.zip")
    refused(bob, "basic.py is a symbolic link")
    carol = edition(tmp_path / "carol")
    (carol / "tinytransformer" / "nn").symlink_to(tmp_path / "classmate")         # a link to a folder, even dangling
    refused(carol, "tinytransformer/nn is a symbolic link")


def test_a_zip_entry_that_is_a_symbolic_link_is_refused(tmp_path):
    path = zipped(tmp_path / "alice.zip", {BASIC: SOURCE, "tinytransformer/tensor.py": b""},
                  links={"tinytransformer/ops/notes.py": "/etc/passwd"})
    refused(path, "notes.py is a symbolic link")


def test_a_file_or_zip_with_other_hard_links_is_refused(tmp_path):
    classmate = edition(tmp_path / "classmate")
    alice = edition(tmp_path / "alice")
    (alice / BASIC).unlink()
    os.link(classmate / BASIC, alice / BASIC)
    refused(alice, "basic.py has 1 other hard link")
    zipped(tmp_path / "bob.zip", {BASIC: SOURCE, "tinytransformer/tensor.py": b""})
    (tmp_path / "carol").mkdir()
    os.link(tmp_path / "bob.zip", tmp_path / "carol" / "upload.zip")
    refused(tmp_path / "carol", "upload.zip has 1 other hard link")


@pytest.mark.parametrize("line", [b"# coding: punycode", b"# -*- coding: latin-1 -*-",
                                  b"#!/usr/bin/env python\n# vim: set fileencoding=utf-16 :"])
def test_an_encoding_other_than_utf8_is_refused_before_decoding(line, monkeypatch):
    """A `# coding: punycode` file cost the grader 28 s of decoding: refused from its bytes, tokenize never asked."""
    monkeypatch.setattr(submission.tokenize, "detect_encoding", None)
    with pytest.raises(SyntaxError) as caught:
        submission.decoded(line + b"\n" + SOURCE * 10_000)
    name = line.split(b"=" if b"fileencoding" in line else b":")[-1].split()[0].decode()
    number = line.count(b"\n") + 1
    assert str(caught.value) == (f"it declares its encoding as {name} (line {number}): an edition's files are "
                                 "UTF-8; delete that line")


@pytest.mark.parametrize("line", [b"# coding: utf-8", b"# -*- coding: UTF_8 -*-", b"# coding=utf8",
                                  b"x = 1  # the coding of it"])
def test_utf8_declarations_and_plain_comments_are_read(line):
    assert submission.decoded(line + b"\n" + SOURCE) == (line + b"\n" + SOURCE).decode()


def test_a_zip_whose_end_record_undercounts_its_directory_is_refused_unread(tmp_path, monkeypatch):
    """The end record says 3 entries; the directory holds 25,003: refused after walking 4 of them, before zipfile
    reads any (it would read every one, whatever the end record says)."""
    path = tmp_path / "alice.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in {BASIC: SOURCE, "tinytransformer/tensor.py": b""}.items():
            z.writestr(name, data)
        for i in range(25_001):
            z.writestr(f"x/{i}", b"")
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = struct.pack("<HH", 3, 3)
    path.write_bytes(data)
    monkeypatch.setattr(reading.zipfile, "ZipFile", None)        # never reached
    message = refused(path, "its end record says 3 entries, its directory holds more")
    assert "25" not in message.split("alice.zip")[1]


def test_a_zip_whose_directory_is_cut_short_is_refused(tmp_path):
    path = zipped(tmp_path / "alice.zip", {BASIC: SOURCE, "tinytransformer/tensor.py": b""})
    data = bytearray(path.read_bytes())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = struct.pack("<HH", 5, 5)
    path.write_bytes(data)
    refused(path, "end record says 5 entries, its directory holds 2")


def environment(folder):
    """A virtual environment in folder, as `python -m venv` makes one: pyvenv.cfg and links to Python."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (folder / "bin" / "python").symlink_to("/usr/bin/python3")
    (folder / "lib" / "tinytransformer" / "ops").mkdir(parents=True)            # a second edition, installed
    (folder / "lib" / BASIC).write_bytes(b"raise SystemExit\n")


def test_a_virtual_environment_cache_and_git_in_a_folder_are_skipped(tmp_path):
    alice = edition(tmp_path / "alice")
    for name in (".venv", "venv", "tinytransformer/env"):
        environment(alice / name)
    (alice / "tinytransformer" / "ops" / "__pycache__").mkdir()
    (alice / "tinytransformer" / "ops" / "__pycache__" / "basic.py").symlink_to("/etc/passwd")
    (alice / ".git").mkdir()
    (alice / ".git" / "HEAD").symlink_to("/etc/passwd")
    assert read_submission(alice, WANTED)[BASIC] == SOURCE


def test_a_virtual_environment_cache_and_git_in_a_zip_are_skipped(tmp_path):
    members = {BASIC: SOURCE, "tinytransformer/tensor.py": b"", "venv/pyvenv.cfg": b"home = /usr/bin\n",
               f"venv/lib/{BASIC}": b"", "tinytransformer/ops/__pycache__/basic.cpython-311.pyc": b""}
    links = {"venv/bin/python": "/usr/bin/python3", ".venv/bin/python": "/usr/bin/python3", ".git/x": "/etc/passwd"}
    path = zipped(tmp_path / "alice.zip", members, links)
    assert read_submission(path, WANTED)[BASIC] == SOURCE


def test_a_zip_too_large_says_what_to_leave_out(tmp_path, monkeypatch):
    path = zipped(tmp_path / "alice.zip", {BASIC: SOURCE, "tinytransformer/tensor.py": b"x" * 5000})
    monkeypatch.setattr(reading, "ZIP_LIMIT", 1000)
    refused(path, "leave out .venv, __pycache__, .git", "python -m tinytransformer handin")


def test_a_killed_runs_temporary_tree_is_swept_at_the_next_start(tmp_path, monkeypatch):
    """kill -9 leaves the tree (no cleanup runs); the next run removes it, keeps a live run's, and puts back the
    package permissions the dead run took."""
    package = tmp_path / "package"
    package.mkdir(mode=0o755)
    monkeypatch.setattr(isolation, "PACKAGE", package)
    dead, live, young = (tmp_path / f"{isolation.FOLDER}{name}" for name in ("dead", "live", "young"))
    for folder in (dead, live, young):
        (folder / "tree").mkdir(parents=True)
    (dead / "owner").write_text(json.dumps({"pid": os.getpid(), "started": 1, "package_mode": package.stat().st_mode}))
    (live / "owner").write_text(json.dumps({"pid": os.getpid(), "started": isolation.started(os.getpid())}))
    package.chmod(0o750)                                   # as a killed "user" run left it
    isolation.sweep(tmp_path)
    assert not dead.exists() and live.exists() and young.exists()
    assert package.stat().st_mode & 0o777 == 0o750        # a run is going on: it may need them closed
    (live / "owner").write_text(json.dumps({"pid": os.getpid(), "started": 1}))   # the run ended, killed
    os.utime(young, (0, 0))                                                       # no owner for an hour
    (dead / "tree").mkdir(parents=True)
    (dead / "owner").write_text(json.dumps({"pid": 2 ** 22 + 1, "started": 5, "package_mode": 0o40755}))
    isolation.sweep(tmp_path)
    assert not dead.exists() and not young.exists() and not live.exists()
    assert package.stat().st_mode & 0o777 == 0o755
