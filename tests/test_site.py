"""The book (docs/): build the site, then open every page in headless Chromium.

Every page must load without a console error, fetch nothing from outside the
site, show every image, render its math, link only to pages and anchors that
exist, cut off no code at 1280 pixels, and keep a docstring's formulas one step a
line; the notebooks' collapsed cells (solutions) must be collapsed and open on a click.
Skipped when the docs tools (pip install -e ".[docs]") or Debian's chromium are
missing. Every page is opened twice: served from 127.0.0.1, as a static host
would, and straight from the files, as a reader who built it would.
"""
import ast
import functools
import http.server
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

from annotate import annotate, docstring  # noqa: E402  (pure Python, no docs tools needed)
from files import defined_names, public_definitions  # noqa: E402
from prose import as_rst, pieces  # noqa: E402
from readme_command import MARKERS, readme_command  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 800}      # a laptop, or a classroom projector
DOCS_TOOLS = ("sphinx", "myst_nb", "furo", "sphinx_codeautolink", "sphinx-mathjax-offline", "playwright")
WORKED_EXAMPLE = ("1.9366", "6.6831", "1.5951")
NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9][0-9]_*.ipynb"))
SOURCES = sorted(p for p in (ROOT / "tinytransformer").rglob("*.py") if "__pycache__" not in p.parts)

needs_browser = pytest.mark.skipif(
    CHROMIUM is None or any(importlib.util.find_spec(tool) is None for tool in DOCS_TOOLS),
    reason='needs the docs tools (pip install -e ".[docs]") and Debian\'s chromium')


# ---- the splitter behind the annotated-source pages (no browser needed) ---------------

def test_annotate_sets_comments_and_docstrings_beside_their_code():
    source = '''"""The module."""
import numpy as np


# Prose about f.
def f(x):
    """Docstring of f."""
    y = x + 1      # (B, T)
    # Why the return.
    return y
'''
    intro, sections = annotate(source)
    assert intro == "The module."
    assert [s.anchor for s in sections] == [None, "f", None]
    imports, f, tail = sections
    assert imports.prose == [] and imports.code == ["import numpy as np"]
    assert f.prose == ["Prose about f.", "", "Docstring of f."]
    assert f.code == ["def f(x):", "    y = x + 1      # (B, T)"]
    assert f.first_line == 6
    assert tail.prose == ["Why the return."] and tail.code == ["    return y"]
    assert tail.first_line == 10


def test_annotate_anchors_methods_by_qualified_name():
    _, sections = annotate("class A:\n    @staticmethod\n    def g():\n        return 1\n")
    assert [s.anchor for s in sections] == ["A", "A.g"]
    assert sections[1].code[0] == "    @staticmethod"


def test_annotate_groups_a_run_of_short_defs_into_one_row():
    source = ("class T:\n"
              "    def __add__(self, o): return add(self, o)\n"
              "    def __radd__(self, o): return add(o, self)\n"
              "    # Why sub is here.\n"
              "    def __sub__(self, o): return sub(self, o)\n"
              "    def __rsub__(self, o):\n        return sub(o, self)\n"
              "    def __mul__(self, o): return mul(self, o)\n"
              "    def long(self):\n        a = 1\n        return a\n"
              "\n\ndef add(a, b):\n    return a\n")
    _, sections = annotate(source)
    # one row for __add__ and __radd__; the comment starts a row of its own, which no def joins (its prose is
    # about __sub__); a def of two lines and a one-line def group; a three-line def is alone; a module function
    # does not join a class's methods
    assert [s.anchors() for s in sections] == [["T"], ["T.__add__", "T.__radd__"], ["T.__sub__"],
                                               ["T.__rsub__", "T.__mul__"], ["T.long"], ["add"]]
    assert sections[1].code == ["    def __add__(self, o): return add(self, o)",
                                "    def __radd__(self, o): return add(o, self)"]
    assert sections[2].prose == ["Why sub is here."]


