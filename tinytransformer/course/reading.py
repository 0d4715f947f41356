"""Reading a submission without trusting it: where its edition is, and its source files, read with bounds.

    read_submission("alice.zip", wanted)   # -> {"tinytransformer/ops/softmax.py": b"...", ...} or BadSubmission
    read_submission("alice.zip", wanted, package=True)     # and every other .py file of its package

A submission is a folder or a zip (.zip or .ZIP). Its edition is the folder
holding tinytransformer/ops/, at the top, one folder down or two; or the files
flat, as Gradescope stores a flat upload (softmax.py or ops/softmax.py at the
top, tensor.py beside them); or a folder holding one zip of any of these.
Two editions in one submission are refused, naming both. With package=True
the package's other .py files come too (a helper module of the student's own,
ops/mine.py: what Python imports), at most PACKAGE_FILES files and
PACKAGE_BYTES bytes in all.

Nothing is opened that is not a regular file (a FIFO, a device), no source
file is read past SOURCE_LIMIT bytes whatever its size or its zip header
says, and a zip is refused before its directory is read when the file is
over ZIP_LIMIT bytes or its end record counts over MEMBERS entries; its
directory is then walked, entry by entry, and refused when it holds more
entries than the end record says. A symbolic link anywhere in a submission
(the path itself, a file or folder in it, a zip entry) is refused: it could
point at a classmate's edition or the instructor's own. So is a file read
that has other hard links (the same file under another name, a classmate's
perhaps). not_utf8() names a source file that declares an encoding other
than UTF-8 (a `# coding: punycode` line costs seconds of decoding), from
its bytes: submission.py makes it that file's error. What a
student's folder may hold beside the edition and is never an edition, a
virtual environment (.venv, or any folder holding pyvenv.cfg), caches
(__pycache__), .git and other hidden folders, is skipped unread. Every way
of failing is BadSubmission, one line.
"""
import os
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path, PurePosixPath

SOURCE_LIMIT = 2 ** 18      # bytes of one source file: 27x the largest an edition has (tensor.py, ops/basic.py: 9.6 kB)
ZIP_LIMIT = 2 ** 26         # bytes of a submitted zip: an edition zipped is about 4 MB
MEMBERS = 20_000            # entries of a submitted zip: an edition has about 220 files
DIRECTORY_LIMIT = 2 ** 24   # bytes of a zip's directory (the names of its entries): an edition's is about 25 kB
PACKAGE_FILES = 400         # .py files of a submission's package: an edition has 99
PACKAGE_BYTES = 2 ** 21     # bytes of them in all: an edition's are 660 kB
DEPTH = 2                   # folders above an edition's root at most: edition/tinytransformer/ops/ in a zip is 1
CHUNK = 2 ** 16
EDITION = "tinytransformer/ops/"
WHAT_TO_UPLOAD = ("upload your edition's folder zipped (holding tinytransformer/ops/), "
                  "or its files ops/*.py and tensor.py")
LEAVE_OUT = ("leave out .venv, __pycache__, .git and the notebooks: `python -m tinytransformer handin` in your "
             "edition writes the zip to upload")
CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")      # PEP 263's declaration, on line 1 or 2


class BadSubmission(Exception):
    """A submission that cannot be graded at all: a missing path, no edition in it, a corrupt zip."""


def read_submission(path, wanted, package=False):
    """{edition path: bytes} of the `wanted` edition paths the submission holds (a folder or a zip); package: and
    of every other .py file of its package (package_files)."""
    path = Path(path)
    if os.path.islink(path):
        raise BadSubmission(f"{path} is a symbolic link: a submission is the folder or zip itself")
    kind = file_kind(path)
    if kind == "folder":
        return read_folder(path, wanted, package)
    if kind != "file":
        raise BadSubmission(f"{path} is {kind}, not an edition folder or a .zip; {WHAT_TO_UPLOAD}")
    return read_zip(path, wanted, package)


def not_utf8(data):
    """'' for source bytes that declare no encoding or UTF-8; else why they are refused, in words (an encoding
    such as punycode costs seconds to decode, so it is refused from the bytes, before any decoding)."""
    for number, line in enumerate(data.split(b"\n")[:2], 1):
        found = CODING.match(line)
        if found:
            name = found.group(1).decode("ascii", errors="replace").lower().replace("_", "-")
            if name != "utf8" and not name.startswith("utf-8"):
                return f"it declares its encoding as {name[:40]} (line {number}): an edition's files are UTF-8"
    return ""


