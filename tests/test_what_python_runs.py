"""The grade is what Python runs: each submission's files imported as Python imports them, in the sandbox, and each
backward pass taken as the object its name holds after import.

Two families of probes, each a submission graded in the sandbox. Code Python never runs earns nothing: a right body
hidden in a string, or a right def whose name Python rebinds to a wrong function (globals()[...], __code__, a
decorator, a match capture, a star import). Right code Python does run earns its points whatever its form: another
name for NumPy, a module-level helper, a demo under `if __name__ == "__main__":`, a def under `if True:` or `try:`,
`name = name`, a walrus, an editor's form-feed page breaks. Then: a file that does not import is its own ops' problem,
in Python's words; and for random mixtures of the honest patterns, right and wrong bodies alike, the grade agrees
with the student's own `check` run in their own copy of the package."""
import ast
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tinytransformer.course import sandbox
from tinytransformer.course.isolation import PACKAGE, GradingRun
from tinytransformer.course.submission import grade_submission

REPO = Path(__file__).resolve().parents[1]
BASIC, SOFTMAX, LAYERNORM, TENSOR = ("tinytransformer/ops/basic.py", "tinytransformer/ops/softmax.py",
                                     "tinytransformer/ops/layernorm.py", "tinytransformer/tensor.py")
POINTS = {"exp": 1.0, "mul": 1.0, "add": 1.0, "softmax": 1.0, "layer_norm": 1.0, "tape": 1.0}



def library_function(name, first=""):
    """The library's own def of name in basic.py (right: no answer is spelled here), with `first` (statements, one
    a line) put at the top of its body."""
    text = (REPO / BASIC).read_text()
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    head, _, body = ast.get_source_segment(text, node).partition("\n")
    return head + "\n" + "".join(f"    {line}\n" for line in first.splitlines()) + body + "\n"


RIGHT_EXP = library_function("exp_backward")
WRONG_EXP = "def exp_backward(dout, cache):\n    return (2 * dout * cache,)\n"


@pytest.fixture(scope="module")
def batch():
    with GradingRun(POINTS, box=sandbox.choose(allow_none=True)) as made:
        yield made


def library():
    """{path: text} of the files the graded functions live in, as the library has them: all right."""
    return {path: (REPO / path).read_text() for path in (BASIC, SOFTMAX, LAYERNORM, TENSOR)}


def replaced(text, name, new):
    """text with the module-level def `name` replaced by new (a def, or any statements)."""
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = text.split("\n")
    return "\n".join(lines[:node.lineno - 1]) + "\n" + new + "\n".join(lines[node.end_lineno:])


def with_exp(new, **more):
    """The library's files, basic.py's exp_backward replaced by new; more: other files' texts."""
    files = library()
    files[BASIC] = replaced(files[BASIC], "exp_backward", new)
    return {**files, **more}


def graded(batch, folder, files):
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(text.encode())
    return grade_submission(folder, batch, POINTS)


NEVER_RUN = {
    "a right body hidden in a string above a wrong def": (
        '"""' + "\x1c" * 17 + "\n" + RIGHT_EXP + '"""\n' + WRONG_EXP, None),
    "globals()[name] = ...": (
        RIGHT_EXP + 'globals()["exp_" + "backward"] = lambda dout, cache: (2 * dout * cache,)\n',
        "assigns a name through globals()[...] at line"),
    "f.__code__ = ...": (
        RIGHT_EXP + WRONG_EXP.replace("exp_backward", "_other") + "exp_backward.__code__ = _other.__code__\n",
        "replaces a function's __code__ at line"),
    "a decorator": (
        "def _doubled(f):\n    return lambda dout, cache: tuple(2 * g for g in f(dout, cache))\n\n\n@_doubled\n"
        + RIGHT_EXP, None),
    "a match capture": (
        RIGHT_EXP + "match (lambda dout, cache: (2 * dout * cache,)):\n    case exp_backward:\n        pass\n", None),
}


