"""Re-run every numbered case of the careless user (tests/test_nothing_lost*.py, one or more tests per case,
named test_case_<N>_...; the cases are the numbers the files name) and print one line per case and
"N cases tried (T tests), M failed", and for the cases whose file says what they were before their fix
(a KINDS dict: {N: "data loss" | "hangs" | "tracebacks" | "silent"}) the failures by kind. Exit status 1 if
any failed. Some cases need root (a small tmpfs, permissions without root's override): as another user those
tests are skipped and not counted.

    python tests/careless_user.py
"""
import ast
import glob
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = sorted(glob.glob(os.path.join(HERE, "test_nothing_lost*.py")))


def cases():
    """The case numbers the test files define a test for (def test_case_<N>_...), in order."""
    found = set()
    for path in TESTS:
        with open(path, encoding="utf-8") as f:
            found |= {int(n) for n in re.findall(r"^def test_case_(\d+)_", f.read(), flags=re.MULTILINE)}
    return sorted(found)


def kinds():
    """{case: kind} from each file's KINDS assignment (what the case was before its fix)."""
    found = {}
    for path in TESTS:
        with open(path, encoding="utf-8") as f:
            for node in ast.parse(f.read()).body:
                if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["KINDS"]:
                    found.update(ast.literal_eval(node.value))
    return found


class Outcomes:
    """A pytest plugin: {case number: [(test id, passed)]}, from each test's call (or failed setup)."""

    def __init__(self):
        self.by_case = {}

    def pytest_runtest_logreport(self, report):
        number = re.search(r"::test_case_(\d+)_", report.nodeid)
        if number and (report.when == "call" or report.failed):
            self.by_case.setdefault(int(number.group(1)), []).append((report.nodeid, report.passed))


def main():
    outcomes = Outcomes()
    pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", "-o", "console_output_style=classic",
                 *TESTS], plugins=[outcomes])
    failed, numbers = [], cases()
    print()
    for case in numbers:
        runs = outcomes.by_case.get(case, [])
        ok = bool(runs) and all(passed for _, passed in runs)
        failed += [] if ok else [case]
        state = "ok" if ok else "NOT TRIED" if not runs else "FAILED"
        print(f"case {case:2d}: {state:9s} ({sum(p for _, p in runs)} of {len(runs)} tests pass)")
    tests = sum(len(runs) for runs in outcomes.by_case.values())
    print(f"{len(numbers)} cases tried ({tests} tests), {len(failed)} failed" + (f": cases {failed}" if failed else ""))
    by_kind = kinds()
    for kind in ("data loss", "hangs", "tracebacks", "silent"):
        mine = [case for case in numbers if by_kind.get(case) == kind]
        print(f"{kind}: {len(mine)} cases, {sum(case in failed for case in mine)} failing")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