def file_kind(path):
    """'folder', 'file' (regular), or what else path is, in words ('a FIFO', 'a device', 'missing')."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise BadSubmission(f"no such file or folder: {path}") from None
    except OSError as error:
        raise BadSubmission(f"{path} cannot be read: {error.strerror}") from None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISREG(mode):
        return "file"
    return {stat.S_ISFIFO(mode): "a FIFO", stat.S_ISCHR(mode) or stat.S_ISBLK(mode): "a device",
            stat.S_ISSOCK(mode): "a socket"}.get(True, "not a regular file")


def roots(names, wanted):
    """The edition roots ('' or 'a/b/') among the relative paths `names`, up to DEPTH folders down; or the
    flat form: {'': 'flat'} when no root but some wanted file's name (or ops/NAME) is at the top."""
    names = [name for name in names if not hidden(name)]
    found = sorted({name[:name.index(EDITION)] for name in names if EDITION in name
                    and name[:name.index(EDITION)].count("/") <= DEPTH
                    and (name.index(EDITION) == 0 or name[name.index(EDITION) - 1] == "/")})
    if len(found) > 1:
        shown = " and ".join(f"{root or './'}tinytransformer/" for root in found[:2])
        raise BadSubmission(f"two editions in one submission: {shown}; upload one")
    if found:
        return {found[0]: "edition"}
    flat = {name for w in wanted for name in flat_paths(w)}
    return {"": "flat"} if flat & set(names) else {}


def hidden(name, environments=()):
    """True for a path under a folder that holds no edition: a hidden one (.git, .venv), __pycache__, macOS's
    __MACOSX copies, or a virtual environment (`environments`: the folders, 'a/venv/', holding pyvenv.cfg)."""
    return any(part.startswith(".") or part in ("__MACOSX", "__pycache__") for part in name.split("/")[:-1]) or \
        any(name.startswith(folder) for folder in environments)


def environments_in(names):
    """The folders ('a/venv/') among names that hold a pyvenv.cfg: virtual environments, whatever their name."""
    return {name[:-len("pyvenv.cfg")] for name in names if name == "pyvenv.cfg" or name.endswith("/pyvenv.cfg")}


def flat_paths(edition_path):
    """The names a flat upload may give an edition file: softmax.py or ops/softmax.py for
    tinytransformer/ops/softmax.py; tensor.py for tinytransformer/tensor.py."""
    name = PurePosixPath(edition_path).name
    return (name, f"ops/{name}") if edition_path.startswith(EDITION) else (name,)


def located(names, root, form, wanted, package=False):
    """{edition path: the name in `names` that holds it} for the wanted paths found under root; package: and the
    package's other .py files (package_files)."""
    found = package_files(names, root, form) if package else {}
    for w in wanted:
        candidates = [root + w] if form == "edition" else flat_paths(w)
        hit = next((c for c in candidates if c in names), None)
        if hit is not None:
            found = {path: name for path, name in found.items() if name != hit}     # tensor.py, flat: not ops/
            found[w] = hit
    return found


def package_files(names, root, form):
    """{edition path: name} of every .py file of the package in `names` whose path Python can import (each folder
    and the file an identifier): under root's tinytransformer/; in a flat upload, at the top or in ops/, as files
    of ops/. BadSubmission past PACKAGE_FILES."""
    found = {}
    for name in names:
        if hidden(name) or not name.endswith(".py"):
            continue
        if form == "edition":
            path = name[len(root):] if name.startswith(root + "tinytransformer/") else ""
        else:
            flat = "/" not in name.removeprefix("ops/")
            path = EDITION + name.removeprefix("ops/") if flat else ""
        if path and all(part.isidentifier() for part in path.removesuffix(".py").split("/")):
            found[path] = name
    if len(found) > PACKAGE_FILES:
        raise BadSubmission(f"its package holds {len(found)} .py files (at most {PACKAGE_FILES}; an edition has "
                            f"about 100); {WHAT_TO_UPLOAD}")
    return found


def within_total(files, shown):
    """files, unless their bytes together pass PACKAGE_BYTES: then BadSubmission."""
    total = sum(map(len, files.values()))
    if total > PACKAGE_BYTES:
        raise BadSubmission(f"{shown}: its package's .py files are over {PACKAGE_BYTES // 2 ** 20} MiB together "
                            f"(an edition's are under 1 MiB); {WHAT_TO_UPLOAD}")
    return files