@pytest.mark.parametrize("probe", NEVER_RUN)
def test_code_python_never_runs_earns_nothing(batch, tmp_path, probe):
    source, flag = NEVER_RUN[probe]
    result = graded(batch, tmp_path, with_exp(source))
    assert result.ops["exp"].status == "fail" and "2 times the right one" in result.ops["exp"].diagnosis, result.ops["exp"]
    assert result.score == result.max_score - 1, {op: r for op, r in result.ops.items() if r.status != "pass"}
    if flag:
        assert flag in result.ops["exp"].review


def test_a_star_import_that_rebinds_the_name_is_what_is_graded(batch, tmp_path):
    files = with_exp(RIGHT_EXP + "from .softmax import *  # noqa\n")
    files[SOFTMAX] += "\n\ndef exp_backward(dout, cache):\n    return (2 * dout * cache,)\n"
    result = graded(batch, tmp_path, files)
    assert result.ops["exp"].status == "fail" and result.score == result.max_score - 1


RIGHT_FORMS = {
    "import numpy as onp": lambda: {**library(), BASIC: "import numpy as onp\n" + with_exp(
        library_function("exp_backward", "dout = onp.asarray(dout)"))[BASIC]},
    "a module-level helper": lambda: with_exp(
        "def _same(a):\n    return a\n\n\n" + library_function("exp_backward", "dout = _same(dout)")),
    "a demo def under the main guard": lambda: with_exp(
        RIGHT_EXP + 'if __name__ == "__main__":\n    def exp_backward(dout, cache):\n        return (dout,)\n'),
    "a def under if True": lambda: with_exp("if True:\n" + "".join("    " + line for line in
                                                                     RIGHT_EXP.splitlines(keepends=True))),
    "a def under try": lambda: with_exp("try:\n" + "".join("    " + line for line in RIGHT_EXP.splitlines(keepends=True))
                                        + "except ImportError:\n    pass\n"),
    "name = name": lambda: with_exp(RIGHT_EXP + "exp_backward = exp_backward\n"),
    "a walrus": lambda: with_exp("if (ONE := 1.0):\n    pass\n\n\n" + library_function("exp_backward", "dout = ONE * dout")),
    "form-feed page breaks": lambda: {**library(), BASIC: library()[BASIC].replace("\n\n\ndef ", "\n\n\x0c\ndef ")
                                      .replace("    out = cache\n", "    out = cache  # \x0c page\n")},
}


@pytest.mark.parametrize("form", RIGHT_FORMS)
def test_right_code_earns_its_points_whatever_its_form(batch, tmp_path, form):
    result = graded(batch, tmp_path, RIGHT_FORMS[form]())
    assert result.score == result.max_score, {op: r for op, r in result.ops.items() if r.status != "pass"}
    assert all(r.review == "" for r in result.ops.values())


def test_the_tapes_replay_runs_with_the_students_own_tensor_py_helpers_and_all(batch, tmp_path):
    text = library()[TENSOR]
    text = text.replace("    def backward(self, output, grad=None):",
                        "    def _order(self):\n        return _reversed(self.records)\n\n"
                        "    def backward(self, output, grad=None):")
    text = text.replace("for record in reversed(self.records):", "for record in self._order():")
    text += "\n\ndef _reversed(records):\n    return reversed(records)\n"
    assert "self._order()" in text
    result = graded(batch, tmp_path, {**library(), TENSOR: text})
    assert result.score == result.max_score, result.ops["tape"]


def test_a_file_that_does_not_import_costs_its_own_ops_in_pythons_words(batch, tmp_path):
    files = library()
    files[BASIC] = "import torch_that_is_not_here\n" + files[BASIC]
    result = graded(batch, tmp_path, files)
    for op in ("exp", "mul", "add"):                       # layernorm.py imports basic.py's unbroadcast: still graded
        assert result.ops[op].status == "error"
        assert result.ops[op].diagnosis.startswith(
            "does not import: ModuleNotFoundError: No module named 'torch_that_is_not_here'"), result.ops[op]
        assert "tinytransformer/ops/basic.py:1: import torch_that_is_not_here" in result.ops[op].diagnosis
        assert "[" not in result.ops[op].diagnosis and "starts at" not in result.ops[op].diagnosis, result.ops[op]
    assert {op for op, r in result.ops.items() if r.status == "pass"} == {"softmax", "layer_norm", "tape"}
    files[BASIC] = library()[BASIC].replace("def exp_backward(dout, cache):", "def exp_backward(dout, cache)")
    result = graded(batch, tmp_path / "2", files)
    assert result.ops["exp"].diagnosis.startswith("does not import: SyntaxError: expected ':' (basic.py, line ")
    assert result.score == 3



