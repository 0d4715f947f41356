"""Comments and docstrings as prose: plain text, never read as markup.

The package's comments hold formulas in plain text (`dy_i/dx_j = y_i (delta_ij - y_j)`,
`x * y`), which reStructuredText or Markdown would misread as emphasis or links.
So the rules are few: blank lines separate paragraphs, indented lines keep their
lines (a code example, or a derivation written one step a line), lines starting
"- " are a list, and `backticks` mark inline code. as_rst writes that as
reStructuredText, for the annotated-source pages and autodoc's API pages alike.
"""
import ast
import re

_CODE_SPAN = re.compile(r"`([^`]+)`")
_RST_SPECIAL = re.compile(r"([\\*|_`\[\]<>:])")
_MARKUP_START = set("-+=#.(~^'\"0123456789")


def _paragraphs(text):
    block = []
    for line in text.splitlines():
        if line.strip():
            block.append(line.rstrip())
        elif block:
            yield block
            block = []
    if block:
        yield block


def _is_indented(line):
    return line.startswith((" ", "\t"))


def pieces(text):
    """(kind, lines) for each piece of the text: "example" for a run of indented lines
    (dedented), "list" for a paragraph of "- " items, "text" for the rest."""
    for block in _paragraphs(text):
        if block[0].lstrip().startswith("- "):
            yield "list", block
            continue
        run = [block[0]]
        for line in block[1:]:
            if _is_indented(line) == _is_indented(run[-1]):
                run.append(line)
            else:
                yield _run(run)
                run = [line]
        yield _run(run)


def _run(lines):
    if not _is_indented(lines[0]):
        return "text", lines
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    return "example", [line[indent:] for line in lines]


def _list_items(block):
    items = []
    for line in block:
        if line.lstrip().startswith("- "):
            items.append(line.lstrip()[2:])
        else:
            items[-1] += " " + line.strip()
    return items


def _escape(text):
    """reStructuredText that shows text as written, `code spans` as inline literals (and a
    first character that would start a list, a heading or a comment, escaped)."""
    parts = _CODE_SPAN.split(text)
    rst = "".join(f"``{part}``" if i % 2 else _RST_SPECIAL.sub(r"\\\1", part)
                  for i, part in enumerate(parts))
    return "\\" + rst if rst[:1] in _MARKUP_START else rst


def _language(lines):
    """python for a run that is Python (a usage example, `y = x @ W + b`), else text: a
    derivation's `->` or a map of files is not code to colour."""
    try:
        ast.parse("\n".join(lines))
    except SyntaxError:
        return "text"
    return "python"


def as_rst(lines):
    """The lines of a comment or docstring as reStructuredText lines that show them as written:
    an indented run as a literal block, one step a line."""
    out = []
    for kind, piece in pieces("\n".join(lines)):
        if kind == "example":
            out += [f".. code-block:: {_language(piece)}", ""] + ["    " + line for line in piece]
        elif kind == "list":
            out += ["- " + _escape(item) for item in _list_items(piece)]
        else:
            out.append(_escape(" ".join(line.strip() for line in piece)))
        out.append("")
    return out