def test_a_docstring_keeps_the_indentation_of_its_formulas():
    # every line after the first indented: inspect.cleandoc (and autodoc) would flatten them
    module = ast.parse('"""Layer norm.\n\n    xhat = (x - mean) / std\n    y    = gamma * xhat\n"""\n')
    assert docstring(module) == "Layer norm.\n\n    xhat = (x - mean) / std\n    y    = gamma * xhat"
    method = ast.parse('class A:\n    def f(self):\n        """Step.\n\n            w = w - lr * g\n        """\n').body[0].body[0]
    assert docstring(method) == "Step.\n\n    w = w - lr * g"
    assert annotate('"""Intro.\n\n    a = 1\n"""\nx = 1\n')[0] == "Intro.\n\n    a = 1"


def test_prose_keeps_a_derivation_one_step_a_line():
    lines = ["Backward, with A = probs:", "  out = A @ v  ->  dv = A.T @ dout", "  A = softmax(S)",
             "(.T swaps axes.) Uses `x * y`."]
    assert [kind for kind, _ in pieces("\n".join(lines))] == ["text", "example", "text"]
    # reStructuredText, for the annotated pages and autodoc alike: the steps a literal block,
    # * and _ shown as written, a leading ( or - never read as markup
    assert as_rst(lines) == ["Backward, with A = probs\\:", "", ".. code-block:: text", "",
                             "    out = A @ v  ->  dv = A.T @ dout", "    A = softmax(S)", "",
                             "\\(.T swaps axes.) Uses ``x * y``.", ""]
    # a run that is Python is coloured as Python
    assert as_rst(["Use it:", "    y = F.linear(x, W)"])[2] == ".. code-block:: python"
    assert as_rst(["y_i = x_i * 2"]) == ["y\\_i = x\\_i \\* 2", ""]
    assert as_rst(["- one", "- two `a_b`"]) == ["- one", "- two ``a_b``", ""]
    assert as_rst(["-----"]) == ["\\-----", ""]


def test_readme_commands_are_read_by_one_reader(tmp_path):
    for marker in MARKERS:
        command = readme_command(marker)
        assert command.startswith("python3 -m venv .venv && ") and "\n" not in command
    readme = tmp_path / "README.md"
    readme.write_text("<!-- test-command -->\n```bash\npytest -q\n```\n<!-- book-command -->\nno fence\n")
    assert readme_command("test-command", readme) == "pytest -q"
    with pytest.raises(ValueError, match="must be followed by a ```bash fence"):
        readme_command("book-command", readme)
    with pytest.raises(ValueError, match="no line <!-- main-command -->"):
        readme_command("main-command", readme)
    # CI reads them with the same file, run as a script
    run = subprocess.run([sys.executable, str(ROOT / "docs/_ext/readme_command.py"), "test-command"],
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == readme_command("test-command")
    assert "docs/_ext/readme_command.py test-command" in (ROOT / ".ci/run").read_text()


def test_notebook_reader_collapses_what_jupyter_collapses():
    pytest.importorskip("sphinx")
    nbformat = pytest.importorskip("nbformat")
    from book import read_notebook
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("answer = 42\ncheck_exercise_2(answer)",
                                  metadata={"tags": ["solution"], "jupyter": {"source_hidden": True}}),
        nbformat.v4.new_code_cell("shown = 1"),
        nbformat.v4.new_code_cell("quiet = 2", metadata={"jupyter": {"outputs_hidden": True}})])
    cells = read_notebook(nbformat.writes(notebook)).cells
    assert [cell.metadata.get("tags") for cell in cells] == [["solution", "hide-cell"], [], ["hide-output"]]
    assert cells[0].metadata["mystnb"]["code_prompt_show"] == "Solution to exercise 2"


def test_the_course_documents_are_cited_where_the_notebooks_name_them():
    pytest.importorskip("sphinx")
    from book import cite_course_documents
    cited = cite_course_documents("One course document, the lecture slides, says so; the lecture slides again. "
                                  "`lecture slides` in code, and the Borealis AI tutorial.")
    assert cited.count("](../references.md#lecture-slides)") == 1 and "`lecture slides`" in cited
    assert "[Borealis AI tutorial](../references.md#tutorial)" in cited
    headings = (ROOT / "docs" / "references.md").read_text()
    for title in ("## Course notes", "## Tutorial", "## Notes with PyTorch snippets", "## Lecture slides",
                  "## Worked example"):
        assert title in headings


