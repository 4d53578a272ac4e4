"""What the plugin API (kplane/api.py) exports, read from its source, for docs/hooks.md.

``kplane.core`` may not import ``kplane.api`` (an import contract: the machinery does not depend
on its own public face), so this reads that file as text: its ``# -- section --`` comments and
``from MODULE import NAME`` lines say which names a plugin may import, and under which heading.
Each name is then found where it is defined, following re-exports through the ``kplane.core``
modules named, to say what kind of thing it is and what its docstring says first. A constant
has no docstring: the ``#:`` comment above its assignment stands in for one (Sphinx's
convention). Failing both, the comment kplane/api.py puts after the import line does.
:mod:`kplane.core.hookdoc` renders the result beside the hooks.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import inspect
import io
import re
import tokenize
import typing
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

API = "kplane.api"
SECTION = re.compile(r"#\s*--\s*(.+?)\s*-*\s*$")  # ``# -- the client side: what controllers use ----``


@dataclass(frozen=True)
class Entry:
    """One name of the plugin API: as a plugin imports it, what it is, what it is for (reST)."""

    name: str
    kind: str  # "class", "function", "constant", "type alias" or "module"
    summary: str
    value: str | None = None  # a string constant's value, which is often what it is for


@dataclass(frozen=True)
class Section:
    """One ``# -- title --`` block of kplane/api.py and the names it imports, in order."""

    title: str
    entries: list[Entry]


@dataclass(frozen=True)
class _Source:
    """A module's text, parsed: its docstring, top-level statements and comments by line."""

    doc: str
    lines: list[str]
    body: list[ast.stmt]
    comments: dict[int, str]


def _read(path: str) -> _Source:
    """A module file, parsed; comments through tokenize, since the syntax tree drops them."""
    text = Path(path).read_text()
    comments = {tok.start[0]: tok.string for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                if tok.type == tokenize.COMMENT}
    tree = ast.parse(text)
    return _Source(ast.get_docstring(tree) or "", text.splitlines(), tree.body, comments)


@functools.cache
def _module_source(module: str) -> _Source:
    spec = importlib.util.find_spec(module)  # imports the parents only, never ``module`` itself
    if spec is None or spec.origin is None:
        raise LookupError(f"no source for {module}")
    return _read(spec.origin)


def docstring() -> str:
    """kplane/api.py's module docstring: what the plugin API is, and its order."""
    return _module_source(API).doc


def sections() -> list[Section]:
    """kplane/api.py's sections, each with the names it imports, in the file's order."""
    source = _module_source(API)
    titled: dict[str, list[Entry]] = {}
    for node in source.body:
        if not isinstance(node, ast.ImportFrom) or node.module is None or node.module == "__future__":
            continue
        title = _title_above(source, node.lineno)
        note = _trailing_comment(source, node)
        for alias in node.names:
            titled.setdefault(title, []).append(_entry(node.module, alias.name, alias.asname or alias.name, note))
    return [Section(title, entries) for title, entries in titled.items()]


def _title_above(source: _Source, lineno: int) -> str:
    for line in reversed(source.lines[:lineno - 1]):
        found = SECTION.match(line.strip())
        if found:
            return found.group(1)
    raise LookupError(f"{API}, line {lineno}: an import before any '# -- section --' comment")


def _trailing_comment(source: _Source, node: ast.stmt) -> str:
    line = node.end_lineno or node.lineno
    comment = source.comments.get(line, "")
    return comment.lstrip("#").strip() if comment and not source.lines[line - 1].lstrip().startswith("#") else ""


def _entry(module: str, name: str, public: str, note: str) -> Entry:
    value = _imported(module, name)
    if isinstance(value, ModuleType):
        return Entry(public, "module", _summary(value.__doc__ or "") or note)
    source, node = _definition(module, name)
    if isinstance(node, ast.ClassDef):
        return Entry(public, "class", _summary(ast.get_docstring(node) or "") or note)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return Entry(public, "function", _summary(ast.get_docstring(node) or "") or note)
    summary = _summary(_doc_comment(source, node.lineno)) or note
    if typing.get_origin(value) is not None:
        return Entry(public, "type alias", summary)
    if callable(value):  # an instance used as a function, such as pluggy's hook marker
        return Entry(public, "function", summary)
    return Entry(public, "constant", summary, value if isinstance(value, str) else None)


def _imported(module: str, name: str) -> Any:
    """What ``from module import name`` gives: an attribute, else a submodule."""
    try:
        return getattr(importlib.import_module(module), name)
    except AttributeError:
        return importlib.import_module(f"{module}.{name}")


def _definition(module: str, name: str) -> tuple[_Source, ast.stmt]:
    """The top-level statement defining ``name`` in ``module``, through any re-exports."""
    source = _module_source(module)
    for node in source.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return source, node
        if isinstance(node, ast.Assign) and name in _assigned(node):
            return source, node
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return source, node
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _definition(node.module, alias.name)
    raise LookupError(f"{module} does not define {name}")


def _assigned(node: ast.Assign) -> set[str]:
    """The names an assignment binds, unpacking included (``STRICT, WARN = "Strict", "Warn"``)."""
    names = set()
    for target in node.targets:
        for part in target.elts if isinstance(target, ast.Tuple) else [target]:
            if isinstance(part, ast.Name):
                names.add(part.id)
    return names


def _doc_comment(source: _Source, lineno: int) -> str:
    """The ``#:`` lines right above line ``lineno``, as one text."""
    above: list[str] = []
    for line in reversed(source.lines[:lineno - 1]):
        if not line.lstrip().startswith("#:"):
            break
        above.insert(0, line.lstrip()[2:].strip())
    return "\n".join(above)


def _summary(doc: str) -> str:
    """A docstring's first sentence, on one line (a table row has room for no more)."""
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split())
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", paragraph, maxsplit=1)[0]