def read_folder(folder, wanted, package=False):
    """The wanted files of a folder submission (or of the one zip it holds), read with bounds; package: see located."""
    names, zips = folder_names(folder)
    found = roots(names, wanted)
    if not found:
        if len(zips) == 1:                              # an upload of one zip, as Gradescope stores it
            return read_zip(folder / zips[0], wanted, package)
        if len(zips) > 1:
            raise BadSubmission(f"{folder} holds {len(zips)} zips ({', '.join(sorted(zips)[:3])}) and no edition: "
                                "upload one")
        raise BadSubmission(f"{folder} is not a student edition: no tinytransformer/ops/ in it, one or two folders "
                            f"down, and no ops files at its top; {WHAT_TO_UPLOAD}")
    (root, form), = found.items()
    top = os.path.realpath(folder / root) if root else os.path.realpath(folder)
    files = {}
    for w, name in located(names, root, form, wanted, package).items():
        real = os.path.realpath(folder / name)
        if not real.startswith(top.rstrip(os.sep) + os.sep):   # a link put in since folder_names looked
            raise BadSubmission(f"{folder}: {name} links to a file outside the submission")
        files[w] = read_bounded(folder / name, f"{folder}: {name}")
        within_total(files, folder)
    return files


def folder_names(folder):
    """(relative paths of the files and folders under folder, DEPTH + 3 levels down at most, skipping what hidden()
    skips; the zips at its top). A symbolic link among them is refused."""
    names, zips, count = set(), [], 0
    for here, dirs, files in os.walk(folder):
        depth = len(Path(here).relative_to(folder).parts)
        dirs[:] = [] if depth >= DEPTH + 3 else [name for name in dirs if not hidden(name + "/x")
                                                 and not os.path.lexists(os.path.join(here, name, "pyvenv.cfg"))]
        for name in dirs + files:
            count += 1
            if count > MEMBERS:
                raise BadSubmission(f"{folder} holds over {MEMBERS} files; {WHAT_TO_UPLOAD}; {LEAVE_OUT}")
            relative = Path(here, name).relative_to(folder).as_posix()
            if os.path.islink(os.path.join(here, name)):
                raise BadSubmission(f"{folder}: {relative} is a symbolic link: a submission holds its own files, "
                                    "not links to others")
            names.add(relative + ("/" if name in dirs else ""))
        if depth == 0:
            zips = [name for name in files if name.lower().endswith(".zip")]
    return names, zips


def open_regular(path, shown):
    """path opened for reading, a binary file; BadSubmission unless it is a regular file (a FIFO or a device
    is refused by stat before it is opened, and opened without blocking in case it changed in between)."""
    if file_kind(path) != "file":
        raise BadSubmission(f"{shown} is {file_kind(path)}, not a regular file; {WHAT_TO_UPLOAD}")
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as error:
        raise BadSubmission(f"{shown} cannot be read: {error.strerror}") from None
    f = os.fdopen(descriptor, "rb")
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        f.close()
        raise BadSubmission(f"{shown} is not a regular file; {WHAT_TO_UPLOAD}")
    return f


def only_name(f, shown):
    """BadSubmission if the open file f has other hard links: the same file under another name, maybe a
    classmate's."""
    links = os.fstat(f.fileno()).st_nlink
    if links > 1:
        raise BadSubmission(f"{shown} has {links - 1} other hard link{'s' * (links > 2)}: a submission holds its own "
                            "files; upload a copy")


def read_bounded(path, shown):
    """The bytes of a regular file, refused past SOURCE_LIMIT bytes (its size, then what is read)."""
    with open_regular(path, shown) as f:
        only_name(f, shown)
        size = os.fstat(f.fileno()).st_size
        if size > SOURCE_LIMIT:
            raise BadSubmission(f"{shown} is {size} bytes: a source file of an edition is under "
                                f"{SOURCE_LIMIT // 1024} KiB")
        data = f.read(SOURCE_LIMIT + 1)
    if len(data) > SOURCE_LIMIT:                        # it grew while read
        raise BadSubmission(f"{shown} is over {SOURCE_LIMIT // 1024} KiB: a source file of an edition is under that")
    return data