def test_a_file_that_runs_forever_when_imported_costs_its_own_ops_only(batch, tmp_path):
    files = library()
    files[BASIC] = "while True:\n    pass\n" + files[BASIC]
    result = graded(batch, tmp_path, files)
    assert result.ops["exp"].diagnosis.startswith("does not import: TookTooLong: the file ran over 5 s while imported")
    assert {op for op, r in result.ops.items() if r.status == "pass"} == {"softmax", "layer_norm", "tape"}


# Every .py file of the submission's package goes to the sandbox, so a helper module of the student's own imports
# as it does in their copy; the grader's own files stay the instructor's.

MINE = "tinytransformer/ops/mine.py"
HELPER = "from .basic import unbroadcast\n\n\ndef same(a):\n    return unbroadcast(a, a.shape)\n"


def with_helper_module(helper=HELPER):
    """The library's files, basic.py's exp_backward calling same() from the student's own ops/mine.py (imported at
    the top of basic.py, after the names mine.py takes from it), softmax.py importing it too."""
    files = with_exp(library_function("exp_backward", "dout = same(dout)"), **{MINE: helper})
    files[BASIC] += "\n\nfrom .mine import same  # noqa: E402\n"
    files[SOFTMAX] = "from . import mine  # noqa: F401\n" + files[SOFTMAX]
    return files


def test_a_helper_module_of_the_students_own_imports_as_in_their_copy(batch, tmp_path):
    result = graded(batch, tmp_path, with_helper_module())
    assert result.score == result.max_score, {op: r for op, r in result.ops.items() if r.status != "pass"}
    assert all(r.review == "" for r in result.ops.values())


def test_a_zipped_edition_with_a_helper_module_and_an_ops_init_that_raises(batch, tmp_path):
    """The zip's package files are read as a folder's; an ops/__init__.py that raises costs no op (each file is
    still imported as its own module)."""
    files = {**with_helper_module(), "tinytransformer/ops/__init__.py": "raise ImportError('mine')\n"}
    with zipfile.ZipFile(tmp_path / "edition.zip", "w") as archive:
        for path, text in files.items():
            archive.writestr(f"edition/{path}", text)
    result = grade_submission(tmp_path / "edition.zip", batch, POINTS)
    assert result.score == result.max_score, {op: r for op, r in result.ops.items() if r.status != "pass"}


def test_a_helper_module_that_raises_costs_the_files_importing_it_in_pythons_words(batch, tmp_path):
    result = graded(batch, tmp_path, with_helper_module(HELPER + "1 / 0\n"))
    for op in ("exp", "mul", "add", "softmax"):
        assert result.ops[op].status == "error"
        assert result.ops[op].diagnosis == f"does not import: ZeroDivisionError: division by zero at {MINE}:6: 1 / 0", \
            result.ops[op]                          # no case label: no case ran; no graded line: nothing was graded
    assert {op for op, r in result.ops.items() if r.status == "pass"} == {"layer_norm", "tape"}


def test_a_flat_upload_s_helper_beside_the_ops_files_is_a_file_of_ops(batch, tmp_path):
    files = with_helper_module()
    for path, text in files.items():
        (tmp_path / Path(path).name).write_text(text)
    result = grade_submission(tmp_path, batch, POINTS)
    assert result.score == result.max_score, {op: r for op, r in result.ops.items() if r.status != "pass"}


def test_a_whole_edition_every_file_sent_earns_full_marks(batch, tmp_path):
    shutil.copytree(PACKAGE, tmp_path / "tinytransformer", ignore=shutil.ignore_patterns("__pycache__"))
    result = grade_submission(tmp_path, batch, POINTS)
    assert result.score == result.max_score, {op: r for op, r in result.ops.items() if r.status != "pass"}


