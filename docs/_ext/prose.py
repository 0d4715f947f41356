"""Comments and docstrings as prose: plain text, never parsed as markup.

The package's comments hold formulas in plain text (`dy_i/dx_j = y_i (delta_ij - y_j)`,
`x * y`), which reStructuredText or Markdown would misread as emphasis or links.
So the rules are few: blank lines separate paragraphs, indented lines keep their
lines (a code example, or a derivation written one step a line), lines starting
"- " are a list, and `backticks` mark inline code.
"""
import re

from docutils import nodes

_CODE_SPAN = re.compile(r"`([^`]+)`")


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


def _pieces(text):
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


def inline_nodes(text):
    """Text with `code spans` as literal nodes."""
    parts = _CODE_SPAN.split(text)
    return [nodes.literal(part, part) if odd else nodes.Text(part)
            for odd, part in ((i % 2 == 1, part) for i, part in enumerate(parts)) if part]


def prose_nodes(text):
    """Docutils nodes for a comment or docstring."""
    result = []
    for kind, lines in _pieces(text):
        if kind == "example":
            code = "\n".join(lines)
            example = nodes.literal_block(code, code, language="python")
            example["highlight_args"] = {"force": True}
            result.append(example)
        elif kind == "list":
            bullets = nodes.bullet_list()
            for item in _list_items(lines):
                bullets += nodes.list_item("", nodes.paragraph("", "", *inline_nodes(item)))
            result.append(bullets)
        else:
            joined = " ".join(line.strip() for line in lines)
            result.append(nodes.paragraph("", "", *inline_nodes(joined)))
    return result


_RST_SPECIAL = re.compile(r"([\\*|_`\[\]<>:])")


def _escape(text):
    """reStructuredText that shows text as written, `code spans` as inline literals."""
    parts = _CODE_SPAN.split(text)
    return "".join(f"``{part}``" if i % 2 else _RST_SPECIAL.sub(r"\\\1", part)
                   for i, part in enumerate(parts))


def rst_safe_docstring(lines):
    """A docstring's lines (as autodoc hands them over) rewritten as reStructuredText that
    renders them the way prose_nodes does."""
    out = []
    for kind, piece in _pieces("\n".join(lines)):
        if kind == "example":
            out += ["::", ""] + ["    " + line for line in piece]
        elif kind == "list":
            out += ["- " + _escape(item) for item in _list_items(piece)]
        else:
            out.append(" ".join(_escape(line.strip()) for line in piece))
        out.append("")
    return out
