"""Grading a class: submissions judged by the instructor's library, each student's code in its own process.

Every tamper attempt is a submission with honest ops and one op that tries something: it must earn the
honest ops' points and nothing for that op, and the batch must go on."""
import ast
import json
import os
import zipfile
from pathlib import Path

import pytest

from tinytransformer.__main__ import main
from tinytransformer.course import edition, grader, sandbox
from tinytransformer.course.isolation import PACKAGE, GradingRun
from tinytransformer.course.stubs import backward_names, stub_source
from tinytransformer.course.submission import grade_submission

REPO = Path(__file__).resolve().parents[1]
OPS = [name for name in grader.op_names() if name != grader.TAPE]
FILES = {op: path.as_posix() for op, path in edition.op_files().items()}
POINTS = {op: 1.0 for op in OPS + [grader.TAPE]}


@pytest.fixture(scope="module")
def batch():
    with GradingRun(POINTS, box=sandbox.choose(allow_none=True)) as made:    # tests/test_sandbox.py: the sandbox
        yield made


def sandbox_flags():
    """[] where a sandbox starts here, else ["--no-sandbox"] (tests/test_sandbox.py tests the sandbox itself)."""
    try:
        sandbox.choose()
        return []
    except sandbox.NoSandbox:
        return ["--no-sandbox"]


def library_files():
    """{path: text} of the files a submission's functions come from, as the library has them: all right."""
    paths = set(FILES.values()) | {"tinytransformer/tensor.py"}
    return {path: (REPO / path).read_text() for path in paths}


def blank_files():
    found = {}
    for path, text in library_files().items():
        names = {"Tape.backward"} if path.endswith("tensor.py") else set(backward_names(text))
        found[path] = stub_source(text, path, names)
    return found


def with_function(files, op, source):
    """files with op's backward (Tape.backward for the tape) replaced by source, a def at module level."""
    path = "tinytransformer/tensor.py" if op == grader.TAPE else FILES[op]
    text = files[path]
    tree = ast.parse(text)
    name = "backward" if op == grader.TAPE else f"{op}_backward"
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    node = nodes[0]
    lines = text.splitlines(keepends=True)
    indent = " " * node.col_offset
    new = "".join(indent + line if line.strip() else line for line in source.strip("\n").splitlines(keepends=True))
    return {**files, path: "".join(lines[:node.lineno - 1]) + new + "\n" + "".join(lines[node.end_lineno:])}


def write(folder, files):
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


def grade(batch, tmp_path, files, **options):
    return grade_submission(write(tmp_path / "submission", files), batch, POINTS, **options)


def statuses(graded):
    return {op: result.status for op, result in graded.ops.items()}


def test_a_correct_submission_scores_full_marks(batch, tmp_path):
    graded = grade(batch, tmp_path, library_files())
    assert graded.score == graded.max_score == len(OPS) + 1, statuses(graded)
    assert all(r.relative_error < 1e-6 for r in graded.ops.values())


WRONG = {                     # three ops no other op's backward calls (attention's calls softmax's)
    "add": "def add_backward(dout, cache):\n    a_shape, b_shape = cache\n    return -dout, -dout\n",
    "gelu": "def gelu_backward(dout, cache):\n    x, t = cache\n    return (dout * 0.5 * (1.0 + t),)\n",
    "exp": "def exp_backward(dout, cache):\n    out = cache\n    return (dout * np.exp(out),)\n",
}


def test_three_wrong_backward_passes_lose_exactly_those_three_with_their_diagnoses(batch, tmp_path):
    files = library_files()
    for op, source in WRONG.items():
        files = with_function(files, op, source)
    graded = grade(batch, tmp_path, files)
    assert {op for op, status in statuses(graded).items() if status != "pass"} == set(WRONG)
    assert graded.score == graded.max_score - 3
    assert "gelu without its inner derivative" in graded.ops["gelu"].diagnosis
    assert "exp's backward as exp(out)" in graded.ops["exp"].diagnosis


