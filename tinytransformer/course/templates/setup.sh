#!/usr/bin/env bash
# Gradescope runs this once, as root, when the autograder is uploaded. It installs the instructor's
# tinytransformer (the wheel in this zip) with its grading extra in a virtual environment, $ROOT/venv: Pythons
# that refuse system-wide installs ("externally managed": Debian 12, Ubuntu 23.04 and later) work the same.
# NumPy already installed on the system is used (--system-site-packages); what is missing comes from PyPI.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
VENV="$ROOT/venv"
if ! python3 -m venv --system-site-packages "$VENV"; then
    # Debian and Ubuntu ship venv's pip apart, in python3-venv
    echo "setup.sh: python3 -m venv failed; installing python3-venv with apt-get" >&2
    rm -rf "$VENV"
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null
    fi
    python3 -m venv --system-site-packages "$VENV"
fi
wheel=$(ls "$ROOT"/source/tinytransformer-*.whl)
"$VENV/bin/python" -m pip install --quiet "numpy>=1.26"
"$VENV/bin/python" -m pip install --quiet "$wheel[grading]"
# Student code runs as an unprivileged user (the grader's sandbox): it may read Python and NumPy, but not the
# instructor's files: this zip (the wheel, the points) and the installed library (every backward pass).
chmod 755 "$ROOT"
chmod -R a+rX "$VENV"
chmod -R go-rwx "$ROOT/source" "$VENV"/lib/python3*/site-packages/tinytransformer
