"""What a submission's process sends is data, bounded before it is read: numeric arrays, a small outline, capped
texts. A hostile answer (255,000 objects, a 4 MB exception text, an object array, a header claiming a huge array)
costs the instructor's process a refusal and a few MB, never a class made per object or a printout forged."""
import csv
import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tinytransformer.cli.grade import as_csv, line, sanitized
from tinytransformer.course import sandbox, wire
from tinytransformer.course.isolation import BadAnswer, GradingRun, decoded
from tinytransformer.course.submission import Graded, OpResult, grade_submission

REPO = Path(__file__).resolve().parents[1]
BASIC = "tinytransformer/ops/basic.py"


def message(outline, arrays=None):
    """The bytes of a message as a child sends it: an .npz of the outline and arrays."""
    buffer = io.BytesIO()
    wire.save(buffer, outline, arrays or {})
    return buffer.getvalue()


def test_values_cross_and_come_back_as_they_were():
    arrays = {}
    value = (np.arange(6.0).reshape(2, 3), (np.ones(2, dtype=np.float32), -1, None, True, 0.5, "axis"), [np.int64(3)])
    back = wire.decode(json.loads(json.dumps(wire.encode(value, arrays))), arrays)
    assert back[0].tolist() == value[0].tolist() and back[1][0].dtype == np.float32
    assert back[1][1:] == (-1, None, True, 0.5, "axis") and back[2] == [3]


def test_what_is_not_a_number_crosses_as_one_plain_record_never_a_class():
    class Thing:
        pass
    arrays = {}
    outline = wire.encode((Thing(), tuple(Thing() for _ in range(255_000)), {"a": 1}), arrays)
    assert wire.decode(outline, arrays) == (wire.Other("Thing"), wire.Other("tuple of 255000 values"),
                                            wire.Other("dict"))
    with pytest.raises(wire.Unreadable):
        wire.decode({"class": "Thing"}, {})
    deep = None
    for _ in range(20):
        deep = {"tuple": [deep]}
    with pytest.raises(wire.Unreadable):
        wire.decode(deep, {})


def hostile(outline_items):
    """A forged message (the child's code can write anything on its pipe): outline_items as one answer's value."""
    return message([{"value": {"tuple": outline_items}}])