# ---- serving the site and visiting every page ------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serve():
    """serve(folder) -> base URL of a static server on 127.0.0.1 for that folder."""
    servers = []

    def start(folder):
        handler = functools.partial(_QuietHandler, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=CHROMIUM_FLAGS, viewport=VIEWPORT)
        yield context
        context.close()


_PAGE_FACTS = """() => ({
    ids: [...document.querySelectorAll('[id], a[name]')].map(e => e.id || e.name),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    images: document.images.length,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
                                      .map(i => i.currentSrc || i.src),
    mathNodes: document.querySelectorAll('.math').length,
    unrenderedMath: [...document.querySelectorAll('.math')]
                    .filter(m => !m.querySelector('mjx-container')).map(m => m.textContent.slice(0, 80)),
    rendererOutputs: document.querySelectorAll('mjx-container').length,
    text: document.body.innerText,
    width: window.innerWidth,
    // blocks whose lines do not fit: they scroll sideways or hide their ends (the annotated source's code
    // scrolls by design, checked on its own)
    cutOff: [...document.querySelectorAll('pre')].filter(p => p.scrollWidth > p.clientWidth + 1)
            .filter(p => !p.closest('.annotated-code')).map(p => p.innerText.slice(0, 80)),
    cellCode: [...document.querySelectorAll('div.cell pre')].map(p => parseFloat(getComputedStyle(p).fontSize)),
    cellLinks: document.querySelectorAll('div.cell a.sphinx-codeautolink-a').length,
    // a solution's output is its check passing: shown on load, or kept closed under its labelled bar
    answersShown: [...document.querySelectorAll('div.cell_output')]
                  .filter(o => o.checkVisibility() && /Exercise \\d+: correct/.test(o.textContent)).length,
    answersClosed: [...document.querySelectorAll('div.cell_output')]
                   .filter(o => !o.checkVisibility() && /Exercise \\d+: correct/.test(o.textContent)).length,
    solutionBars: [...document.querySelectorAll('div.cell details > summary')]
                  .filter(s => /Solution to exercise \\d+/.test(s.textContent)).length,
    shrunkFigures: [...document.querySelectorAll('div.cell img')]
                   .filter(i => i.getBoundingClientRect().width < i.naturalWidth - 1).map(i => i.src),
    // prose set as a block (a formula one step a line), as the browser lays its lines out
    proseBlocks: [...document.querySelectorAll('article pre')]
                 .filter(p => !p.closest('.annotated-code, div.cell')).map(p => p.innerText),
    // the annotated source's blocks: derivations (prose) and code, how their lines are laid out
    annotatedBlocks: [...document.querySelectorAll('.annotated-source pre')].map(p => ({
        derivation: !!p.closest('.annotated-prose'), whiteSpace: getComputedStyle(p).whiteSpace,
        overflowX: getComputedStyle(p).overflowX, fits: p.scrollWidth <= p.clientWidth + 1,
        text: p.innerText.slice(0, 60)})),
    downloads: [...document.querySelectorAll('a.download[href]')].map(a => a.href),
    figureAlts: [...document.querySelectorAll('div.cell img')].map(i => i.alt),
})"""

_MATH_READY = """() => window.MathJax && MathJax.startup && MathJax.startup.promise
    ? MathJax.startup.promise.then(() => true) : true"""


def visit_site(context, base, pages):
    """Open each page (paths relative to base); return {page: facts} and the problems seen."""
    problems = {"console": [], "outside": [], "failed": []}
    page = context.new_page()

    def check_request(route):
        if route.request.url.startswith(base):
            route.continue_()
        else:
            problems["outside"].append((current[0], route.request.url))
            route.abort()

    current = [None]
    page.route("**/*", check_request)
    page.on("console", lambda m: m.type == "error" and problems["console"].append((current[0], m.text)))
    page.on("pageerror", lambda e: problems["console"].append((current[0], str(e))))
    page.on("requestfailed", lambda r: problems["failed"].append((current[0], r.url)))
    page.on("response", lambda r: r.status >= 400 and problems["failed"].append((current[0], r.url)))
    facts = {}
    for relative in pages:
        current[0] = relative
        page.goto(base + relative, wait_until="load")
        page.evaluate(_MATH_READY)
        page.wait_for_load_state("networkidle")
        facts[relative] = page.evaluate(_PAGE_FACTS)
    page.close()
    return facts, problems


