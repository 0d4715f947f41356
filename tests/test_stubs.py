"""Stubs made from the library's own source: the contract stays, the answer goes, nothing else changes."""
import ast
from pathlib import Path

import pytest

from tinytransformer import ops
from tinytransformer.course.stubs import backward_names, stub_source

PACKAGE = Path(ops.__file__).parent.parent
OP_FILES = sorted(Path(ops.__file__).parent.glob("*.py"))


def functions(source):
    return {node.name: node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


def body_lines(source, node):
    """The stripped code lines of a function's body, without its docstring and comments."""
    body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body
    return {line.strip() for statement in body
            for line in ast.get_source_segment(source, statement).splitlines() if line.strip()}


@pytest.mark.parametrize("path", [p for p in OP_FILES if backward_names(p.read_text())], ids=lambda p: p.name)
def test_every_backward_becomes_a_stub_and_every_other_function_stays(path):
    source = path.read_text()
    shown = f"tinytransformer/ops/{path.name}"
    names = backward_names(source)
    stubbed = stub_source(source, shown, set(names))
    before, after = functions(source), functions(stubbed)
    assert list(before) == list(after)
    for name, node in after.items():
        if name not in names:
            assert ast.get_source_segment(stubbed, node) == ast.get_source_segment(source, before[name])
            continue
        raise_statement = node.body[-1]
        assert isinstance(raise_statement, ast.Raise)
        assert ast.literal_eval(raise_statement.exc.args[0]) == f"write {name} first: {shown}:{node.lineno}"
        docstring = ast.get_docstring(node)
        assert docstring.startswith("Return (") and "Special cases: " in docstring and "Derived in: " in docstring
        statements = node.body[1:-1]                             # after the docstring
        assert len(statements) <= 1 and all(                    # at most the line that unpacks the cache
            isinstance(s, ast.Assign) and s.value.id == "cache" for s in statements)
        reference = body_lines(source, before[name])
        kept = body_lines(stubbed, node) - {ast.get_source_segment(stubbed, raise_statement)}
        assert kept <= reference and len(kept) <= 1
        text = ast.get_source_segment(stubbed, node)
        assert "->" not in text                                     # no derivation
    assert ast.get_docstring(ast.parse(stubbed)) == ast.get_docstring(ast.parse(source))


def test_the_stub_says_what_to_return():
    source = (PACKAGE / "ops/attention.py").read_text()
    stubbed = stub_source(source, "tinytransformer/ops/attention.py", {"attention_backward"})
    text = ast.get_source_segment(stubbed, functions(stubbed)["attention_backward"])
    node = functions(stubbed)["attention_backward"]
    assert ast.get_source_segment(stubbed, node.body[1]) == "q, k, v, probs, scale = cache"
    docstring = " ".join(ast.get_docstring(node).split())
    assert docstring.startswith("Return (dq, dk, dv, None): one gradient per input of attention_forward, each of "
                                "its input's shape and dtype: dq like q (..., T_q, d_k), dk like k (..., T_k, d_k), "
                                "dv like v (..., T_k, d_v); None for keep: it takes no gradient.")
    assert "a query row with no key kept has output 0" in docstring
    assert "Derived in: notebooks/01_self_attention_by_hand.ipynb" in docstring
    linear = (PACKAGE / "ops/linear.py").read_text()
    text = stub_source(linear, "x.py", {"linear_backward"})
    assert "db like b (d_out,) (None when b is None)" in " ".join(text.split())


def test_every_stub_names_an_existing_notebook_or_says_there_is_none():
    from tinytransformer.course.stub_notes import NOTES
    for op, (special, derived) in NOTES.items():
        named = [word.rstrip(".,;") for word in derived.split() if word.startswith("notebooks/")]
        assert named or derived.startswith("no notebook"), op
        assert all((PACKAGE.parent / path).is_file() for path in named), (op, named)


def test_the_derivation_above_a_backward_goes_with_it_and_only_that():
    source = (PACKAGE / "ops/attention.py").read_text()
    assert "#   A = softmax(S)    ->  dS = A * (dA - sum_j dA_j A_j)" in source
    stubbed = stub_source(source, "tinytransformer/ops/attention.py", {"attention_backward"})
    assert "dS = A * (dA" not in stubbed
    removed = [line for line in source.splitlines() if line not in stubbed.splitlines()]
    assert all(line.startswith("#") or line.startswith("    ") for line in removed)
    untouched = stub_source(source, "tinytransformer/ops/attention.py", {"mask_backward"})
    assert "dS = A * (dA" in untouched


def test_only_the_named_functions_change():
    source = (PACKAGE / "ops/softmax.py").read_text()
    stubbed = stub_source(source, "tinytransformer/ops/softmax.py", {"softmax_backward"})
    before, after = functions(source), functions(stubbed)
    assert ast.get_source_segment(stubbed, after["log_softmax_backward"]) == \
        ast.get_source_segment(source, before["log_softmax_backward"])
    assert "raise NotImplementedError" in ast.get_source_segment(stubbed, after["softmax_backward"])
    assert stub_source(source, "x.py", set()) == source


def test_the_tape_replay_stub_keeps_its_docstring_and_the_rest_of_the_class():
    source = (PACKAGE / "tensor.py").read_text()
    stubbed = stub_source(source, "tinytransformer/tensor.py", {"Tape.backward"})
    tape = next(node for node in ast.parse(stubbed).body if isinstance(node, ast.ClassDef) and node.name == "Tape")
    backward = next(item for item in tape.body if isinstance(item, ast.FunctionDef) and item.name == "backward")
    assert ast.get_docstring(backward).startswith("Seed output.grad with grad")
    assert [type(s) for s in backward.body] == [ast.Expr, ast.Raise]
    assert f'"write Tape.backward first: tinytransformer/tensor.py:{backward.lineno}"' in stubbed
    assert "a tensor used twice gets the sum" in ast.get_docstring(backward) and "reversed(self.records)" not in stubbed
    assert [n.name for n in tape.body if isinstance(n, ast.FunctionDef)] == \
        [n.name for n in next(c for c in ast.parse(source).body if isinstance(c, ast.ClassDef)
                              and c.name == "Tape").body if isinstance(n, ast.FunctionDef)]


def test_an_unknown_function_is_refused():
    with pytest.raises(ValueError, match="stubs: x.py has no function sofmax_backward"):
        stub_source((PACKAGE / "ops/softmax.py").read_text(), "x.py", {"sofmax_backward"})
