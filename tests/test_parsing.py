"""Reading a submission in a process of its own: where each name is defined (the tokenizer's lines), a source that
does not compile (or breaks the parser itself) costs its ops one line, and what calls for an instructor's review is
flagged. What is graded is decided by Python in the sandbox (tests/test_what_python_runs.py)."""
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


def test_a_stub_above_a_rewritten_function_is_sent_to_be_imported_and_both_lines_are_said():
    found = parse({SOFTMAX: STUB + "\n\n" + RIGHT}, WANTED)["softmax"]
    assert found["function"] == {"qualname": "softmax_backward", "file": SOFTMAX, "module": "tinytransformer.ops.softmax",
                                 "files": {SOFTMAX: STUB + "\n\n" + RIGHT}}
    assert found["note"] == ("softmax_backward is defined 2 times in tinytransformer/ops/softmax.py (lines 1, 7): "
                             "graded is the one the name holds once the file has run")


def test_nothing_is_decided_here_a_stub_or_a_rebound_name_is_imported_all_the_same():
    for text in (RIGHT + "\n\n" + STUB, RIGHT + "softmax_backward = lambda dout, cache: (dout,)\n", "x = 1\n"):
        found = parse({SOFTMAX: text}, WANTED)["softmax"]
        assert found["function"]["module"] == "tinytransformer.ops.softmax" and found["function"]["files"] == {
            SOFTMAX: text}


def test_line_numbers_are_the_tokenizers_a_form_feed_or_x1c_starts_no_line():
    text = "# page one\x0c\n'''\x1c\x1c hidden \x1c'''\n" + RIGHT + "\n\x0c\n" + RIGHT
    found = parse({SOFTMAX: text}, WANTED)["softmax"]
    assert "(lines 3, 8)" in found["note"]
    namespace = {}
    exec(compile(text, SOFTMAX, "exec"), namespace)
    assert namespace["softmax_backward"].__code__.co_firstlineno == 8 != len(text.splitlines()) - 2   # Python's


def test_every_def_python_could_bind_is_seen_under_if_try_and_decorators_and_the_tape_in_every_class():
    text = ("import functools\nif True:\n    def softmax_backward(dout, cache):\n        return dout\n"
            "try:\n    pass\nexcept Exception:\n    pass\nelse:\n    @functools.cache\n    @functools.wraps(len)\n"
            "    def softmax_backward(dout, cache):\n        return dout\n")
    assert "(lines 3, 10)" in parse({SOFTMAX: text}, WANTED)["softmax"]["note"]        # 10: its decorator's line
    source = ("class Tape:\n    def backward(self):\n        return 1\n\n"
              "class Tape:\n    def backward(self):\n        return 2\n    def backward(self):\n        return 3\n")
    assert "(lines 2, 6, 8)" in parse({"tinytransformer/tensor.py": source}, WANTED)["tape"]["note"]


def test_a_file_that_does_not_compile_is_its_ops_error_in_pythons_words():
    found = parse({SOFTMAX: "def softmax_backward(dout, cache)\n    return (dout,)\n"}, WANTED)["softmax"]
    assert found == {"status": "error", "problem": "does not import: SyntaxError: expected ':' "
                                                   "(softmax.py, line 1)"}
    found = parse({SOFTMAX: "def f():\n    pass\nreturn 1\n"}, WANTED)["softmax"]     # ast parses it, compile not
    assert found["problem"] == "does not import: SyntaxError: 'return' outside function " \
                               "(softmax.py, line 3)"


@pytest.mark.parametrize("source, said", [
    ("x = " + "1+" * 100_000 + "1\n", "RecursionError"),      # 200 kB: under the size limit, too deep to parse
    ("def softmax_backward(dout, cache):\n    return (dout,)\x00\n", "null bytes"),
    ("def softmax_backward(dout, cache)\n    return (dout,)\n", "does not import: SyntaxError"),
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


@pytest.mark.parametrize("source, reason", [
    ("def add_backward(dout, cache):\n    f = globals()['add_' + 'forward']\n    return f, dout\n",
     "looks a name up by a string at line 2"),
    ("from .. import gradcheck as g\n\n\ndef add_backward(dout, cache):\n"
     "    return getattr(g, 'numerical_' + 'gradient')(None, dout, dout), dout\n",
     "looks a name up by a string at line 5; its file imports the gradient check"),
    ("import sys\n\n\ndef add_backward(dout, cache):\n    return sys.modules['tinytransformer.gradcheck'], dout\n",
     "looks a name up by a string at line 5"),
    ("def add_backward(dout, cache):\n    return dout, dout\n\n\nglobals()['add_backward'] = print\n",
     "assigns a name through globals()[...] at line 5"),
    ("def add_backward(dout, cache):\n    return dout, dout\n\n\nadd_backward.__code__ = print.__code__\n",
     "replaces a function's __code__ at line 5"),
    ("import sys\n\n\ndef add_backward(dout, cache):\n    return dout, dout\n\n\n"
     "setattr(sys.modules[__name__], 'add_backward', print)\n", "calls setattr at line 8"),
    ("d = 1e-6\n\n\ndef add_backward(dout, cache):\n    a, b = cache\n    a[0] += d\n    return dout, dout\n",
     "finite differences at line 6"),
    ("def _slope(f, x):\n    return f(x + 1e-5) - f(x - 1e-5)\n\n\n"
     "def add_backward(dout, cache):\n    return _slope(abs, dout), dout\n", "finite differences at line 2"),
], ids=["globals()['add_' + 'forward']", "getattr on the gradcheck module", "sys.modules", "globals()[...] =",
        "__code__ =", "setattr on a module", "a step named d", "in a helper"])
def test_the_plain_evasions_are_flagged(source, reason):
    assert flag(source) == reason


def test_honest_forms_are_not_flagged():
    source = ("import numpy as onp\n\n\ndef _times(a, b):\n    return a * b\n\n\nif True:\n"
              "    def add_backward(dout, cache):\n        return _times(dout, 1.0), getattr(onp, 'asarray')(dout)\n"
              "add_backward = add_backward\n")
    assert flag(source) == "looks a name up by a string at line 10"            # getattr on a module: a heuristic
    assert flag(source.replace("getattr(onp, 'asarray')", "onp.asarray")) == ""
