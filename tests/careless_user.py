"""Re-run every numbered case of the careless user (tests/test_nothing_lost.py, one or more tests per case,
named test_case_<N>_...; the cases are the numbers the file names) and print one line per case and
"N cases tried (T tests), M failed". Exit status 1 if any failed. Some cases need root (a small tmpfs,
permissions without root's override): as another user those tests are skipped and not counted.

    python tests/careless_user.py
"""
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "test_nothing_lost.py")


def cases():
    """The case numbers the test file defines a test for (def test_case_<N>_...), in order."""
    with open(TESTS, encoding="utf-8") as f:
        return sorted({int(n) for n in re.findall(r"^def test_case_(\d+)_", f.read(), flags=re.MULTILINE)})


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
                 TESTS], plugins=[outcomes])
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
