"""Reading a submission: what is not a regular file is never opened, no file is read or decompressed past its
bound whatever it claims, two editions are refused, and the common upload forms are found."""
import os
import struct
import time
import tracemalloc
import zipfile
import zlib

import pytest

from tinytransformer.course.reading import SOURCE_LIMIT, BadSubmission, read_submission

BASIC, SOFTMAX, TENSOR = "tinytransformer/ops/basic.py", "tinytransformer/ops/softmax.py", "tinytransformer/tensor.py"
WANTED = {BASIC, SOFTMAX, TENSOR}


def refused(path):
    """The one line read_submission refuses path with."""
    with pytest.raises(BadSubmission) as error:
        read_submission(path, WANTED)
    assert "\n" not in str(error.value)
    return str(error.value)


def bounded(path, seconds=1.0, megabytes=8):
    """The refusal of path, checked to come within seconds of CPU time and megabytes of memory (tracemalloc's peak)."""
    tracemalloc.start()
    start = time.process_time()
    try:
        message = refused(path)
        elapsed, peak = time.process_time() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert elapsed < seconds and peak < megabytes * 2 ** 20, (elapsed, peak)
    return message


def zip_by_hand(path, name, data, size, crc=0, method=zipfile.ZIP_DEFLATED, flags=0):
    """A one-member zip whose headers claim `size` bytes uncompressed (any size, true or not) and `crc`."""
    name = name if isinstance(name, bytes) else name.encode()
    local = struct.pack("<4s5H3I2H", b"PK\x03\x04", 20, flags, method, 0, 0, crc, len(data), size, len(name), 0)
    central = struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 20, 20, flags, method, 0, 0, crc, len(data), size,
                          len(name), 0, 0, 0, 0, 0, 0)
    end = struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name),
                      len(local) + len(name) + len(data), 0)
    path.write_bytes(local + name + data + central + name + end)
    return path