def broken_links(facts, base, folder):
    """Links to this site whose file does not exist, or whose #anchor is on no element there."""
    broken = []
    for source, page_facts in facts.items():
        for link in page_facts["links"]:
            if not link.startswith(base):
                continue                      # a link to another site: never fetched by a page
            parts = urlsplit(link)
            target = unquote(parts.path[len(urlsplit(base).path):]) or "index.html"
            if target.endswith("/"):
                target += "index.html"
            if not (folder / target).is_file():
                broken.append((source, link))
            elif parts.fragment and target in facts and unquote(parts.fragment) not in facts[target]["ids"]:
                broken.append((source, link))
    return broken


@pytest.mark.site
@needs_browser
def test_the_checks_catch_a_bad_page(tmp_path, serve, browser):
    (tmp_path / "bad.html").write_text(
        '<html><body><p>$$x$$</p><span class="math">\\(x\\)</span>'
        '<img src="missing.png"><img src="http://192.0.2.1/outside.png">'
        '<a href="nowhere.html">x</a><a href="bad.html#no-such-id">y</a>'
        '<script>undefinedFunction()</script></body></html>')
    base = serve(tmp_path)
    facts, problems = visit_site(browser, base, ["bad.html"])
    bad = facts["bad.html"]
    assert problems["outside"] == [("bad.html", "http://192.0.2.1/outside.png")]
    assert any("undefinedFunction" in text for _, text in problems["console"])
    assert len(bad["brokenImages"]) == 2
    assert bad["unrenderedMath"] == ["\\(x\\)"] and "$$" in bad["text"]
    assert sorted(link for _, link in broken_links(facts, base, tmp_path)) == [
        base + "bad.html#no-such-id", base + "nowhere.html"]


# ---- the book itself ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One run of the book's build, from a tree without the pages it generates (as a fresh clone has none)."""
    for folder in ("notebooks", "code", "api"):
        shutil.rmtree(ROOT / "docs" / folder, ignore_errors=True)
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html",
                             "-d", str(out / ".doctrees"), "docs", str(out / "html")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out / "html", result.stderr


@pytest.fixture(scope="module", params=["served", "from files"])
def visited(request, site, serve, browser):
    """Every page, once from a static server on 127.0.0.1 and once opened as files (no server)."""
    folder, _ = site
    pages = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.html"))
    base = serve(folder) if request.param == "served" else folder.as_uri() + "/"
    facts, problems = visit_site(browser, base, pages)
    return folder, base, facts, problems


@pytest.mark.site
@needs_browser
def test_site_builds_without_warnings(site):
    _, warnings = site
    assert warnings.strip() == ""


def _code_page(source):
    return "code/" + source.relative_to(ROOT / "tinytransformer").with_suffix(".html").as_posix()


def _api_page(source):
    parts = source.relative_to(ROOT).with_suffix("").parts
    return "api/" + ".".join(parts[:-1] if parts[-1] == "__init__" else parts) + ".html"


@pytest.mark.site
@needs_browser
def test_every_notebook_and_every_source_file_has_a_page(visited):
    _, base, facts, _ = visited
    assert len(NOTEBOOKS) >= 7 and len(SOURCES) >= 10
    for notebook in NOTEBOOKS:
        assert f"notebooks/{notebook.stem}.html" in facts
    for source in SOURCES:
        page = _code_page(source)
        assert page in facts and _api_page(source) in facts
        anchors = {s.anchor for s in annotate(source.read_text())[1]} - {None}
        assert anchors <= set(facts[page]["ids"]), (page, anchors - set(facts[page]["ids"]))
    assert {"index.html", "code/index.html", "api/index.html", "search.html"} <= set(facts)
    # in the reading order of the README's map of the package ("What is inside"), and a
    # sub-package's files in the order of the map in its own docstring
    def order(folder, text):
        listed = [name for name in re.findall(r"^ +(\w+)\.py\s", text, re.MULTILINE) if (folder / f"{name}.py").is_file()]
        package = folder.relative_to(ROOT / "tinytransformer").as_posix()
        prefix = re.escape(base + "code/" + ("" if package == "." else package + "/"))
        shown = [m.group(1) for link in facts["code/index.html"]["links"] if (m := re.fullmatch(prefix + r"(\w+)\.html", link))]
        return listed, [name for name in dict.fromkeys(shown) if name in listed]

    readme_map = (ROOT / "README.md").read_text().partition("## What is inside")[2].partition("```\n\n")[0]
    listed, shown = order(ROOT / "tinytransformer", readme_map)
    assert len(listed) >= 8 and shown == listed
    for package in (ROOT / "tinytransformer").glob("*/__init__.py"):
        listed, shown = order(package.parent, docstring(ast.parse(package.read_text())) or "")
        assert shown == listed, package