def read_zip(path, wanted, package=False):
    """The wanted files of a zip submission: its size and entry count checked first, each member read with bounds;
    package: see located."""
    try:
        with open_regular(path, str(path)) as f:
            only_name(f, str(path))
            size = os.fstat(f.fileno()).st_size
            if size > ZIP_LIMIT:
                raise BadSubmission(f"{path} is {size / 2 ** 20:.0f} MiB: an edition zipped is a few MiB "
                                    f"(the limit is {ZIP_LIMIT // 2 ** 20} MiB); {LEAVE_OUT}")
            entries, directory, start = zip_entries(f, size)
            if entries > MEMBERS or directory > DIRECTORY_LIMIT:
                raise BadSubmission(f"{path} holds {entries} entries in a {directory}-byte directory (at most "
                                    f"{MEMBERS} entries, {DIRECTORY_LIMIT // 2 ** 20} MiB); {LEAVE_OUT}")
            held = directory_entries(f, start, directory, entries)
            if held != entries:
                raise BadSubmission(f"{path} is a broken zip: its end record says {entries} entries, its directory "
                                    f"holds {'more' if held > entries else held}; {WHAT_TO_UPLOAD}")
            with zipfile.ZipFile(f) as archive:
                environments = environments_in(archive.namelist())
                infos = [i for i in archive.infolist() if not hidden(i.filename, environments)]
                links = [i.filename for i in infos if stat.S_ISLNK(i.external_attr >> 16)]
                if links:
                    raise BadSubmission(f"{path}: {links[0]} is a symbolic link: a submission holds its own files, "
                                        "not links to others")
                names = {i.filename for i in infos}
                found = roots(names, wanted)
                if not found:
                    raise BadSubmission(f"{path} holds no student edition: no tinytransformer/ops/ at its top, one "
                                        f"or two folders down, and no ops files at its top; {WHAT_TO_UPLOAD}")
                (root, form), = found.items()
                files = {}
                for w, name in located(names, root, form, wanted, package).items():
                    files[w] = read_member(archive, name, f"{path}: {name}")
                    within_total(files, path)
                return files
    except BadSubmission:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, RuntimeError,
            NotImplementedError, zlib.error, struct.error) as error:     # ValueError: a name not UTF-8
        raise BadSubmission(f"{path} is neither an edition folder nor a readable zip "
                            f"({type(error).__name__}: {str(error)[:120]})") from None


def zip_entries(f, size):
    """(entries, bytes of its central directory, where the directory starts in f) as a zip's end record says (its
    zip64 record's when it has one)."""
    tail = min(size, 22 + 2 ** 16)
    f.seek(size - tail)
    data = f.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or len(data) - at < 22:
        raise zipfile.BadZipFile("no end of central directory record: not a zip, or a cut one")
    entries, directory = struct.unpack("<HI", data[at + 10:at + 16])
    end = size - tail + at                              # the directory ends where the end records begin
    locator = data.rfind(b"PK\x06\x07", 0, at)
    if locator >= 0 and at - locator == 20:             # zip64: the real count is in its own record
        offset = struct.unpack("<Q", data[locator + 8:locator + 16])[0]
        f.seek(offset)
        record = f.read(56)
        if record[:4] != b"PK\x06\x06" or len(record) < 56:
            raise zipfile.BadZipFile("a broken zip64 end record")
        entries, directory = struct.unpack("<QQ", record[32:48])
        end -= 20 + 56
    f.seek(0)
    return entries, directory, end - directory


def directory_entries(f, start, length, claimed):
    """How many entries the central directory (length bytes at start) holds, walked header by header; counting
    stops past `claimed`, so a directory that holds more than its end record says is never read further."""
    if start < 0:
        raise zipfile.BadZipFile("a central directory larger than the file")
    f.seek(start)
    data = f.read(length)
    count, at = 0, 0
    while at < len(data) and count <= claimed:
        if data[at:at + 4] != b"PK\x01\x02" or len(data) - at < 46:
            raise zipfile.BadZipFile(f"a broken central directory (entry {count + 1})")
        name, extra, comment = struct.unpack("<HHH", data[at + 28:at + 34])
        at += 46 + name + extra + comment
        count += 1
    f.seek(0)
    return count


def read_member(archive, name, shown):
    """A zip member's bytes, decompressed in chunks and refused past SOURCE_LIMIT, whatever its header claims."""
    if archive.getinfo(name).is_dir():
        raise BadSubmission(f"{shown} is a folder, not a source file")
    chunks, total = [], 0
    with archive.open(name) as member:
        while chunk := member.read(CHUNK):
            total += len(chunk)
            if total > SOURCE_LIMIT:
                raise BadSubmission(f"{shown} is over {SOURCE_LIMIT // 1024} KiB uncompressed: a source file of an "
                                    "edition is under that")
            chunks.append(chunk)
    return b"".join(chunks)
