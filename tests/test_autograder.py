"""The Gradescope autograder zip, run end to end on a fake /autograder tree (AUTOGRADER_ROOT) in a fresh venv."""
import json
import os
import shutil
import subprocess
import venv
import zipfile
from pathlib import Path

import numpy as np

from tinytransformer.__main__ import main

REPO = Path(__file__).resolve().parents[1]


def test_the_autograder_installs_the_wheel_and_grades_a_submission(tmp_path, capsys):
    assert main(["assignment", str(tmp_path / "edition"), "--ops", "add,softmax", "--autograder"]) == 0
    assert "wrote the Gradescope autograder" in capsys.readouterr().out
    root = tmp_path / "autograder"
    with zipfile.ZipFile(tmp_path / "edition-autograder.zip") as z:
        z.extractall(root / "source")
        assert sorted(n for n in z.namelist() if not n.endswith(".whl")) == ["points.json", "run_autograder", "setup.sh"]
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)                 # extractall drops the mode the zip records
    # A student: add written (the library's basic.py), softmax still blank; the edition uploaded as a zip.
    shutil.copy(REPO / "tinytransformer/ops/basic.py", tmp_path / "edition/tinytransformer/ops/basic.py")
    (root / "submission").mkdir()
    with zipfile.ZipFile(root / "submission" / "my_edition.zip", "w") as z:
        for path in (tmp_path / "edition").rglob("*.py"):
            z.write(path, path.relative_to(tmp_path / "edition"))
    # A fresh Python whose NumPy is this one's (nothing fetched) and which has no tinytransformer.
    venv.create(tmp_path / "venv", with_pip=True)
    site = next((tmp_path / "venv" / "lib").glob("python*/site-packages"))
    (site / "numpy_from_the_test.pth").write_text(str(Path(np.__file__).resolve().parents[1]) + "\n")
    env = {"PATH": f"{tmp_path / 'venv' / 'bin'}:{os.defpath}", "AUTOGRADER_ROOT": str(root), "HOME": str(tmp_path),
           "PIP_NO_INDEX": "1"}
    for script in ("setup.sh", "run_autograder"):
        done = subprocess.run([str(root / "source" / script)], env=env, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 1
    assert {t["name"]: (t["score"], t["max_score"]) for t in results["tests"]} == {"add": (1, 1), "softmax": (0, 1)}
    softmax = next(t for t in results["tests"] if t["name"] == "softmax")
    assert softmax["output"].startswith("not written") and softmax["visibility"] == "visible"
    installed = subprocess.run(["python3", "-I", "-c", "import tinytransformer; print(tinytransformer.__file__)"],
                               env=env, cwd=REPO, capture_output=True, text=True)
    assert installed.stdout.startswith(str(site))             # the wheel's copy grades, even run from a checkout