@pytest.mark.site
@needs_browser
def test_no_page_has_a_console_error_or_a_failed_request(visited):
    _, _, _, problems = visited
    assert problems["console"] == []
    assert problems["failed"] == []


@pytest.mark.site
@needs_browser
def test_no_request_leaves_the_site(visited):
    _, _, _, problems = visited
    assert problems["outside"] == []


@pytest.mark.site
@needs_browser
def test_every_image_loads(visited):
    _, _, facts, _ = visited
    assert {page: f["brokenImages"] for page, f in facts.items() if f["brokenImages"]} == {}
    notebook_figures = sum(f["images"] for page, f in facts.items() if page.startswith("notebooks/"))
    assert notebook_figures >= 7


@pytest.mark.site
@needs_browser
def test_every_internal_link_resolves(visited):
    folder, base, facts, _ = visited
    assert broken_links(facts, base, folder) == []
    assert sum(len(f["links"]) for f in facts.values()) > 1000


@pytest.mark.site
@needs_browser
def test_math_is_rendered(visited):
    _, _, facts, _ = visited
    assert {page: f["unrenderedMath"] for page, f in facts.items() if f["unrenderedMath"]} == {}
    assert [page for page, f in facts.items() if "$$" in f["text"]] == []
    with_math = [page for page, f in facts.items() if f["rendererOutputs"] > 0]
    assert "notebooks/01_self_attention_by_hand.html" in with_math
    assert all(facts[page]["rendererOutputs"] >= facts[page]["mathNodes"] for page in facts)


@pytest.mark.site
@needs_browser
def test_worked_example_numbers_on_notebook_01(visited):
    _, _, facts, _ = visited
    text = facts["notebooks/01_self_attention_by_hand.html"]["text"]
    for number in WORKED_EXAMPLE:
        assert number in text


@pytest.mark.site
@needs_browser
def test_search_finds_a_function_offline(visited, browser):
    _, base, _, _ = visited
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(base + "search.html?q=layer_norm_backward", wait_until="load")
    page.wait_for_selector("#search-results li", timeout=20_000)
    page.wait_for_load_state("networkidle")
    results = page.eval_on_selector_all("#search-results li a", "links => links.map(a => a.href)")
    page.close()
    # the API entry or the annotated page of the file that defines it, wherever that is
    assert any(re.search(r"/(api|code)/[\w./]*layernorm[\w./]*\.html", link) for link in results), results
    assert errors == []


@pytest.mark.site
@needs_browser
def test_no_solution_is_visible_on_load_and_each_is_labelled(visited):
    """A solution's code and its output (the check passing) stay closed until clicked, under its exercise's name."""
    _, _, facts, _ = visited
    notebooks = {page: f for page, f in facts.items() if page.startswith("notebooks/")}
    shown = [page for page, f in notebooks.items() if f["answersShown"]]
    assert not shown, f"solution outputs visible on load: {shown}"
    assert all(f["answersClosed"] >= 1 and f["solutionBars"] >= f["answersClosed"] for f in notebooks.values())


@pytest.mark.site
@needs_browser
def test_names_in_code_cells_link_to_the_api_on_every_notebook(visited):
    """One build from a fresh tree links the names in every notebook's code cells to their API entries."""
    _, _, facts, _ = visited
    counts = {page: f["cellLinks"] for page, f in facts.items() if page.startswith("notebooks/")}
    assert len(counts) >= 14 and all(counts.values()), counts
    assert sum(counts.values()) >= 100