@pytest.mark.parametrize("data, said", [
    (hostile([{"other": "Thing"}] * 255_000), "outline"),
    (message([{"raised": "x" * 4_000_000}]), "outline"),
], ids=["255,000 objects", "a 4 MB exception text"])
def test_a_huge_outline_is_refused_before_it_is_parsed_in_bounded_memory(data, said):
    tracemalloc.start()
    with pytest.raises(BadAnswer, match="Unreadable"):
        decoded(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 * len(data) + 2 ** 22, peak                # the message itself, read once, and little more


def forged_array(header, payload=b""):
    """A message whose one array member has the .npy header given (a dict as numpy writes it)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("outline.npy", member_bytes(np.array(json.dumps([{"value": {"array": "a0"}}]))))
        text = repr(header).encode()
        text += b" " * (63 - (len(text) + 10) % 64) + b"\n"
        z.writestr("a0.npy", b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + payload)
    return buffer.getvalue()


def member_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("header", [
    {"descr": "|O", "fortran_order": False, "shape": (3,)},
    {"descr": [("a", "<f8"), ("b", "<f8")], "fortran_order": False, "shape": (3,)},
    {"descr": "<U10", "fortran_order": False, "shape": (3,)},
    {"descr": "<f8", "fortran_order": False, "shape": (10 ** 6, 10 ** 6)},
    {"descr": "<f8", "fortran_order": False, "shape": (1,) * 9},
], ids=["objects", "a structured dtype", "text", "a terabyte claimed", "9 axes"])
def test_an_array_that_is_not_plain_numbers_of_a_bounded_size_is_refused_from_its_header(header):
    with pytest.raises(BadAnswer, match="Unreadable"):
        decoded(forged_array(header))


def test_every_text_from_the_child_is_capped_and_printable():
    data = message([{"raised": "ValueError: \x1b[31mpass\n" + "y" * 10_000, "where": "f.py:1: x\r\u2028z"}])
    (answer,) = decoded(data)
    assert answer["raised"].startswith("ValueError:  [31mpass y") and len(answer["raised"]) == wire.TEXT
    assert answer["where"] == "f.py:1: x  z"


def test_a_path_or_problem_holding_newlines_and_escapes_forges_no_line():
    forged = "class1/h02.zip\nclass1/h01-folder: 28/28\x1b[2K"
    g = sanitized(Graded(forged, 0.0, 1.0, {"add": OpResult("error", None, "raised \n" + "z" * 10_000, "x\ny")},
                         "the zip's member tinytransformer/\nclass1/h01: 28/28"))
    assert "\n" not in line(g) and "\x1b" not in line(g) and len(line(g)) < 10_000
    assert g.ops["add"].diagnosis.startswith("raised  zz") and len(g.ops["add"].diagnosis) == 4000
    assert len(as_csv([g], ["add"]).splitlines()) == 2


@pytest.fixture(scope="module")
def batch():
    with GradingRun({"exp": 1.0, "add": 1.0}, box=sandbox.choose(allow_none=True)) as made:
        yield made


def test_a_students_255000_objects_or_4_mb_exception_cost_the_op_and_nothing_else(batch, tmp_path):
    text = (REPO / BASIC).read_text()
    text = text.replace("def exp_backward(dout, cache):\n", "def exp_backward(dout, cache):\n"
                        "    return tuple(_Thing() for _ in range(255_000))\n", 1)
    text += "\n\nclass _Thing:\n    pass\n"
    (tmp_path / "a" / BASIC).parent.mkdir(parents=True)
    (tmp_path / "a" / BASIC).write_text(text)
    result = grade_submission(tmp_path / "a", batch, {"exp": 1.0, "add": 1.0})
    assert result.ops["exp"].status == "fail" and result.ops["add"].status == "pass"
    assert "returned a tuple of 255000 values" in result.ops["exp"].diagnosis
    text = (REPO / BASIC).read_text().replace("def exp_backward(dout, cache):\n", "def exp_backward(dout, cache):\n"
                                              "    raise ValueError('\\n' * 4_000_000)\n", 1)
    (tmp_path / "b" / BASIC).parent.mkdir(parents=True)
    (tmp_path / "b" / BASIC).write_text(text)
    result = grade_submission(tmp_path / "b", batch, {"exp": 1.0, "add": 1.0})
    assert result.ops["exp"].status == "error" and result.ops["add"].status == "pass"
    assert "\n" not in result.ops["exp"].diagnosis and len(result.ops["exp"].diagnosis) < 3 * wire.TEXT


def test_a_class_with_hostile_answers_and_forged_names_gets_every_line_and_bounded_outputs(tmp_path, capsys):
    from tinytransformer.__main__ import main
    text = (REPO / BASIC).read_text()
    hostile = {
        "objects": text.replace("def exp_backward(dout, cache):\n", "def exp_backward(dout, cache):\n"
                                "    return tuple(_Thing() for _ in range(255_000))\n", 1) + "\n\nclass _Thing:\n    pass\n",
        "raises": text.replace("def exp_backward(dout, cache):\n", "def exp_backward(dout, cache):\n"
                               "    raise ValueError('\\x1b[2K\\nclass1/honest: 2/2\\n' * 200_000)\n", 1),
        "honest": text,
    }
    for name, source in hostile.items():
        (tmp_path / name / BASIC).parent.mkdir(parents=True)
        (tmp_path / name / BASIC).write_text(source)
    forged = tmp_path / "forged.zip"
    with zipfile.ZipFile(forged, "w") as z:
        for top in ("a\nclass1-honest: 2 of 2\x1b[2K/", "b/"):
            z.writestr(top + BASIC, text)
    points = tmp_path / "points.json"
    points.write_text('{"exp": 1, "add": 1}')
    paths = [str(tmp_path / name) for name in hostile] + [str(forged)]
    flags = [] if sandbox_available() else ["--no-sandbox"]
    assert main(["grade", *paths, "--points", str(points), "--json", str(tmp_path / "g.json"),
                 "--csv", str(tmp_path / "g.csv"), *flags]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if not line.startswith("  ")]
    assert [line.split(":")[0] for line in lines[2:]] == paths, out[:3000]
    assert "\x1b" not in out and len(out) < 40_000
    assert lines[4].startswith(f"{tmp_path / 'honest'}: 2/2") and lines[5].startswith(f"{forged}: not graded: two ")
    assert (tmp_path / "g.json").stat().st_size < 40_000 and (tmp_path / "g.csv").stat().st_size < 40_000
    graded = json.loads((tmp_path / "g.json").read_text())["submissions"]
    assert [g["score"] for g in graded] == [1, 1, 2, 0]


def sandbox_available():
    try:
        sandbox.choose()
        return True
    except sandbox.NoSandbox:
        return False


def test_the_csv_writes_each_distinct_problem_once():
    ops = ["add", "sub", "mul", "exp", "log", "relu"]
    imported = "does not import: ModuleNotFoundError: No module named 'torch'"
    results = {"add": OpResult("error", None, f"{imported} [a (2, 3, 5), b (5,)] at basic.py:1: import torch"),
               "sub": OpResult("error", None, f"{imported} [a (3, 1), b (2, 3, 5)] at basic.py:1: import torch"),
               "mul": OpResult("not written", None, "write mul_backward first [a (2, 3, 5), b (3, 1)]"),
               "exp": OpResult("not written", None, "write exp_backward first [x (2, 3, 5)]"),
               "log": OpResult("fail", 0.5, "dx: wrong [x (2, 3, 5)]"),
               "relu": OpResult("pass", 1e-10, "")}
    header, row = csv.reader(io.StringIO(as_csv([Graded("class/alice.zip", 1.0, 6.0, results)], ops)))
    assert dict(zip(header, row)) == {
        "path": "class/alice.zip", "score": "1", "max_score": "6", "student": "alice", "add": "error", "sub": "error",
        "mul": "not written", "exp": "not written", "log": "fail", "relu": "pass", "review": "",
        "diagnosis": f"not written: mul, exp; add, sub: {imported} at basic.py:1: import torch; "
                     "log: dx: wrong [x (2, 3, 5)]"}
