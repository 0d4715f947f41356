"""The class's CSV as a gradebook reads it: a student column to match on, and each distinct diagnosis once."""
import csv
import io

from tinytransformer.cli import grade
from tinytransformer.course.submission import Graded, OpResult

OPS = ["add", "exp", "softmax", "gelu"]
METADATA = """\
---
submission_101:
  :submitters:
  - :name: Alice Smith
    :sid: '4711'
    :email: alice@school.edu
  :created_at: 2026-11-28 10:00:00 +0000
  :score: 3.0
submission_102:
  :submitters:
  - :name: Bob Jones
    :sid: '4712'
  :created_at: 2026-11-28 11:00:00 +0000
"""


def rows(graded):
    return list(csv.DictReader(io.StringIO(grade.as_csv(graded, OPS))))


def graded(path, **statuses):
    ops = {op: OpResult(statuses.get(op, "not written"), None, "" if op in statuses else "not written") for op in OPS}
    return Graded(str(path), float(len(statuses)), float(len(OPS)), ops)


def test_folders_and_zips_are_named_by_their_name(tmp_path):
    found = rows([graded(tmp_path / "alice", add="pass"), graded(tmp_path / "bob.zip"), graded(tmp_path / "c.ZIP")])
    assert [r["student"] for r in found] == ["alice", "bob", "c"]
    assert list(found[0])[:4] == ["student", "path", "score", "max_score"]


def test_a_gradescope_export_is_named_by_email_else_sid(tmp_path):
    grade.gradescope_export.cache_clear()
    (tmp_path / "submission_metadata.yml").write_text(METADATA)
    found = rows([graded(tmp_path / "submission_101"), graded(tmp_path / "submission_102"),
                  graded(tmp_path / "submission_103")])
    assert [r["student"] for r in found] == ["alice@school.edu", "4712", "submission_103"]


def test_a_diagnosis_shared_by_ops_is_written_once():
    """A blank submission's row once said "not written" for every op, one after another."""
    row = rows([graded("carol", add="pass")])[0]
    assert row["diagnosis"] == "not written: exp, softmax, gelu"
    mixed = Graded("dan", 0.0, 4.0, {"add": OpResult("fail", 1.0, "dx: wrong sign"),
                                     "exp": OpResult("fail", 1.0, "dx: wrong sign"),
                                     "softmax": OpResult("error", None, "raised ValueError"),
                                     "gelu": OpResult("not written", None, "not written")})
    assert rows([mixed])[0]["diagnosis"] == "not written: gelu; add, exp: dx: wrong sign; softmax: raised ValueError"


def test_a_csv_grade_wrote_before_the_student_column_is_still_its_own(tmp_path):
    old, new, roster = tmp_path / "old.csv", tmp_path / "new.csv", tmp_path / "roster.csv"
    old.write_text("path,score,max_score,add,review,diagnosis\n")
    new.write_text(grade.as_csv([graded("x")], OPS))
    roster.write_text("student,email\n")
    assert grade.is_class_csv(old) and grade.is_class_csv(new) and not grade.is_class_csv(roster)