@pytest.mark.site
@needs_browser
def test_notebook_inline_code_links_to_the_annotated_source(visited):
    _, base, facts, _ = visited
    links = facts["notebooks/04_multi_head_attention_and_masks.html"]["links"]
    # functional and nn may each be one file or a package: the definition's own file
    for module, name in [("functional", "attention"), ("nn", "MultiHeadAttention")]:
        pattern = re.escape(base) + rf"code/{module}(/\w+)?\.html#{name}"
        assert any(re.fullmatch(pattern, link) for link in links), (module, name)


@pytest.mark.site
@needs_browser
def test_no_code_output_or_figure_is_cut_off_at_1280_pixels(visited):
    _, _, facts, _ = visited
    assert {f["width"] for f in facts.values()} == {VIEWPORT["width"]}
    assert {page: f["cutOff"] for page, f in facts.items() if f["cutOff"]} == {}
    cell_blocks = [size for page, f in facts.items() if page.startswith("notebooks/") for size in f["cellCode"]]
    assert len(cell_blocks) > 300
    # fitted by the column's width, not by shrinking the code: Furo's 13 pixels at least
    assert min(cell_blocks) >= 13
    # and the notebooks' figures (at most 8 inches at 100 dpi) at their own size, unshrunk
    assert {page: f["shrunkFigures"] for page, f in facts.items() if f["shrunkFigures"]} == {}


def _formulas(text):
    """The indented runs of a comment or docstring (a formula, one step a line), as lines."""
    return [lines for kind, lines in pieces(text) if kind == "example"]


@pytest.mark.site
@needs_browser
def test_docstring_formulas_keep_their_line_breaks(visited):
    """Each indented run of a comment or docstring shows as a block, one step a line: on the
    annotated source (every comment and docstring) and on the API page (the module's docstring
    and its public functions' and classes')."""
    _, _, facts, _ = visited
    expected = []
    for source in SOURCES:
        intro, sections = annotate(source.read_text())
        for prose in [intro] + ["\n".join(section.prose) for section in sections]:
            expected += [(_code_page(source), run) for run in _formulas(prose)]
        tree = ast.parse(source.read_text())
        public = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))
                  and not node.name.startswith("_")]
        for node in [tree] + public:
            expected += [(_api_page(source), run) for run in _formulas(docstring(node) or "")]
    missing = []
    for page, run in expected:
        shown = ["\n".join(line.rstrip() for line in block.splitlines()) for block in facts[page]["proseBlocks"]]
        if not any("\n".join(run) in block for block in shown):
            missing.append((page, run))
    assert missing == []
    pages = {page for page, _ in expected}
    # the formulas that ran together: layer norm's, SGD's update, the layers' map in nn/blocks.py
    assert {"code/ops/layernorm.html", "api/tinytransformer.ops.layernorm.html", "code/optim.html",
            "api/tinytransformer.optim.html"} <= pages and len(expected) > 30


_CELLS = """() => [...document.querySelectorAll('div.cell')].map(cell => {
    const input = cell.querySelector('.cell_input'), output = cell.querySelector('.cell_output');
    return {code: input ? input.textContent : null, codeShown: !!input && input.checkVisibility(),
            outputShown: !output || output.checkVisibility(), bar: !!cell.querySelector('details > summary')};
})"""


