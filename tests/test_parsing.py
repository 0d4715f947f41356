"""Parsing a submission in a process of its own: the last definition is the one taken, a source that breaks the
parser (or the parser itself) costs one line, and what calls for an instructor's review is flagged."""
import ast
import resource
import sys
import time

import pytest

from tinytransformer.course.grader import op_names
from tinytransformer.course.parsing import ParseFailed, parse, parse_all
from tinytransformer.course.submission import gradcheck_names, wanted
from tinytransformer.course.isolation import PACKAGE

OPS = ["add", "softmax", "attention", "split_heads", "tape"]
WANTED = wanted(OPS)
BASIC, SOFTMAX = "tinytransformer/ops/basic.py", "tinytransformer/ops/softmax.py"

STUB = '''def softmax_backward(dout, cache):
    """Write me."""
    out, axis = cache
    raise NotImplementedError("write softmax_backward")
'''
RIGHT = '''def softmax_backward(dout, cache):
    out, axis = cache
    return (out * (dout - (dout * out).sum(axis=axis, keepdims=True)),)
'''
WRONG = '''def softmax_backward(dout, cache):
    out, axis = cache
    return (out * dout,)
'''


def test_a_stub_above_a_rewritten_function_takes_the_rewrite_and_says_both_lines():
    found = parse({SOFTMAX: STUB + "\n\n" + RIGHT}, WANTED)["softmax"]
    assert found["function"]["source"] == RIGHT.rstrip("\n") and found["function"]["line"] == 7
    assert found["note"] == ("softmax_backward is defined 2 times in tinytransformer/ops/softmax.py (lines 1, 7): "
                             "the last, line 7, is the one Python runs and the one graded")


def test_a_wrong_function_after_a_right_one_is_the_one_taken():
    found = parse({SOFTMAX: RIGHT + "\n\n" + WRONG}, WANTED)["softmax"]
    assert found["function"]["source"] == WRONG.rstrip("\n") and "(lines 1, 6)" in found["note"]


def test_a_rewrite_above_a_stub_is_not_written_as_python_would_run_the_stub():
    found = parse({SOFTMAX: RIGHT + "\n\n" + STUB}, WANTED)["softmax"]
    assert found["status"] == "not written" and "defined 2 times" in found["problem"]


def test_a_name_rebound_after_its_def_is_refused_in_one_line():
    found = parse({SOFTMAX: RIGHT + "softmax_backward = lambda dout, cache: (dout,)\n"}, WANTED)["softmax"]
    assert found["status"] == "error" and "is bound at line 4 by something else than a def" in found["problem"]


def test_the_tape_is_the_last_class_and_its_last_method():
    source = ("class Tape:\n    def backward(self):\n        return 1\n\n"
              "class Tape:\n    def backward(self):\n        return 2\n    def backward(self):\n        return 3\n")
    found = parse({"tinytransformer/tensor.py": source}, WANTED)["tape"]
    assert found["function"]["line"] == 8 and found["function"]["source"].endswith("return 3")


@pytest.mark.parametrize("source, said", [
    ("x = " + "1+" * 100_000 + "1\n", "RecursionError"),      # 200 kB: under the size limit, too deep to parse
    ("def softmax_backward(dout, cache):\n    return (dout,)\x00\n", "null bytes"),
    ("def softmax_backward(dout, cache)\n    return (dout,)\n", "does not parse: line 1"),
], ids=["1+1+...", "NUL byte", "syntax error"])
def test_a_source_the_parser_cannot_take_is_that_files_ops_error(source, said):
    found = parse({SOFTMAX: source, BASIC: "def add_backward(dout, cache):\n    return dout, dout\n"}, WANTED)
    assert found["softmax"]["status"] == "error" and said in found["softmax"]["problem"]
    assert "\n" not in found["softmax"]["problem"] and "function" in found["add"]    # the other file is read


def test_a_parser_that_crashes_or_hangs_is_one_line():
    crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    with pytest.raises(ParseFailed, match=r"^the parser crashed on its source \(signal 11\)$"):
        parse({SOFTMAX: RIGHT}, WANTED, command=crash)
    with pytest.raises(ParseFailed, match=r"^reading its source took over 0.5 s$"):
        parse({SOFTMAX: RIGHT}, WANTED, timeout=0.5, command=[sys.executable, "-c", "import time; time.sleep(30)"])


def cpu_seconds():
    """CPU time of this process and of its children that have ended: unlike the clock, the load does not stretch it."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def test_one_parse_costs_a_process_start_not_more():
    files = {path: (PACKAGE.parent / path).read_text() for path in {w["file"] for w in WANTED.values()}}
    start = cpu_seconds()
    found = parse(files, WANTED, gradcheck_names())
    assert all("function" in f for f in found.values())
    assert cpu_seconds() - start < 5                        # a process start and the ast: about 0.05 s


# Flagged for review: the grader does not judge intent, an instructor does.

def flag(source, op="add"):
    return parse_all({WANTED[op]["file"]: source}, WANTED, gradcheck_names())[op]["review"]


@pytest.mark.parametrize("body, reason", [
    ("    out, _ = add_forward(a, b)\n    return dout, dout\n", "calls add_forward"),
    ("    from tinytransformer.gradcheck import numerical_gradient\n"
     "    return numerical_gradient(lambda z: z, a, dout), dout\n",
     "calls the gradient check's numerical_gradient; imports the gradient check"),
    ("    import torch\n    return dout, dout\n", "imports torch"),
    ("    jax = __import__('jax')\n    return dout, dout\n", "calls __import__"),
    ("    import importlib\n    return importlib.import_module('autograd'), dout\n",
     "calls import_module; imports importlib"),
    ("    g = (f(a + 1e-6) - f(a - 1e-6)) / 2e-6\n    return g, dout\n", "finite differences at line 3"),
    ("    for i in range(a.size):\n        a.flat[i] += eps\n        up = f(a)\n    return up, dout\n",
     "finite differences at line 4"),
], ids=["a forward", "numerical_gradient", "torch", "__import__", "importlib", "f(x+eps)-f(x-eps)", "x[i] += eps"])
def test_what_calls_for_a_review_is_flagged(body, reason):
    assert flag(f"def add_backward(dout, cache):\n    a, b = cache\n{body}") == reason


def test_no_backward_of_the_library_is_flagged_and_attention_calls_softmax():
    ops = op_names()
    files = {path: (PACKAGE.parent / path).read_text() for path in {w["file"] for w in wanted(ops).values()}}
    found = parse_all(files, wanted(ops), gradcheck_names())
    assert {op: f["review"] for op, f in found.items() if f["review"]} == {}
    assert found["attention"]["calls"] == ["softmax_backward"]


def test_a_forward_the_reference_calls_is_not_flagged():
    merge = ast.get_source_segment((PACKAGE / "ops/attention.py").read_text(), next(
        n for n in ast.parse((PACKAGE / "ops/attention.py").read_text()).body
        if isinstance(n, ast.FunctionDef) and n.name == "split_heads_backward"))
    assert "merge_heads_forward" in merge and flag(merge, "split_heads") == ""
