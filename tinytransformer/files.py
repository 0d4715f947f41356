"""The one rule for every file tinytransformer writes: nothing a user made is lost, nothing is half-written.

    check_outputs({"--save": "m.npz", "--json": "m.json"}, inputs={"--pretrained": "mlm.npz"},
                  is_ours={"--save": is_checkpoint}, force=False)     # before any work: OutputError or None
    write_output("--json", "m.json", lambda f: f.write(b"..."), is_ours=is_summary)   # at the end: checked again
    atomic_write(path, lambda f: f.write(b"..."))                    # temp file beside path, then rename

Checked before any work starts, so that a long run never ends in a file that cannot be written:
every output path is given (not ""), names a regular file or none yet (not a folder, a FIFO or a device,
no trailing slash), has an extension the writer knows, sits in a folder that exists and can be written,
can be created there (the file and its temporary twin are made and removed: a name too long or a folder
that cannot be searched is found now), differs from every other output and from every input, and is not
a file the tool did not make (unless force). Checked again when written: a file that appeared meanwhile
is kept. A full disk or any other failure to write is one line, and leaves the old file as it was.
"""
import errno
import json
import os
import stat
import tempfile

FULL_DISK = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


class OutputError(ValueError):
    """An output path that cannot be used: one line naming the option, the path and why."""


def temporary_prefix(path):
    """The name of the temporary file beside path starts with this (kept short: the name must fit the folder)."""
    return f".{os.path.basename(path)[:64]}."


def atomic_write(path, write, mode="wb", may_replace=None):
    """Call write(f) on a new temporary file beside path, then rename it over path.

    A crash, a full disk or Ctrl-C during write leaves path as it was (the temporary file is removed);
    a reader never sees half a file. The file gets the permissions of a file made with open() (umask).
    may_replace(path) -> bool, asked just before the rename if a file is at path: False keeps that file
    (FileExistsError). None: replace whatever is there.
    """
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=temporary_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(descriptor, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)                  # mkstemp makes 0600; an ordinary file is 0644
        if may_replace is not None and os.path.lexists(path) and not may_replace(path):
            raise FileExistsError(errno.EEXIST, "a file appeared there while the work ran", path)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def reason(error):
    """An OSError in a few words for the user: 'the disk is full (No space left on device)'."""
    text = error.strerror or str(error)
    return f"the disk is full ({text})" if error.errno in FULL_DISK else text


def write_output(flag, path, write, is_ours=None, force=False, mode="wb"):
    """Write an output that check_outputs passed before the work, checking it again now (atomic_write):
    a file that appeared at path meanwhile is replaced only if is_ours(path) or force. Every failure
    (that file, a FIFO put there, a full disk, ...) is an OutputError of one line; the old file is kept."""
    check_outputs({flag: path}, is_ours={flag: is_ours} if is_ours else None, force=force)
    keep_unless_ours = None if force else (is_ours or (lambda _: False))
    try:
        atomic_write(path, write, mode, keep_unless_ours)
    except FileExistsError:
        raise OutputError(f"{flag} {path}: a file appeared there during the run and was not written by "
                          "tinytransformer; it is kept (choose another name, or force the replacement)") from None
    except OSError as error:
        raise OutputError(f"{flag} {path}: could not write it: {reason(error)}; nothing was written") from None


def json_keys(path):
    """The keys of the JSON object in the regular file at path; an empty set if it holds none (or cannot be
    read). How a command recognises a file it wrote before replacing it."""
    if not os.path.isfile(path):
        return set()
    try:
        with open(path, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError, RecursionError):
        return set()
    return set(found) if isinstance(found, dict) else set()


def kind_of(mode):
    """What a path of this st_mode is, in a few words, if it is not a regular file: 'a FIFO (named pipe)',
    'a device', ..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "not a regular file"


def check_output(flag, path, extensions):
    """One output path on its own: given, a regular file or none yet, a known extension, a folder that exists
    and in which the file (and its temporary twin) can be created: both are made and removed now."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise OutputError(f"{flag}: expected a file name, got {path!r} (an unset shell variable?)")
    path = os.fspath(path)
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise OutputError(f"{flag} {path}: expected a file name, got a folder")
    if os.path.islink(path) and not os.path.exists(path):
        raise OutputError(f"{flag} {path}: a symbolic link to {os.readlink(path)}, which does not exist; "
                          "expected a file name")
    if os.path.exists(path) and not os.path.isfile(path):              # stat only: a FIFO is never opened
        raise OutputError(f"{flag} {path}: expected a regular file, got {kind_of(os.stat(path).st_mode)}")
    if extensions and not path.lower().endswith(tuple(extensions)):
        raise OutputError(f"{flag} {path}: expected a name ending in {' or '.join(extensions)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(f"{flag} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"{flag} {path}: the folder {folder} cannot be written")
    try:
        if not os.path.lexists(path):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.remove(path)
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=temporary_prefix(path), suffix=".tmp")
        os.close(descriptor)
        os.remove(temporary)
    except OSError as error:
        raise OutputError(f"{flag} {path}: a file cannot be created there: {reason(error)}") from None


def check_outputs(outputs, extensions=None, inputs=None, is_ours=None, force=False):
    """Every output path, checked before any work; raises OutputError with one line, else returns None.

    outputs and inputs: {flag: path or None} (None: not given). extensions: {flag: (".npz",)}.
    is_ours: {flag: function(path) -> True if the existing file at path is one this tool wrote}; an existing
    file at an output path is only replaced if it is ours, or with force. A flag without an is_ours
    function never replaces an existing file without force.
    """
    extensions, inputs, is_ours = extensions or {}, inputs or {}, is_ours or {}
    given = {flag: path for flag, path in outputs.items() if path is not None}
    for flag, path in given.items():
        check_output(flag, path, extensions.get(flag))
    seen = {os.path.realpath(path): flag for flag, path in inputs.items() if path is not None}
    for flag, path in given.items():
        real = os.path.realpath(path)
        if real in seen:
            raise OutputError(f"{flag} {path}: the same file as {seen[real]}; expected a different path")
        seen[real] = flag
        if os.path.exists(path) and not force and not is_ours.get(flag, lambda _: False)(path):
            raise OutputError(f"{flag} {path}: the file exists and was not written by tinytransformer; "
                              "choose another name, or force the replacement (--force, force=True)")