@pytest.mark.site
@needs_browser
def test_collapsed_cells_open_on_a_click(site, browser):
    """A solution cell is collapsed whole in the book, code and output (its output is the check passing);
    another cell Jupyter shows collapsed shows its output; a click on a bar shows what it hides. Every other
    cell shows its code."""
    folder, _ = site
    page = browser.new_page()
    solutions = 0
    for notebook in NOTEBOOKS:
        code_cells = [cell for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"]
        hidden = [bool(cell["metadata"].get("jupyter", {}).get("source_hidden")) for cell in code_cells]
        solutions += sum("solution" in cell["metadata"].get("tags", []) for cell in code_cells)
        assert all(hidden[i] for i, cell in enumerate(code_cells) if "solution" in cell["metadata"].get("tags", []))
        page.goto((folder / "notebooks" / f"{notebook.stem}.html").as_uri(), wait_until="load")
        cells = page.evaluate(_CELLS)
        assert len(cells) == len(code_cells), notebook.name
        for cell, source, is_hidden in zip(cells, code_cells, hidden):
            is_solution = "solution" in source["metadata"].get("tags", [])
            assert cell["code"].strip() == "".join(source["source"]).strip()
            assert (cell["codeShown"], cell["bar"], cell["outputShown"]) == (not is_hidden, is_hidden, not is_solution)
        bars = page.locator("div.cell details > summary")
        for i in range(bars.count()):
            bars.nth(i).click()
        assert all(cell["codeShown"] and cell["outputShown"] for cell in page.evaluate(_CELLS)), notebook.name
    page.close()
    assert solutions >= 12


@pytest.mark.site
@needs_browser
def test_the_annotated_source_keeps_every_line_whole_at_1280_pixels(visited):
    """At a laptop's width no line of the annotated source wraps: each derivation step is one line and fits,
    above its code; a code line longer than its column scrolls sideways with its block (never cut off)."""
    _, _, facts, _ = visited
    blocks = [(page, b) for page, f in facts.items() if page.startswith("code/") for b in f["annotatedBlocks"]]
    derivations = [(page, b) for page, b in blocks if b["derivation"]]
    assert len(derivations) >= 11 and len(blocks) > 300
    assert [(page, b["text"]) for page, b in blocks if b["whiteSpace"] != "pre"] == []
    assert [(page, b["text"]) for page, b in derivations if not b["fits"]] == []
    assert [(page, b["text"]) for page, b in blocks if not b["fits"] and b["overflowX"] not in ("auto", "scroll")] == []


_NARROW = """() => ({
    formulas: [...document.querySelectorAll('article mjx-container[display="true"]')].map(m => ({
        overflowX: getComputedStyle(m).overflowX, right: m.getBoundingClientRect().right,
        scrolls: m.scrollWidth > m.clientWidth + 1})),
    outputs: [...document.querySelectorAll('div.cell_output pre')].map(p => ({
        whiteSpace: getComputedStyle(p).whiteSpace, overflowX: getComputedStyle(p).overflowX,
        right: p.getBoundingClientRect().right})),
    width: window.innerWidth,
})"""


@pytest.mark.site
@needs_browser
def test_on_a_phone_wide_formulas_and_tables_scroll_instead_of_being_cut(site, browser):
    """At 390 pixels a display formula wider than the column scrolls sideways inside it, and a text output keeps
    its lines (a table keeps its columns) and scrolls: nothing runs past the screen's edge."""
    folder, _ = site
    page = browser.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    scrolling = 0
    for notebook in NOTEBOOKS:
        page.goto((folder / "notebooks" / f"{notebook.stem}.html").as_uri(), wait_until="load")
        page.evaluate(_MATH_READY)
        narrow = page.evaluate(_NARROW)
        width = narrow["width"]
        for formula in narrow["formulas"]:
            assert formula["overflowX"] == "auto" and formula["right"] <= width + 1, (notebook.name, formula)
            scrolling += formula["scrolls"]
        for output in narrow["outputs"]:
            assert output["whiteSpace"] == "pre" and output["overflowX"] == "auto", (notebook.name, output)
            assert output["right"] <= width + 1, (notebook.name, output)
    page.close()
    assert scrolling >= 10          # the wide formulas are there, and they scroll rather than being cut


@pytest.mark.site
@needs_browser
@pytest.mark.parametrize("word", ["layer_norm_backward", "warmup"])
def test_every_search_result_has_a_summary_with_the_word(visited, browser, word):
    """Search results carry the words around the query on each page (from _static/page_text.js), served and from
    the files alike: Sphinx's own summaries fetch each page, which a browser refuses from file://."""
    _, base, _, _ = visited
    page = browser.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(base + f"search.html?q={word}", wait_until="load")
    page.wait_for_selector("#search-results li", timeout=20_000)
    page.wait_for_function("() => /Search finished/.test(document.body.innerText)", timeout=20_000)
    page.wait_for_function("() => !document.querySelector('#search-results li:not(:has(p.context))')", timeout=5_000)
    summaries = page.eval_on_selector_all("#search-results li p.context", "ps => ps.map(p => p.textContent)")
    marked = page.eval_on_selector_all("#search-results li p.context",
                                       "ps => ps.map(p => [...p.querySelectorAll('.highlighted')].map(s => s.textContent))")
    page.close()
    assert len(summaries) >= 3
    assert [summary for summary in summaries if word not in summary.lower()] == []
    # the word is marked in each summary, as Sphinx marks it in the titles
    assert all(any(text.lower() == word for text in spans) for spans in marked), marked
    assert errors == []


@pytest.mark.site
@needs_browser
def test_every_notebook_page_offers_its_notebook_for_download(visited):
    """Under each notebook's title: a download link to a copy, in the site, of the committed notebook, byte for byte."""
    import nbformat
    folder, base, facts, _ = visited
    for notebook in NOTEBOOKS:
        links = facts[f"notebooks/{notebook.stem}.html"]["downloads"]
        assert len(links) == 1 and links[0].startswith(base) and links[0].endswith("/" + notebook.name), links
        copy = folder / unquote(urlsplit(links[0]).path[len(urlsplit(base).path):])
        assert copy.read_bytes() == notebook.read_bytes()
        nbformat.validate(nbformat.reads(copy.read_text(), as_version=4))


def test_the_notebook_reader_adds_the_links_and_each_figures_alt_text():
    pytest.importorskip("sphinx")
    nbformat = pytest.importorskip("nbformat")
    from book import read_notebook
    figure = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# 01 · Title\n\nThe idea."),
        nbformat.v4.new_code_cell("# Loss against step\nplt.plot(losses)", outputs=[figure]),
        nbformat.v4.new_code_cell("# no figure\nx = 1"),
        nbformat.v4.new_code_cell("plt.plot(losses)  # no caption", outputs=[figure])])
    title, captioned, plain, uncaptioned = read_notebook(nbformat.writes(notebook)).cells
    assert title.source == "# 01 · Title\n\n```{notebook-links}\n```\n\nThe idea."
    assert captioned.metadata["mystnb"]["image"] == {"alt": "Loss against step"}
    assert "mystnb" not in plain.metadata and "mystnb" not in uncaptioned.metadata


