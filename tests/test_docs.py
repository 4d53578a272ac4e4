"""docs/writing-a-plugin.md, followed as its reader would, and examples/widgets, which it builds.

The guide is run top to bottom in an empty folder (``tests/docblocks.py`` says how): its files
are written as each block shows them, the package is pip-installed (editable), ``kplane serve``
is started and restarted, every ``kubectl`` and ``pytest`` command is run and its output
compared with the guide's. Then the server it left running is checked over HTTPS, and the
files it assembled must be ``examples/widgets``, byte for byte.
"""

from __future__ import annotations

import json
import shutil
import ssl
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from kplane.core.client.kubeconfig import load_kubeconfig
from tests import docblocks
from tests.docblocks import Session

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "writing-a-plugin.md"
EXAMPLE = ROOT / "examples" / "widgets"
WIDGETS = "/apis/widgets.example.com/v1/namespaces/default/widgets"
ALPHA = "/apis/widgets.example.com/v1alpha1/namespaces/default/widgets"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
NOT_FROM_THE_GUIDE = {"README.md"}  # examples/widgets files written by hand


def http(url: str, context: ssl.SSLContext | None, method: str, path: str, body: Any = None,
         accept: str = "application/json") -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    session = Session(tmp_path, source="docs/writing-a-plugin.md")
    try:
        began = time.monotonic()
        session.follow(GUIDE.read_text())
        print(f"followed the guide in {time.monotonic() - began:.1f}s")
        assert {"kplane-widgets", "kplane-gizmos"} <= set(session.installed)
        check_over_https(session.url, load_kubeconfig(session.cwd / ".kplane" / "kubeconfig").ssl)
    finally:
        session.close()


def check_over_https(url: str, context: ssl.SSLContext | None) -> None:
    """The server the guide left running (both plugins installed), as its kubeconfig reaches it."""
    status, group = http(url, context, "GET", "/apis/widgets.example.com")
    assert status == 200 and group["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha1"]
    status, resources = http(url, context, "GET", "/apis/widgets.example.com/v1")
    assert {r["name"] for r in resources["resources"]} == {"widgets", "widgets/status"}

    # v1alpha1 in, defaulted, stored as v1, read in both; the controller fills the status.
    alpha = {"apiVersion": "widgets.example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"width": 4}}
    status, created = http(url, context, "POST", ALPHA, alpha)
    assert status == 201, created
    assert created["spec"] == {"color": "grey", "width": 4, "height": 4} and created["status"] == {}  # a struct value
    deadline = time.monotonic() + 20
    while True:
        status, stored = http(url, context, "GET", f"{WIDGETS}/w")
        if (stored.get("status") or {}).get("area") == 16 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert stored["spec"] == {"color": "grey", "size": {"width": 4, "height": 4}}
    assert stored["status"]["observedGeneration"] == 1 and stored["status"]["conditions"][0]["type"] == "Ready"

    # Validation: 422 with one cause per field; admission: 403.
    bad = {"apiVersion": "widgets.example.com/v1", "kind": "Widget", "metadata": {"name": "bad"},
           "spec": {"color": "pink", "size": {"width": 0, "height": 101}}}
    status, refused = http(url, context, "POST", WIDGETS, bad)
    assert status == 422 and refused["reason"] == "Invalid"
    assert [c["field"] for c in refused["details"]["causes"]] == ["spec.color", "spec.size.width", "spec.size.height"]
    red = {**bad, "metadata": {"name": "red"}, "spec": {"color": "red", "size": {"width": 1}}}
    status, refused = http(url, context, "POST", WIDGETS, red)
    assert status == 403 and refused["message"] == 'widgets.widgets.example.com "red" is forbidden: red widgets are not allowed here'

    # The columns, as kubectl asks for them.
    status, table = http(url, context, "GET", WIDGETS, accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Color", "Size", "Area", "Ready", "Age"]
    assert table["rows"][0]["cells"][:5] == ["w", "grey", "4x4", 16, "True"]

    # OpenAPI for kubectl explain, with the schema's descriptions.
    status, openapi = http(url, context, "GET", "/openapi/v3/apis/widgets.example.com/v1")
    assert status == 200
    size = next(s for name, s in openapi["components"]["schemas"].items() if name.endswith("v1.Size"))
    assert size["properties"]["width"]["description"] == "Width in centimetres, 1 to 100."

    # What `kplane new-plugin` made is served next to it.
    status, gizmos = http(url, context, "GET", "/apis/gizmos.example.com/v1alpha1")
    assert status == 200 and [r["name"] for r in gizmos["resources"]] == ["gizmos"]


def test_examples_widgets_is_what_the_guide_builds() -> None:
    built = docblocks.assemble(GUIDE.read_text())
    on_disk = {str(p.relative_to(EXAMPLE)) for p in EXAMPLE.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts and ".egg-info" not in str(p)}
    fix = "run: python -m tests.docblocks docs/writing-a-plugin.md examples/widgets"
    assert on_disk - NOT_FROM_THE_GUIDE == set(built), f"examples/widgets has other files than the guide builds; {fix}"
    for path, text in built.items():
        assert (EXAMPLE / path).read_text() == text, f"examples/widgets/{path} differs from the guide; {fix}"


def test_every_block_of_the_guide_is_run() -> None:
    """Each block is a file, an update of one, or a terminal session: none goes untested."""
    steps = docblocks.steps(GUIDE.read_text())  # raises on any other block
    assert len(steps) == len(docblocks.blocks(GUIDE.read_text()))
    files = [s for s in steps if isinstance(s, docblocks.FileBlock)]
    assert any(f.update for f in files) and any(isinstance(s, list) for s in steps)


def test_a_block_that_would_go_untested_is_refused() -> None:
    with pytest.raises(ValueError, match="line 3: a python block .* would go untested"):
        docblocks.steps("text\n\n```python\nprint('hi')\n```\n")
    with pytest.raises(ValueError, match="line 1: a plain block"):
        docblocks.steps("```\n$ ls\n```\n")


def test_an_update_merges_imports_and_replaces_definitions() -> None:
    current = textwrap.dedent('''\
        """Doc."""

        from kplane.core.hookspecs import hookimpl

        from pkg import v1
        from pkg.types import GROUP


        # about f
        @hookimpl
        def f(x):
            return v1


        def g():
            return 1
        ''')
    change = textwrap.dedent('''\
        from typing import Any

        from pkg import v1alpha1
        from pkg.types import COLORS


        # about f, again
        @hookimpl
        def f(x):
            return v1alpha1


        def h():
            return 2
        ''')
    assert docblocks.update_python(current, change, {"pkg"}) == textwrap.dedent('''\
        """Doc."""

        from typing import Any

        from kplane.core.hookspecs import hookimpl

        from pkg import v1, v1alpha1
        from pkg.types import COLORS, GROUP


        # about f, again
        @hookimpl
        def f(x):
            return v1alpha1


        def g():
            return 1


        def h():
            return 2
        ''')


@pytest.mark.parametrize(("expected", "actual", "same"), [
    (["NAME    COLOR   AGE", "big     blue    0s"], "NAME   COLOR   AGE\nbig    blue    3m12s\n", True),
    (["[...]", "4 passed in [...]"], "warning\n....  [100%]\n4 passed in 2.01s\n", True),
    (["4 passed in [...]"], "3 passed in 2.01s\n", False),
    (["a", "[...]", "c"], "a\nb\nb\nc\n", True),
    (["a"], "a\nb\n", False),
])
def test_console_output_comparison(expected: list[str], actual: str, same: bool) -> None:
    assert docblocks.matches(expected, actual) is same
