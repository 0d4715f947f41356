"""Search results with a summary, from the files as from a server.

Sphinx's search page fetches each result's page for its summary (html_show_search_summary),
which a browser refuses for a page opened from the files. Instead the build writes the text of
every page into one script, _static/page_text.js, and the search page loads it with
_static/search_context.js, which puts under each result the words around the query in that page.
"""
import json
from pathlib import Path

from docutils import nodes

DATA = "page_text.js"


def page_text(doctree):
    """The words a reader sees on the page, whitespace collapsed (raw HTML and comments left out)."""
    shown = (node.astext() for node in doctree.findall(nodes.Text)
             if not isinstance(node.parent, (nodes.raw, nodes.comment)))
    return " ".join(" ".join(shown).split())


def write_page_text(app):
    """html-collect-pages (before the search page is written): PAGE_TEXT = {docname: its text}, as a script."""
    texts = {docname: page_text(app.env.get_doctree(docname)) for docname in sorted(app.env.found_docs)}
    path = Path(app.outdir) / "_static" / DATA
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"const PAGE_TEXT = {json.dumps(texts, ensure_ascii=False)};\n")
    return []


def add_search_scripts(app, pagename, templatename, context, doctree):
    """html-page-context: the search page, and no other, loads the pages' text and the script that shows it."""
    if pagename == "search":
        app.add_js_file(DATA)
        app.add_js_file("search_context.js")