def test_a_package_and_a_module_of_one_name_grade_as_python_imports_them_the_package(batch, tmp_path):
    files = library()
    files["tinytransformer/ops/basic/__init__.py"] = with_exp(WRONG_EXP)[BASIC].replace("\nfrom .", "\nfrom ..")
    result = graded(batch, tmp_path, files)
    assert result.ops["exp"].status == "fail" and result.score == result.max_score - 1, result.ops["exp"]


def test_the_graders_own_files_in_a_submission_stay_the_instructors(batch, tmp_path):
    """The child grades with the tree's course/ and gradcheck.py (the tape's graph ops take their gradients from it):
    a submission's copies, here each one wrong or raising, are never imported in their place."""
    files = library()
    files["tinytransformer/gradcheck.py"] = ("import numpy as np\n\n\ndef numerical_gradient(f, x, dout, eps=1e-6):\n"
                                             "    return np.zeros_like(x)\n")
    files["tinytransformer/gradcheck/__init__.py"] = files["tinytransformer/gradcheck.py"]      # the same module
    for path in ("tinytransformer/__init__.py", "tinytransformer/course/__init__.py", "tinytransformer/course.py",
                 "tinytransformer/course/tape_grading.py", "tinytransformer/course/wire.py"):
        files[path] = "raise SystemExit('not the grader')\n"
    text = files[TENSOR].replace("for record in reversed(self.records):", "for record in self.records:")
    assert text != files[TENSOR]
    result = graded(batch, tmp_path, files)
    assert result.score == result.max_score, {op: r for op, r in result.ops.items() if r.status != "pass"}
    result = graded(batch, tmp_path / "2", {**files, TENSOR: text})           # a wrong replay is still told
    assert result.ops["tape"].status == "fail" and result.score == result.max_score - 1


@pytest.mark.parametrize("many", ["files", "bytes"])
def test_a_package_past_its_bounds_is_refused_in_one_line(batch, tmp_path, many):
    files = library()
    count, size = (401, 10) if many == "files" else (9, 250_000)
    for i in range(count):
        files[f"tinytransformer/ops/extra_{i}.py"] = "#" * size + "\n"
    result = graded(batch, tmp_path, files)
    assert result.score == 0 and "\n" not in result.problem
    assert (".py files (at most 400;" if many == "files" else "over 2 MiB together") in result.problem, result.problem


# The grade agrees with the student's own check: random mixtures of the honest patterns, right and wrong bodies.

PATTERNS = ["onp", "helper", "main guard", "if True", "try", "name = name", "walrus", "page break", "redefined",
            "decorated"]
OPS = ("exp", "mul")
LINES = {"onp": "dout = onp.asarray(dout)", "helper": "dout = _same(dout)", "walrus": "dout = ONE * dout"}


def written(op, right, patterns):
    """op's backward, the library's (right) or with dout doubled (wrong), written in the given patterns."""
    first = [LINES[pattern] for pattern in PATTERNS if pattern in LINES and pattern in patterns]
    lines = library_function(f"{op}_backward", "\n".join(first + ([] if right else ["dout = 2 * dout"]))).splitlines()
    if "decorated" in patterns:
        lines = ["@_identity"] + lines
    if "if True" in patterns or "try" in patterns:
        lines = ["if True:" if "if True" in patterns else "try:"] + ["    " + line for line in lines] \
            + ([] if "if True" in patterns else ["except ImportError:", "    pass"])
    if "redefined" in patterns:                              # a first try above, replaced: Python runs the last
        lines = [f"def {op}_backward(dout, cache):", "    return None", "", ""] + lines
    if "name = name" in patterns:
        lines += [f"{op}_backward = {op}_backward"]
    if "main guard" in patterns:
        lines += ['if __name__ == "__main__":', f"    def {op}_backward(dout, cache):", "        return (dout,)"]
    return "\n".join(lines) + "\n"