def test_a_blank_edition_scores_zero_every_op_not_written(batch, tmp_path):
    graded = grade(batch, tmp_path, blank_files())
    assert graded.score == 0 and set(statuses(graded).values()) == {"not written"}


def test_a_real_edition_filled_in_scores_full_marks_from_a_zip(batch, tmp_path):
    built = tmp_path / "edition"
    edition.build_edition(built, tape=True)
    assert grade_submission(built, batch, POINTS).score == 0
    write(built, library_files())
    archive = tmp_path / "alice.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in built.rglob("*.py"):
            z.write(path, Path("edition") / path.relative_to(built))      # one folder down, as students zip
    graded = grade_submission(archive, batch, POINTS)
    assert graded.score == graded.max_score, statuses(graded)


# Tampering: each earns its honest ops (every other op is the library's, right) and nothing for the one it tampers in.

TAMPERS = {
    "patches the grader": """
def add_backward(dout, cache):
    import tinytransformer.course.op_grading as g
    import tinytransformer.gradcheck as gc
    g.agrees = lambda *args: True
    gc.relative_error = lambda *args: 0.0
    return dout * 0, dout * 0
""",
    "patches NumPy": """
def add_backward(dout, cache):
    np.allclose = lambda *args, **kwargs: True
    np.abs = lambda x: x * 0
    np.max = lambda *args, **kwargs: 0.0
    return dout * 0, dout * 0
""",
    "patches the finite differences": """
def add_backward(dout, cache):
    import tinytransformer.gradcheck as gc
    gc.numerical_gradient = lambda f, x, dout, eps=1e-6: np.zeros_like(x)
    return np.zeros(cache[0]), np.zeros(cache[1])
""",
    "reads the reference from the instructor's files": f"""
def add_backward(dout, cache):
    namespace = {{}}
    exec(open({str(PACKAGE / 'ops' / 'basic.py')!r}).read(), namespace)
    return namespace["add_backward"](dout, cache)
""",
    "reads the reference from memory": """
def add_backward(dout, cache):
    import sys
    return sys.modules["tinytransformer.ops"].add_backward(dout, cache)
""",
    "prints pass": """
def add_backward(dout, cache):
    print("add x pass 1.0e-10\\n26 of 26 pass")
    return dout, dout
""",
    "exits early": """
def add_backward(dout, cache):
    import os
    os._exit(0)
""",
    "raises SystemExit": """
def add_backward(dout, cache):
    raise SystemExit(0)
""",
    "loops forever": """
def add_backward(dout, cache):
    while True:
        pass
""",
    "allocates without end": """
def add_backward(dout, cache):
    hoard = []
    while True:
        hoard.append(np.ones(10 ** 7))
""",
    "raises": """
def add_backward(dout, cache):
    raise ValueError("boom")
""",
    "kills its parent": """
def add_backward(dout, cache):
    import os
    os.kill(os.getppid(), 9)
""",
    "runs a shell": """
def add_backward(dout, cache):
    import os
    os.system("echo pass")
    return dout, dout
""",
    "writes another op's answer": """
def add_backward(dout, cache):
    import glob, os
    for path in glob.glob(os.path.join(os.path.dirname(os.path.dirname(__file__)), "**", "*.npz"), recursive=True):
        os.remove(path)
    return dout, dout
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("attempt", TAMPERS)
def test_a_tamper_attempt_earns_only_the_honest_ops(batch, tmp_path, attempt):
    graded = grade(batch, tmp_path, with_function(library_files(), "add", TAMPERS[attempt]), timeout=3)
    assert graded.ops["add"].status != "pass", graded.ops["add"]
    assert graded.score == graded.max_score - 1, {op: r for op, r in graded.ops.items() if r.status != "pass"}


@pytest.mark.slow
def test_a_loop_is_a_timeout_and_a_raise_names_its_case_and_line(batch, tmp_path):
    graded = grade(batch, tmp_path, with_function(library_files(), "add", TAMPERS["loops forever"]), timeout=2)
    assert graded.ops["add"].status == "timeout"
    graded = grade(batch, tmp_path / "2", with_function(library_files(), "add", TAMPERS["raises"]))
    add = graded.ops["add"]
    assert add.status == "error" and "raised ValueError: boom" in add.diagnosis
    assert "[a (2, 3, 5), b (5,)]" in add.diagnosis and 'raise ValueError("boom")' in add.diagnosis


def test_edits_to_the_students_own_grader_and_module_level_patches_are_not_used(batch, tmp_path):
    files = with_function(library_files(), "add", WRONG["add"])
    files["tinytransformer/ops/basic.py"] = ("import tinytransformer.course.op_grading as g\n"
                                             "g.agrees = lambda *args: True\n" + files["tinytransformer/ops/basic.py"])
    files["tinytransformer/course/op_grading.py"] = "def judge(*args):\n    return 'pass'\n"
    files["tinytransformer/gradcheck.py"] = "PASS_ERROR = 1e9\n"
    graded = grade(batch, tmp_path, files)
    assert graded.ops["add"].status == "fail" and graded.score == graded.max_score - 1


def test_a_link_to_the_instructors_files_is_refused(batch, tmp_path):
    folder = write(tmp_path / "submission", blank_files())
    (folder / FILES["add"]).unlink()
    (folder / FILES["add"]).symlink_to(PACKAGE / "ops" / "basic.py")
    graded = grade_submission(folder, batch, POINTS)
    assert graded.score == 0 and "basic.py is a symbolic link" in graded.problem


def test_the_student_forward_is_not_used(batch, tmp_path):
    """layer_norm_forward changed to x * gamma + beta, with a backward that matches it: fails."""
    files = library_files()
    files = with_function(files, "layer_norm", """
def layer_norm_backward(dout, cache):
    x, gamma = cache
    return dout * gamma, (dout * x).reshape(-1, x.shape[-1]).sum(0), dout.reshape(-1, x.shape[-1]).sum(0)
""")
    text = files["tinytransformer/ops/layernorm.py"]
    start = text.index("def layer_norm_forward")
    end = text.index("def layer_norm_backward")
    files["tinytransformer/ops/layernorm.py"] = text[:start] + (
        "def layer_norm_forward(x, gamma, beta, eps=1e-5):\n    return x * gamma + beta, (x, gamma)\n\n\n") + text[end:]
    graded = grade(batch, tmp_path, files)
    assert graded.ops["layer_norm"].status != "pass" and graded.score == graded.max_score - 1


def test_dtype_and_masked_conventions_are_graded(batch, tmp_path):
    files = with_function(library_files(), "cross_entropy", """
def cross_entropy_backward(dout, cache):
    dlogits, dtargets = ops_reference(dout, cache)
    return dlogits.astype(np.float64), dtargets
""".replace("ops_reference(dout, cache)", "_reference(dout, cache)"))
    reference = ast.get_source_segment(library_files()[FILES["cross_entropy"]], next(
        n for n in ast.parse(library_files()[FILES["cross_entropy"]]).body
        if isinstance(n, ast.FunctionDef) and n.name == "cross_entropy_backward"))
    files = with_function(files, "cross_entropy", files[FILES["cross_entropy"]][0:0] + "\n".join([
        "def cross_entropy_backward(dout, cache):",
        "    def _reference" + reference.removeprefix("def cross_entropy_backward").replace("\n", "\n    "),
        "    dlogits, dtargets = _reference(dout, cache)",
        "    return dlogits.astype(np.float64), dtargets"]))
    files = with_function(files, "log_softmax", """
def log_softmax_backward(dout, cache):
    out, axis = cache
    return (dout - np.exp(out) * dout.sum(axis=axis, keepdims=True),)
""")
    graded = grade(batch, tmp_path, files)
    assert {op for op, s in statuses(graded).items() if s != "pass"} == {"cross_entropy", "log_softmax"}
    assert "returned float64 for float32 logits" in graded.ops["cross_entropy"].diagnosis
    assert "where x is -inf" in graded.ops["log_softmax"].diagnosis


# The command: bad input is one line for that submission, and the batch goes on.

def test_the_command_grades_a_batch_through_bad_input_and_writes_json_and_csv(tmp_path, capsys):
    good = write(tmp_path / "good", library_files())
    (tmp_path / "not_an_edition").mkdir()
    (tmp_path / "corrupt.zip").write_bytes(b"PK\x03\x04 not really a zip")
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"softmax": 3, "add": 1}))
    paths = [str(good), str(tmp_path / "missing"), str(tmp_path / "not_an_edition"), str(tmp_path / "corrupt.zip")]
    assert main(["grade", *paths, "--points", str(points), "--json", str(tmp_path / "g.json"),
                 "--csv", str(tmp_path / "g.csv"), *sandbox_flags()]) == 0
    first, note, *out = capsys.readouterr().out.splitlines()
    assert note == f"grading the ops of {points}: softmax, add"
    seed = int(first.split("seed ")[1].split()[0])
    assert first.startswith("grading 4 submissions: cases drawn with seed ") and f"--seed {seed}" in first
    assert out[0] == f"{good}: 4/4"
    assert out[1] == f"{tmp_path / 'missing'}: not graded: no such file or folder: {tmp_path / 'missing'}"
    assert out[2].startswith(f"{tmp_path / 'not_an_edition'}: not graded: ") and "no tinytransformer/ops/" in out[2]
    assert out[3].startswith(f"{tmp_path / 'corrupt.zip'}: not graded: ") and len(out) == 4
    written = json.loads((tmp_path / "g.json").read_text())
    assert written["seed"] == seed and written["sandbox"] in ("bubblewrap", "user", "none")
    result = written["submissions"]
    assert [s["score"] for s in result] == [4, 0, 0, 0] and result[0]["ops"]["softmax"]["status"] == "pass"
    rows = (tmp_path / "g.csv").read_text().splitlines()
    assert rows[:2] == ["student,path,score,max_score,softmax,add,review,diagnosis", f"good,{good},4,4,pass,pass,,"]
    assert rows[2].startswith(f"missing,{tmp_path / 'missing'},0,4,error,error,,no such file or folder")
    assert rows[4].startswith(f"corrupt,{tmp_path / 'corrupt.zip'},0,4,")


def test_bad_points_are_one_line(tmp_path, capsys):
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"softmaks": 1}))
    assert main(["grade", str(tmp_path), "--points", str(points)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no op named softmaks" in err


@pytest.mark.parametrize("text, message", [
    ('{"add": NaN}', "NaN is not a number JSON allows"),
    ('{"add": Infinity}', "Infinity is not a number JSON allows"),
    ('{"add": true}', "points must be finite numbers >= 0 (add: true)"),
    ('{"add": 1e999}', "points must be finite numbers >= 0 (add: Infinity)"),
    ('{"add": 1' + "0" * 400 + '}', "points must be finite numbers >= 0 (add: 1000"),
    ('{"add": 1e308, "sub": 1e308}', "the points add up to inf: give a finite total"),
    ("[" * 100_000, "could not read it"),
], ids=["NaN", "Infinity", "true", "1e999", "a 400-digit int", "an infinite total", "nested"])
def test_points_that_are_not_finite_numbers_are_one_line(tmp_path, capsys, text, message):
    points = tmp_path / "points.json"
    points.write_text(text)
    assert main(["grade", str(tmp_path), "--points", str(points)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_points_that_are_a_fifo_are_refused_unread(tmp_path, capsys):
    os.mkfifo(tmp_path / "points.json")
    assert main(["grade", str(tmp_path), "--points", str(tmp_path / "points.json")]) == 2
    assert "points.json is a FIFO, not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("flag, name, content, message", [
    ("--csv", "roster.csv", "name,email\nalice,a@school\n", "the file exists and was not written by tinytransformer"),
    ("--json", "notes.json", '{"mine": 1}', "the file exists and was not written by tinytransformer"),
    ("--csv", "grades.txt", None, "expected a name ending in .csv"),
    ("--json", "nowhere/g.json", None, "does not exist"),
    ("--json", "points.json", None, "the same file as --points"),
])
def test_an_output_that_would_destroy_a_file_is_refused_before_grading(tmp_path, capsys, flag, name, content,
                                                                        message):
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"add": 1}))
    target = tmp_path / name
    if content is not None:
        target.write_text(content)
    assert main(["grade", str(tmp_path / "missing"), "--points", str(points), flag, str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    if content is not None:
        assert target.read_text() == content                        # the instructor's file untouched


def test_grade_replaces_its_own_outputs_and_others_with_force(tmp_path, capsys):
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"add": 1}))
    csv_path, roster = tmp_path / "g.csv", tmp_path / "roster.csv"
    for _ in range(2):                                               # a second run replaces its own file
        assert main(["grade", str(tmp_path / "missing"), "--points", str(points), "--csv", str(csv_path),
                     *sandbox_flags()]) == 0
    roster.write_text("name\nalice\n")
    assert main(["grade", str(tmp_path / "missing"), "--points", str(points), "--csv", str(roster), "--force",
                 *sandbox_flags()]) == 0
    assert roster.read_text().startswith("student,path,score,max_score")


# A hostile class through the command line: each submission graded as it deserves, the rest of the class graded.

CLASS_POINTS = {"add": 1, "softmax": 1, "attention": 1, "linear": 1}
SOFTMAX_STUB = '''def softmax_backward(dout, cache):
    out, axis = cache
    raise NotImplementedError("write softmax_backward")
'''
SOFTMAX_WRONG = "def softmax_backward(dout, cache):\n    out, axis = cache\n    return (out * dout,)\n"
LINEAR_NO_TRANSPOSE = '''def linear_backward(dout, cache):
    x2, W, x_shape, has_bias = cache
    dout2 = dout.reshape(-1, W.shape[1])
    return (dout2 @ W).reshape(x_shape), x2.T @ dout2, dout2.sum(axis=0) if has_bias else None
'''


def zipped(path, files, root=""):
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(root + name, text)
    return path


def appended(files, path, text):
    return {**files, path: files[path] + "\n\n" + text}


def hostile_class(tmp_path):
    """{name: path} of a class of submissions, honest and hostile, and what each deserves."""
    right, softmax_file = library_files(), FILES["softmax"]
    reference_softmax = ast.get_source_segment(right[softmax_file], next(
        n for n in ast.parse(right[softmax_file]).body if isinstance(n, ast.FunctionDef)
        and n.name == "softmax_backward"))
    submissions = {
        "good": write(tmp_path / "good", right),
        "stub above rewrite": write(tmp_path / "stub_above", with_function(right, "softmax", SOFTMAX_STUB + "\n\n"
                                                                            + reference_softmax)),
        "wrong after right": zipped(tmp_path / "wrong_after.zip", appended(right, softmax_file, SOFTMAX_WRONG)),
        "flat .ZIP": zipped(tmp_path / "flat.ZIP", {Path(p).name: t for p, t in right.items()}),
        "nested": zipped(tmp_path / "nested.zip", right, root="alice/edition/"),
        "flagged": write(tmp_path / "flagged", with_function(right, "add", "def add_backward(dout, cache):\n"
                         "    a_shape, b_shape = cache\n    add_forward(dout, dout)\n"
                         "    return tuple(None if s is None else unbroadcast(dout, s) for s in cache)\n")),
        "no transpose": write(tmp_path / "no_transpose", with_function(right, "linear", LINEAR_NO_TRANSPOSE)),
        "cascade": write(tmp_path / "cascade", with_function(right, "softmax", SOFTMAX_WRONG)),
        "NUL byte": write(tmp_path / "nul", appended(right, softmax_file, "x = 1\x00\n")),
        "1+1+ under the limit": write(tmp_path / "deep", appended(right, softmax_file, "x = " + "1+" * 100_000 + "1")),
        "1+1+ 800 KB": write(tmp_path / "deeper", appended(right, softmax_file, "x = " + "1+" * 400_000 + "1")),
        "two editions": zipped(tmp_path / "two.zip", {**{"a/" + p: t for p, t in right.items()},
                                                      **{"b/" + p: t for p, t in right.items()}}),
        "FIFO": tmp_path / "f.zip",
        "/dev/zero": Path("/dev/zero"),
    }
    os.mkfifo(submissions["FIFO"])
    bomb = tmp_path / "bomb.zip"                       # a source file of 16 MiB of zeros, 16 kB zipped
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(FILES["softmax"], right[FILES["softmax"]])
        z.writestr(FILES["add"], bytes(2 ** 24))
    submissions["deflate bomb"] = bomb
    big = write(tmp_path / "big", right)
    with open(big / FILES["add"], "r+b") as f:
        f.truncate(400 * 2 ** 20)                      # sparse: 400 MiB claimed
    submissions["400 MB source"] = big
    bad_name = tmp_path / "bad_name.zip"
    zipped(bad_name, right)
    data = bad_name.read_bytes().replace(b"tinytransformer/ops/basic.py", b"tinytransformer/ops/\xffasic.py")
    bad_name.write_bytes(data.replace(b"\x14\x00\x00\x00", b"\x14\x00\x00\x08"))   # flag: names are UTF-8
    submissions["name not UTF-8"] = bad_name
    return submissions


@pytest.mark.slow
def test_a_hostile_class_is_graded_each_as_it_deserves_and_every_output_complete(tmp_path, capsys):
    submissions = hostile_class(tmp_path)
    points = tmp_path / "points.json"
    points.write_text(json.dumps(CLASS_POINTS))
    assert main(["grade", *map(str, submissions.values()), "--points", str(points), "--jobs", "2",
                 "--json", str(tmp_path / "g.json"), "--csv", str(tmp_path / "g.csv")]) == 0
    out = capsys.readouterr().out
    graded = dict(zip(submissions, json.loads((tmp_path / "g.json").read_text())["submissions"]))
    assert len(graded) == len(submissions) and len((tmp_path / "g.csv").read_text().splitlines()) == 1 + len(graded)
    scores = {name: g["score"] for name, g in graded.items()}
    problems = {name: g.get("problem", "") for name, g in graded.items()}
    status = {name: {op: r["status"] for op, r in g["ops"].items()} for name, g in graded.items()}
    for name in ("good", "stub above rewrite", "flat .ZIP", "nested", "flagged"):
        assert scores[name] == 4, (name, graded[name])
    assert "graded is the one the name holds" in graded["stub above rewrite"]["ops"]["softmax"]["diagnosis"]
    assert status["wrong after right"]["softmax"] == "fail" and "defined 2 times" in \
        graded["wrong after right"]["ops"]["softmax"]["diagnosis"]
    assert graded["flagged"]["ops"]["add"]["review"] == "calls add_forward" and "for review: calls add_forward" in out
    assert "did you forget a transpose? (dx must be (2, 3, 5)" in graded["no transpose"]["ops"]["linear"]["diagnosis"]
    cascade = graded["cascade"]["ops"]
    assert cascade["softmax"]["status"] == "fail" and cascade["attention"]["diagnosis"].startswith(
        "fix softmax first: attention's backward calls softmax_backward")
    for name in ("NUL byte", "1+1+ under the limit"):          # the file's op is an error, the others graded
        assert status[name]["softmax"] == "error" and scores[name] == 2, name
        assert graded[name]["ops"]["attention"]["diagnosis"].startswith("fix softmax first")
    assert "null bytes" in graded["NUL byte"]["ops"]["softmax"]["diagnosis"]
    assert "RecursionError" in graded["1+1+ under the limit"]["ops"]["softmax"]["diagnosis"]
    deeper = appended(library_files(), FILES["softmax"], "x = " + "1+" * 400_000 + "1")[FILES["softmax"]]
    expected = {"1+1+ 800 KB": f"softmax.py is {len(deeper.encode())} bytes", "FIFO": "is a FIFO", "/dev/zero": "is a device",
                "two editions": "two editions in one submission: a/tinytransformer/ and b/tinytransformer/",
                "deflate bomb": "over 256 KiB uncompressed", "400 MB source": "is 419430400 bytes",
                "name not UTF-8": "UnicodeDecodeError"}
    for name, said in expected.items():
        assert scores[name] == 0 and said in problems[name], (name, problems[name])
        assert f"{submissions[name]}: not graded: " in out


def test_a_source_not_in_utf8_is_its_files_error_even_with_a_coding_line(batch, tmp_path):
    folder = write(tmp_path / "latin", library_files())
    path = folder / FILES["softmax"]
    path.write_bytes(path.read_bytes() + "\n# café\n".encode("latin-1"))
    graded = grade_submission(folder, batch, POINTS)
    assert graded.ops["softmax"].status == "error" and "is not text Python can read (byte" in \
        graded.ops["softmax"].diagnosis and graded.ops["add"].status == "pass"
    path.write_bytes(b"# -*- coding: latin-1 -*-\n" + path.read_bytes())      # refused before decoding
    graded = grade_submission(folder, batch, {"softmax": 1})
    assert graded.score == 0 and "declares its encoding as latin-1 (line 1)" in graded.ops["softmax"].diagnosis


def test_macos_copies_in_a_zip_are_not_a_second_edition(batch, tmp_path):
    files = library_files()
    archive = zipped(tmp_path / "mac.zip", {**{"edition/" + p: t for p, t in files.items()},
                                            **{"__MACOSX/edition/" + p: "\x00\x05" for p in files}})
    assert grade_submission(archive, batch, {"softmax": 1}).score == 1


def test_gradescope_feedback_shows_the_review(tmp_path):
    from tinytransformer.course.autograder import gradescope_results
    from tinytransformer.course.submission import Graded, OpResult
    graded = Graded("a", 1.0, 1.0, {"add": OpResult("pass", 1e-10, "", "calls add_forward")})
    output = gradescope_results(graded, {"add": 1.0}, seed=7)["tests"][0]["output"]
    assert output == "pass\nflagged for an instructor's review: calls add_forward"


# The week's points: assignment writes DIR.points.json beside DIR; grade, run in that folder, grades its ops

def test_the_weekly_flow_grades_the_weeks_ops_and_says_so(tmp_path, capsys, monkeypatch):
    """assignment week3 --ops ... then grade in the same folder without --points: a blank week-3 edition gets 0/3
    (graded on every op it would get the library's 22 of 25 others)."""
    monkeypatch.chdir(tmp_path)
    assert main(["assignment", "week3", "--ops", "softmax,log_softmax,cross_entropy"]) == 0
    assert json.loads((tmp_path / "week3.points.json").read_text()) == {"softmax": 1, "log_softmax": 1,
                                                                         "cross_entropy": 1}
    assert not list((tmp_path / "week3").rglob("*.points.json"))          # instructor-side: never in the edition
    capsys.readouterr()
    assert main(["grade", "week3", "--json", "grades.json", "--csv", "grades.csv"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("grading 1 submission: cases drawn with seed ") and out[2] == "week3: 0/3"
    assert out[1] == ("grading the ops of week3.points.json (this folder's points file; --points to choose "
                      "another): softmax, log_softmax, cross_entropy")
    assert json.loads((tmp_path / "grades.json").read_text())["submissions"][0]["max_score"] == 3


def test_several_points_files_are_refused_and_none_grades_every_op(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "good", library_files())
    for name in ("week3", "week4"):
        (tmp_path / f"{name}.points.json").write_text('{"softmax": 1}')
    assert main(["grade", "good"]) == 2
    err = capsys.readouterr().err
    assert err == ("python -m tinytransformer grade: this folder holds several points files (week3.points.json, "
                   "week4.points.json): name the week's with --points FILE\n")
    assert main(["grade", "good", "--points", "week4.points.json"]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "good: 1/1"
    for name in ("week3", "week4"):
        (tmp_path / f"{name}.points.json").unlink()
    assert main(["grade", "good"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("grading every op, 1 point each (no --points, and no *.points.json in this folder): "
                             "add, sub, ") and out[2] == f"good: {len(OPS)}/{len(OPS)}"