@pytest.mark.site
@needs_browser
def test_every_figure_says_what_it_shows(visited):
    """A notebook figure's alt text is its cell's first line, a comment saying what it shows; not MyST-NB's
    default, the image's path."""
    _, _, facts, _ = visited
    alts = {page: f["figureAlts"] for page, f in facts.items() if page.startswith("notebooks/")}
    assert sum(map(len, alts.values())) >= 30
    bad = {page: [alt for alt in page_alts if len(alt.split()) < 3 or re.search(r"_images/|\.(png|jpe?g|svg)$", alt)]
           for page, page_alts in alts.items()}
    assert {page: page_bad for page, page_bad in bad.items() if page_bad} == {}


_SUMMARY_ROW = re.compile(r'<tr class="row-\w+"><td><p><a class="reference internal" href="[^"]*" title="([\w.]+)">'
                          r'.*?</td>\s*<td><p>(.*?)</p></td>', re.DOTALL)


@pytest.mark.site
@needs_browser
def test_api_summary_tables_follow_the_source_and_describe_every_entry(site):
    """An API page's tables (Classes, Functions) list the module's names in the order its file defines them, as the
    entries below them do, and each row has its one-line description (a backward pass of ops/: its forward's)."""
    folder, _ = site
    rows = 0
    for source in SOURCES:
        defined = defined_names(source)
        html = (folder / _api_page(source)).read_text()
        for table in html.split('<table class="autosummary')[1:]:
            shown = [(title.rpartition(".")[2], re.sub(r"<[^>]+>", "", text).strip())
                     for title, text in _SUMMARY_ROW.findall(table.partition("</table>")[0])]
            names = [name for name, _ in shown]
            assert names == sorted(names, key=defined.index), (source, names)
            assert [name for name, text in shown if not text] == [], source
            rows += len(shown)
    assert rows > 300


@pytest.mark.site
@needs_browser
def test_every_public_class_and_function_has_an_api_entry(site):
    """Each file's public classes and functions have an entry on its API page, also for tinytransformer.gradcheck,
    whose name the package gives to the function gradcheck (autosummary finds the function first)."""
    folder, _ = site
    missing = []
    for source in SOURCES:
        module = _api_page(source).removeprefix("api/").removesuffix(".html")
        html = (folder / _api_page(source)).read_text()
        missing += [(source.name, name) for name in public_definitions(source)
                    if f'id="{module}.{name}"' not in html]
    assert missing == []