HEADER = ("import numpy as onp\n\n\ndef _same(a):\n    return a\n\n\ndef _identity(f):\n    return f\n\n\n"
          "if (ONE := 1.0):\n    pass\n")


def mixture(choices):
    """basic.py with exp and mul written in the chosen patterns, right or wrong as chosen."""
    text = library()[BASIC]
    for op, (right, patterns) in choices.items():
        text = replaced(text, f"{op}_backward", written(op, right, patterns))
    text = HEADER + text
    if any("page break" in patterns for _, patterns in choices.values()):
        text = text.replace("\n\n\ndef ", "\n\n\x0c\ndef ")
    return text


def own_check(folder, ops):
    """{op: passed} by the student's own grader, run in their own copy of the package (python -m ... check)."""
    code = ("import json, sys; from tinytransformer.course.grader import grade; "
            f"print(json.dumps({{g.op: g.status == 'pass' for g in grade({ops!r})}}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(folder)})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.fixed_dictionaries({op: st.tuples(st.booleans(), st.sets(st.sampled_from(PATTERNS)))
                              for op in OPS}))
def test_for_any_mixture_of_honest_patterns_the_grade_is_what_the_students_check_says(batch, tmp_path_factory,
                                                                                        choices):
    folder = tmp_path_factory.mktemp("student")
    shutil.copytree(PACKAGE, folder / "tinytransformer", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / BASIC).write_text(mixture(choices))
    checked = own_check(folder, list(OPS))
    result = grade_submission(folder, batch, POINTS)
    assert {op: result.ops[op].status == "pass" for op in OPS} == checked == {
        op: right for op, (right, _) in choices.items()}, (choices, result.ops)


def first_line(text, name):
    """co_firstlineno of what name holds once text (basic.py) has run: Python's own numbering."""
    namespace = {"__name__": "tinytransformer.ops.basic"}
    exec(compile(text, BASIC, "exec"), namespace)
    return namespace[name].__code__.co_firstlineno


def test_the_feedback_shows_where_the_graded_code_starts(batch, tmp_path):
    """A failing op's feedback names the line its graded code starts on (a decorator's wrapper here, not the def
    the student sees); a def given twice says which of its lines is graded."""
    files = with_exp(NEVER_RUN["a decorator"][0])
    line = first_line(files[BASIC], "exp_backward")
    assert files[BASIC].split("\n")[line - 1].startswith("    return lambda")
    result = graded(batch, tmp_path, files)
    assert result.ops["exp"].diagnosis.endswith(f"the graded exp_backward starts at {BASIC}:{line}"), result.ops["exp"]
    assert all("starts at" not in r.diagnosis for op, r in result.ops.items() if op != "exp")
    files = with_exp(RIGHT_EXP + "\n\n" + WRONG_EXP)
    line = first_line(files[BASIC], "exp_backward")
    result = graded(batch, tmp_path / "2", files)
    assert result.ops["exp"].diagnosis.endswith(f"graded is the one the name holds once the file has run (line {line})")
    assert f", {line}): graded" in result.ops["exp"].diagnosis, result.ops["exp"]


def test_each_answer_says_where_the_graded_code_starts_as_python_numbers_it(batch, tmp_path):
    """The child tells the def Python runs by its code's first line (a decorator's, under a form feed): what the
    feedback can show the student."""
    source = "\x0c\n@_identity\n" + RIGHT_EXP
    files = with_exp("def _identity(f):\n    return f\n\n\n" + source)
    namespace = {"__name__": "tinytransformer.ops.basic"}
    exec(compile(files[BASIC], BASIC, "exec"), namespace)
    line = namespace["exp_backward"].__code__.co_firstlineno
    assert files[BASIC].split("\n")[line - 1] == "@_identity"  # the decorator line, as Python counts
    assert files[BASIC].splitlines().index("@_identity") + 1 != line  # str.splitlines counts the form feed
    answers = batch.run({"exp": {"qualname": "exp_backward", "file": BASIC, "module": "tinytransformer.ops.basic",
                                 "files": files}})
    assert answers["exp"][0]["graded"] == f"{BASIC}:{line}"
