"""The README's commands: the line inside the ```bash fence that follows a marker such as
`<!-- test-command -->`. The one reader of them, for the book's start page and for CI:

    python3 docs/_ext/readme_command.py test-command     # prints the command

Plain Python, no dependencies: CI calls it before any environment exists.
"""
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
MARKERS = ("main-command", "test-command", "book-command")


def readme_command(marker, readme=README):
    """The one-line command under `<!-- marker -->` in the README; ValueError if it is not there."""
    lines = Path(readme).read_text().splitlines()
    tag = f"<!-- {marker} -->"
    if tag not in lines:
        raise ValueError(f"{readme}: no line {tag} (expected one of: {', '.join(MARKERS)})")
    start = lines.index(tag)
    block = lines[start + 1:start + 4]
    if len(block) < 3 or block[0] != "```bash" or not block[1].strip() or block[2] != "```":
        raise ValueError(f"{readme}: {tag} must be followed by a ```bash fence holding one command line")
    return block[1]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python3 {sys.argv[0]} MARKER   (one of: {', '.join(MARKERS)})")
    try:
        print(readme_command(sys.argv[1]))
    except ValueError as error:
        sys.exit(f"readme_command: {error}")