def deflated_zeros(megabytes):
    """A raw deflate stream of megabytes MiB of zeros, about 1 kB per MiB (one block, repeated)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(2 ** 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return block * megabytes + compressor.flush()


def test_a_fifo_named_like_a_zip_and_dev_zero_are_refused_without_reading(tmp_path):
    fifo = tmp_path / "f.zip"
    os.mkfifo(fifo)
    assert refused(fifo).startswith(f"{fifo} is a FIFO, not an edition folder or a .zip; upload your edition")
    assert refused("/dev/zero").startswith("/dev/zero is a device, not an edition folder or a .zip")


def test_a_fifo_in_a_folder_is_never_opened_for_reading(tmp_path):
    (tmp_path / "tinytransformer/ops").mkdir(parents=True)
    os.mkfifo(tmp_path / SOFTMAX)
    assert f"{SOFTMAX} is a FIFO, not a regular file" in bounded(tmp_path)
    (tmp_path / SOFTMAX).unlink()
    os.mkfifo(tmp_path / "upload.zip")                      # the one zip of a Gradescope upload, a FIFO
    (tmp_path / "tinytransformer").rename(tmp_path / "elsewhere")
    assert "upload.zip is a FIFO" in bounded(tmp_path)


def test_a_400_mb_source_file_in_a_folder_is_refused_by_its_size(tmp_path):
    (tmp_path / "tinytransformer/ops").mkdir(parents=True)
    with open(tmp_path / BASIC, "wb") as f:
        f.truncate(400 * 2 ** 20)                           # sparse: 400 MiB claimed, nothing on disk
    assert f"{BASIC} is 419430400 bytes: a source file of an edition is under 256 KiB" in bounded(tmp_path)


def test_a_deflate_bomb_as_a_source_file_is_refused_in_little_time_and_memory(tmp_path):
    bomb = zip_by_hand(tmp_path / "bomb.zip", BASIC, deflated_zeros(1200), size=1200 * 2 ** 20)
    assert os.path.getsize(bomb) < 2 * 2 ** 20
    assert f"{BASIC} is over 256 KiB uncompressed" in bounded(bomb)


def test_a_1_mb_zip_claiming_2_gb_is_refused_before_2_gb(tmp_path):
    liar = zip_by_hand(tmp_path / "liar.zip", BASIC, deflated_zeros(1200), size=2 * 10 ** 9, crc=12345)
    assert os.path.getsize(liar) < 1.3 * 2 ** 20
    assert "over 256 KiB uncompressed" in bounded(liar)


def test_a_zip_claiming_small_files_that_inflate_large_is_refused(tmp_path):
    liar = zip_by_hand(tmp_path / "small.zip", BASIC, deflated_zeros(50), size=100)
    assert "neither an edition folder nor a readable zip" in bounded(liar)


def test_a_zip_counting_a_million_entries_is_refused_before_its_directory_is_read(tmp_path):
    path = zip_by_hand(tmp_path / "many.zip", BASIC, b"", size=0, method=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    data[-12:-10] = data[-14:-12] = struct.pack("<H", 0xFFFF)   # 65535 entries, and a zip64 record of a million
    zip64 = struct.pack("<4sQ2H2I4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, 10 ** 6, 10 ** 6, 46 * 10 ** 6, 0)
    locator = struct.pack("<4sIQI", b"PK\x06\x07", 0, len(data) - 22, 1)
    path.write_bytes(bytes(data[:-22]) + zip64 + locator + bytes(data[-22:]))
    assert "holds 1000000 entries" in bounded(path)


def test_a_zip_name_that_is_not_utf8_and_an_encrypted_member_are_one_line(tmp_path):
    bad_name = zip_by_hand(tmp_path / "name.zip", b"tinytransformer/ops/\xff\xfe.py", b"x", size=1,
                           method=zipfile.ZIP_STORED, flags=0x800, crc=zlib.crc32(b"x"))
    assert "UnicodeDecodeError" in refused(bad_name)
    locked = zip_by_hand(tmp_path / "locked.zip", BASIC, b"x" * 12, size=0, method=zipfile.ZIP_STORED, flags=1)
    assert "encrypted" in refused(locked)


def test_two_editions_in_one_zip_are_refused_naming_both(tmp_path):
    for name, roots in (("same.zip", ["a/", "b/"]), ("deeper.zip", ["", "backup/old/"])):
        with zipfile.ZipFile(tmp_path / name, "w") as z:
            for root in roots:
                z.writestr(root + BASIC, "")
        shown = " and ".join(f"{root or './'}tinytransformer/" for root in roots)
        assert refused(tmp_path / name) == f"two editions in one submission: {shown}; upload one"


def test_two_editions_in_a_folder_are_refused(tmp_path):
    for root in ("mine", "mine/copy"):
        (tmp_path / root / "tinytransformer/ops").mkdir(parents=True)
    assert refused(tmp_path) == "two editions in one submission: mine/tinytransformer/ and " \
                                "mine/copy/tinytransformer/; upload one"


SOURCE = b"def softmax_backward(dout, cache):\n    return (dout,)\n"


@pytest.mark.parametrize("names", [
    [SOFTMAX, TENSOR],                                      # the edition zipped from inside it
    ["edition/" + SOFTMAX, "edition/" + TENSOR],            # the folder zipped
    ["alice/edition/" + SOFTMAX, "alice/edition/" + TENSOR],  # one level deeper
    ["softmax.py", "tensor.py"],                            # flat, as Gradescope stores a flat upload
    ["ops/softmax.py", "tensor.py"],                        # the ops folder and tensor.py
], ids=["top", "one down", "two down", "flat", "ops folder"])
@pytest.mark.parametrize("suffix", [".zip", ".ZIP", "folder"])
def test_the_common_upload_forms_are_read(tmp_path, names, suffix):
    if suffix == "folder":
        path = tmp_path / "upload"
        for name in names:
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            (path / name).write_bytes(SOURCE)
    else:
        path = tmp_path / f"upload{suffix}"
        with zipfile.ZipFile(path, "w") as z:
            for name in names:
                z.writestr(name, SOURCE)
    assert read_submission(path, WANTED) == {SOFTMAX: SOURCE, TENSOR: SOURCE}


def test_a_folder_holding_one_zip_is_read_and_anything_else_says_what_to_upload(tmp_path):
    with zipfile.ZipFile(tmp_path / "Edition.ZIP", "w") as z:
        z.writestr("edition/" + SOFTMAX, SOURCE)
    assert read_submission(tmp_path, WANTED) == {SOFTMAX: SOURCE}
    with zipfile.ZipFile(tmp_path / "second.zip", "w") as z:
        z.writestr("notes.txt", "")
    assert refused(tmp_path).endswith("holds 2 zips (Edition.ZIP, second.zip) and no edition: upload one")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("homework/answers.txt", "")
    assert refused(tmp_path / "other.zip").endswith("upload your edition's folder zipped (holding "
                                                    "tinytransformer/ops/), or its files ops/*.py and tensor.py")


def test_a_source_file_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    (tmp_path / "tinytransformer/ops").mkdir(parents=True)
    (tmp_path / BASIC).write_bytes(b"#" * SOURCE_LIMIT)
    assert len(read_submission(tmp_path, WANTED)[BASIC]) == SOURCE_LIMIT
    (tmp_path / BASIC).write_bytes(b"#" * (SOURCE_LIMIT + 1))
    assert "a source file of an edition is under 256 KiB" in refused(tmp_path)
