"""docs/hooks.md, generated from the docstrings of :mod:`kplane.core.hookspecs` and kplane/api.py.

    python -m kplane.core.hookdoc > docs/hooks.md

The hookspecs are the reference; this renders them as Markdown (reST's ``literal``, roles and
``::`` blocks become Markdown's, a line underlined with ``-`` a heading), with a table of the
hooks in the order kplane calls them. After the hooks comes the plugin API, every name
kplane/api.py exports, by its sections, with what it is (:mod:`kplane.core.apidoc` reads them).
tests/test_hookdoc.py fails when docs/hooks.md differs from what this prints, so the page cannot
drift from the code.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Callable
from typing import Any

from kplane.core import apidoc, hookspecs
from kplane.core.plugins import HOOKS

SECTIONS = ("When", "Receives", "Returns", "Example")  # every hook's docstring has these, in this order
HEADER = ("<!-- Generated from the docstrings of core/hookspecs.py and kplane/api.py by "
          "`python -m kplane.core.hookdoc > docs/hooks.md`. "
          "Edit those, then run it again: tests/test_hookdoc.py checks that this page is what it prints. -->")
API_HEADING = "## The plugin API (`kplane.api`)"
API_ANCHOR = "#the-plugin-api-kplaneapi"


def hooks() -> list[Callable[..., Any]]:
    """The hookspecs, in the order they are defined, which is the order kplane calls them."""
    return [getattr(hookspecs, name) for name in HOOKS]


def parameters(hook: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(hook).parameters)


def signature(hook: Callable[..., Any]) -> str:
    params = ", ".join(f"{p.name}: {p.annotation}" for p in inspect.signature(hook).parameters.values())
    return f"{'async ' if inspect.iscoroutinefunction(hook) else ''}def {hook.__name__}({params})"


def sections(hook: Callable[..., Any]) -> dict[str, str]:
    """The docstring's ``Label:`` paragraphs (and what follows each, up to the next), by label;
    ``""`` holds the text before the first."""
    found: dict[str, list[str]] = {"": []}
    current = ""
    for line in inspect.getdoc(hook).splitlines():  # type: ignore[union-attr]
        label = re.match(r"(\w+):", line)
        if label and label.group(1) in SECTIONS:
            current = label.group(1)
            found[current] = []
            line = line[label.end():].lstrip(":").strip()
        found[current].append(line)
    return {k: "\n".join(v).strip() for k, v in found.items()}


def received(hook: Callable[..., Any]) -> list[str]:
    """The parameters the Receives section documents, in order (its ``- ``name``:`` items)."""
    return re.findall(r"^- ``(\w+)``:", sections(hook).get("Receives", ""), re.MULTILINE)


def examples(text: str) -> list[str]:
    """The literal blocks (after a ``::``) of a docstring, dedented."""
    blocks = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith("::"):
            block, _ = _literal(lines, i + 1, _indent(line))
            blocks.append("\n".join(block))
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _literal(lines: list[str], start: int, base: int) -> tuple[list[str], int]:
    """The indented block from ``start`` (blank lines first skipped), dedented; and where it ends."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    block: list[str] = []
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
        block.append(lines[i])
        i += 1
    while block and not block[-1].strip():
        block.pop()
    depth = min((_indent(b) for b in block if b.strip()), default=0)
    return [b[depth:] for b in block], i


def _language(block: list[str]) -> str:
    text = "\n".join(block)
    if re.search(r"^\[", text, re.MULTILINE):
        return "toml"
    if text.startswith("kplane:"):
        return "console"
    return "python"


def _inline(text: str) -> str:
    text = re.sub(r":\w+:`~[\w.]*?(\w+)`", r"`\1`", text)  # :class:`~kplane.core.runtime.scheme.Scheme` -> `Scheme`
    text = re.sub(r":\w+:`([^`]+)`", r"`\1`", text)
    return re.sub(r"``(.+?)``", r"`\1`", text, flags=re.DOTALL)


def markdown(text: str, heading: str = "##") -> str:
    """reST-flavoured docstring text as Markdown."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            out.append(f"{heading} {_inline(line.strip())}")
            i += 2
            continue
        if line.rstrip().endswith("::"):
            lead = line.rstrip()[:-2].rstrip()
            if lead:
                out.append(_bold_label(_inline(lead + ":")))
            block, i = _literal(lines, i + 1, _indent(line))
            out += ["", f"```{_language(block)}", *block, "```", ""]
            continue
        out.append(_bold_label(_inline(line)))
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"


def _bold_label(line: str) -> str:
    label = re.match(r"(\w+):", line)
    if label and label.group(1) in SECTIONS:
        return f"**{label.group(1)}:**{line[label.end():]}"
    return line


def render() -> str:
    doc = inspect.cleandoc(hookspecs.__doc__ or "")
    title, _, rest = doc.partition("\n")
    out = [HEADER, "", "# Plugin hooks", "", _inline(title.strip()), "",
           f"Everything a plugin imports from kplane is listed after the hooks, in [the plugin API]({API_ANCHOR}).", "",
           markdown(rest.strip()), "## The hooks", "",
           "| # | hook | receives | what for |", "|---|------|----------|----------|"]
    for n, hook in enumerate(hooks(), 1):
        summary = _inline(sections(hook)[""].split("\n\n")[0].replace("\n", " "))
        args = ", ".join(f"`{p}`" for p in parameters(hook))
        out.append(f"| {n} | [`{hook.__name__}`](#{hook.__name__}) | {args} | {summary} |")
    out.append("")
    for n, hook in enumerate(hooks(), 1):
        out += [f"### {hook.__name__}", "", "```python", "@hookspec", signature(hook) + ": ...", "```", "",
                markdown(inspect.getdoc(hook) or "", heading="####")]
    out += render_api()
    return "\n".join(out).rstrip() + "\n"


def render_api() -> list[str]:
    """The plugin API's part of the page: kplane/api.py's docstring, then a table per section."""
    out = [API_HEADING, "", markdown(apidoc.docstring())]
    for section in apidoc.sections():
        out += [f"### {_inline(section.title[:1].upper() + section.title[1:])}", "",
                "| name | kind | what it is |", "|------|------|------------|"]
        for entry in section.entries:
            summary = _inline(entry.summary)
            if entry.value is not None:
                summary = f"`{json.dumps(entry.value)}`: {summary}"
            cell = summary.replace("|", "\\|")  # a table cell may hold no bare pipe
            out.append(f"| `{entry.name}` | {entry.kind} | {cell} |")
        out.append("")
    return out


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
