"""Third-party plugins: pip-install a package, restart, and its resource is served.

The package is ``examples/widgets`` (the one docs/writing-a-plugin.md builds): installed from a
copy for this module and uninstalled after it, then driven through HTTP and through kubectl. It
is installed into a virtual environment of the module's own (``tests/isolated.py``), so other
processes sharing kplane's ``.venv`` never see it; the servers run with that environment's python.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kplane.core.hookspecs import hookimpl
from kplane.core.plugins import PluginError, PluginManager
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from tests.conftest import Client
from tests.isolated import Venv
from tests.kubectl_cli import Kubectl
from tests.servers import serving

PACKAGE = Path(__file__).resolve().parents[1] / "examples" / "widgets"
DISTRIBUTION = "kplane-widgets"
WIDGETS = "/apis/widgets.example.com/v1/namespaces/default/widgets"
ALPHA = "/apis/widgets.example.com/v1alpha1/namespaces/default/widgets"


@dataclass(frozen=True)
class Installed:
    source: Path  # the copy of examples/widgets that was installed
    venv: Venv  # where


@pytest.fixture(scope="module")
def widgets_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """examples/widgets installed from a copy (no build files land in the tree)."""
    base = tmp_path_factory.mktemp("widgets")
    source = base / "widgets"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".kplane"))
    venv = Venv.create(base / "venv")
    venv.pip("install", str(source))
    try:
        yield Installed(source, venv)
    finally:
        venv.pip("uninstall", "-y", DISTRIBUTION)


@pytest.fixture
def widget_server(widgets_installed: Installed, tmp_path: Path) -> Iterator[str]:
    with serving(tmp_path, python=widgets_installed.venv.python) as served:
        yield served.url
    assert served.process.returncode == 0


def widget(name: str, **spec: object) -> dict:
    return {"apiVersion": "widgets.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


async def test_installed_plugin_is_served(widget_server: str) -> None:
    async with aiohttp.ClientSession(base_url=widget_server) as session:
        api = Client(session)
        groups = (await api.get("/apis")).body["groups"]
        [group] = [g for g in groups if g["name"] == "widgets.example.com"]
        assert group["preferredVersion"]["version"] == "v1"
        assert [v["version"] for v in group["versions"]] == ["v1", "v1alpha1"]

        # Defaulting (v1: height from width, color grey), the status cleared on create.
        created = await api.post(WIDGETS, {**widget("w1", size={"width": 3}), "status": {"area": 99}})
        assert created.status == 201, created
        assert created.body["spec"] == {"color": "grey", "size": {"width": 3, "height": 3}}
        assert created.body["status"] == {} and created.body["metadata"]["generation"] == 1  # cleared: a struct value

        # The same object in v1alpha1 (flat), written back there, read in v1 (nested).
        alpha = (await api.get(f"{ALPHA}/w1")).body
        assert alpha["apiVersion"] == "widgets.example.com/v1alpha1"
        assert alpha["spec"] == {"color": "grey", "width": 3, "height": 3}
        for _ in range(10):  # the controller writes the status meanwhile: 409 until we read its write
            alpha["spec"]["width"] = 5
            put = await api.put(f"{ALPHA}/w1", alpha)
            if put.status != 409:
                break
            alpha = (await api.get(f"{ALPHA}/w1")).body
        assert put.status == 200, put
        stored = (await api.get(f"{WIDGETS}/w1")).body
        assert stored["spec"]["size"] == {"width": 5, "height": 3} and stored["metadata"]["generation"] == 2

        # The controller (running in `kplane serve`) writes the status for the new generation.
        deadline = time.monotonic() + 20
        while (stored.get("status") or {}).get("observedGeneration") != 2 and time.monotonic() < deadline:
            stored = (await api.get(f"{WIDGETS}/w1")).body
        assert stored["status"]["area"] == 15
        assert [(c["type"], c["status"]) for c in stored["status"]["conditions"]] == [("Ready", "True")]

        # /status changes the status alone; the widget itself, everything but the status.
        status_only = {**stored, "spec": {"color": "blue", "size": {"width": 9}}, "status": {**stored["status"], "area": 7}}
        written = await api.put(f"{WIDGETS}/w1/status", status_only)
        assert written.status == 200 and written.body["spec"] == stored["spec"] and written.body["status"]["area"] == 7
        patched = await api.patch(f"{WIDGETS}/w1", {"status": {"area": 1}})
        assert patched.status == 200 and patched.body["status"].get("area") != 1

        too_big = await api.post(WIDGETS, widget("w2", color="pink", size={"width": 101}))
        assert too_big.status == 422
        assert [c["field"] for c in too_big.body["details"]["causes"]] == ["spec.color", "spec.size.width", "spec.size.height"]
        assert 'spec.size.width: Invalid value: 101: must be between 1 and 100' in too_big.body["message"]
        missing = await api.post(WIDGETS, widget("w4"))
        assert missing.status == 422 and missing.body["details"]["causes"][0]["field"] == "spec.size.width"
        red = await api.post(WIDGETS, widget("w3", color="red", size={"width": 1}))
        assert red.status == 403
        assert red.body["message"] == 'widgets.widgets.example.com "w3" is forbidden: red widgets are not allowed here'
        names = [w["metadata"]["name"] for w in (await api.get(WIDGETS)).body["items"]]
        assert names == ["w1"]


@pytest.fixture
def kubectl(widgets_installed: Installed, tmp_path: Path) -> Iterator[Kubectl]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    with serving(tmp_path / "data", python=widgets_installed.venv.python) as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
        yield Kubectl(env, tmp_path)


def test_installed_plugin_through_kubectl(kubectl: Kubectl, widgets_installed: Installed) -> None:
    manifest = widgets_installed.source / "widget.yaml"
    assert kubectl.run("create", "-f", str(manifest)).stdout == "widget.widgets.example.com/big created\n"
    assert "widgets   wd           widgets.example.com/v1   true         Widget" in kubectl.run(
        "api-resources", "--api-group=widgets.example.com").stdout
    kubectl.run("wait", "--for=condition=Ready", "widget/big", "--timeout=20s")
    header, row = kubectl.run("get", "widgets").stdout.splitlines()
    assert header.split() == ["NAME", "COLOR", "SIZE", "READY", "AGE"] and row.split()[:4] == ["big", "blue", "30x20", "True"]
    header, row = kubectl.run("get", "wd", "big", "-o", "wide").stdout.splitlines()
    assert header.split() == ["NAME", "COLOR", "SIZE", "AREA", "READY", "AGE"] and row.split()[:5] == ["big", "blue", "30x20", "600", "True"]

    explained = kubectl.run("explain", "widget.spec").stdout
    assert "VERSION:    v1" in explained and "grey (the default), red, green or blue." in explained and "size\t<Size>" in explained
    alpha = kubectl.run("explain", "widget.spec", "--api-version=widgets.example.com/v1alpha1").stdout
    assert "width\t<integer>" in alpha and "size" not in alpha

    # apply: the v1 manifest changed, then a v1alpha1 one (defaulted, stored as v1).
    changed = manifest.read_text().replace("width: 30", "width: 40")
    assert kubectl.apply_file("apply", changed) == "widget.widgets.example.com/big configured\n"
    kubectl.run("wait", "--for=jsonpath={.status.area}=800", "widget/big", "--timeout=20s")
    assert kubectl.run("get", "widget", "big", "-o", "jsonpath={.metadata.generation}").stdout == "2"
    small = "apiVersion: widgets.example.com/v1alpha1\nkind: Widget\nmetadata: {name: small}\nspec: {width: 5}\n"
    assert kubectl.apply_file("apply", small) == "widget.widgets.example.com/small created\n"
    assert kubectl.run("get", "widget", "small", "-o", "jsonpath={.spec}").stdout == '{"color":"grey","size":{"height":5,"width":5}}'
    assert kubectl.run("get", "widgets.v1alpha1.widgets.example.com", "big", "-o", "jsonpath={.spec}").stdout == \
        '{"color":"blue","height":20,"width":40}'

    refused = kubectl.run("create", "-f", str(widgets_installed.source / "bad.yaml"), check=False)
    assert refused.returncode == 1 and 'The Widget "huge" is invalid' in refused.stderr
    assert 'spec.color: Unsupported value: "pink"' in refused.stderr
    red = kubectl.run("patch", "widget", "small", "--type=merge", "-p", '{"spec": {"color": "red"}}', check=False)
    assert red.returncode == 1
    assert red.stderr.strip() == ('Error from server (Forbidden): widgets.widgets.example.com "small" is forbidden: '
                                  "red widgets are not allowed here")

    deleted = kubectl.run("delete", "-f", str(manifest)).stdout
    assert deleted == 'widget.widgets.example.com "big" deleted\n'
    kubectl.run("delete", "widget", "small")
    assert "No resources found" in kubectl.run("get", "widgets").stderr


def test_kplane_plugins_lists_what_each_plugin_registers(widgets_installed: Installed) -> None:
    out = widgets_installed.venv.run("-m", "kplane.core.cli", "plugins").stdout
    assert "widgets  (widgets_example.plugin, kplane-widgets 0.1.0)" in out
    assert "Widget (widgets.widgets.example.com): v1, v1alpha1; stored as v1; namespaced, subresources: status" in out
    assert "Deployment (deployments.apps): v1; stored as v1; namespaced, subresources: scale, status" in out
    assert "kplane_register_strategies" in out


def test_disable_plugin(widgets_installed: Installed) -> None:
    out = widgets_installed.venv.run("-m", "kplane.core.cli", "plugins", "--disable-plugin", "widgets").stdout
    assert "Widget" not in out and "Deployment" in out


async def test_a_plugin_failing_in_a_hook_is_named() -> None:
    class Broken:
        @staticmethod
        def kplane_register_types(scheme):
            raise RuntimeError("boom")

    from kplane.core.hookspecs import hookimpl

    Broken.kplane_register_types = hookimpl(Broken.kplane_register_types)  # type: ignore[method-assign]
    manager = PluginManager()
    manager.register(Broken, "broken")
    scheme = Scheme()
    with pytest.raises(PluginError, match=r"plugin 'broken' failed in kplane_register_types: RuntimeError: boom \(tests/test_plugins.py, line \d+\)"):
        await manager.setup(scheme, Registry(scheme, None, AdmissionChain()), AdmissionChain())  # type: ignore[arg-type]


async def test_two_plugins_claiming_one_resource_are_refused() -> None:
    scheme = Scheme()
    manager = PluginManager()
    manager.load_entry_points()
    with pytest.raises(PluginError, match=r"plugin 'copycat' conflicts with plugin 'core' \(kplane 0.1.0\): both register pods.core"):
        from kplane.core.hookspecs import hookimpl
        from kplane.plugins.core import types
        from kplane.plugins.core.v1 import schemas

        class Copycat:
            @hookimpl
            def kplane_register_types(self, scheme):
                scheme.add_kind(group="", kind="Pod", plural="pods", internal=types.Pod,
                                versions={"v1": schemas.PodSchema}, storage_version="v1", plugin="copycat")

        manager.register(Copycat(), "copycat")
        await manager.setup(scheme, Registry(scheme, None, AdmissionChain()), AdmissionChain())  # type: ignore[arg-type]


async def test_hook_wrappers_wrap_each_plugin_and_the_order_honours_tryfirst_and_trylast() -> None:
    """A wrapper (``@hookimpl(wrapper=True)``) runs around every plugin's implementation, told
    which plugin it wraps (``plugin_name``); plugins are called in registration order, ``tryfirst`` ones before
    and ``trylast`` ones after."""
    from kplane.core.hookspecs import hookimpl

    seen: list[str] = []

    class Plain:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def kplane_register_types(self, scheme: Scheme) -> None:
            seen.append(self.name)

    class Early(Plain):
        @hookimpl(tryfirst=True)
        def kplane_register_types(self, scheme: Scheme) -> None:
            seen.append(self.name)

    class Late(Plain):
        @hookimpl(trylast=True)
        async def kplane_register_types(self, scheme: Scheme) -> None:
            seen.append(self.name)

    class Wrapper:
        @hookimpl(wrapper=True)
        def kplane_register_types(self, plugin_name: str) -> Any:
            seen.append(f"before {plugin_name}")
            result = yield
            seen.append(f"after {plugin_name}")
            return result

    manager = PluginManager()
    for plugin, name in ((Late("late"), "late"), (Plain("one"), "one"), (Wrapper(), "wrapper"), (Early("early"), "early"),
                         (Plain("two"), "two")):
        manager.register(plugin, name)
    scheme = Scheme()
    await manager.setup(scheme, Registry(scheme, None, AdmissionChain()), AdmissionChain())  # type: ignore[arg-type]
    around = [f"{step} {name}" if step else name for name in ("early", "one", "two") for step in ("before", "", "after")]
    # an async implementation runs when kplane awaits the coroutine, once the wrappers are done
    assert seen == [*around, "before late", "after late", "late"]


class _Admits:
    """A plugin adding one validating admission plugin, counting its calls."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def kplane_register_admission(self, chain: AdmissionChain) -> None:
        self.calls += 1
        chain.add_validating("admits", lambda request: None)


class _BreaksAround:
    """A wrapper that raises once the implementation it wraps has run."""

    @hookimpl(wrapper=True)
    def kplane_register_admission(self, chain: AdmissionChain) -> Iterator[None]:
        yield
        chain.add_mutating("half", lambda request: None)
        raise RuntimeError("the wrapper broke")


def _wrapped_setup(skip_broken: bool) -> tuple[PluginManager, _Admits, AdmissionChain]:
    manager = PluginManager(skip_broken=skip_broken)
    admits = _Admits()
    manager.register(admits, "admits")
    manager.register(_BreaksAround(), "wrapper")
    return manager, admits, AdmissionChain()


async def test_a_wrapper_that_raises_is_the_broken_plugin() -> None:
    manager, _, chain = _wrapped_setup(skip_broken=False)
    scheme = Scheme()
    with pytest.raises(PluginError, match=r"plugin 'wrapper' failed in kplane_register_admission \(a wrapper, around "
                                          r"plugin 'admits'\): RuntimeError: the wrapper broke \(tests/test_plugins.py") as caught:
        await manager.setup(scheme, Registry(scheme, None, chain), chain)  # type: ignore[arg-type]
    assert caught.value.plugin == "wrapper"


async def test_skip_broken_takes_out_the_wrapper_and_keeps_the_plugin_it_wrapped() -> None:
    manager, admits, chain = _wrapped_setup(skip_broken=True)
    scheme = Scheme()
    await manager.setup(scheme, Registry(scheme, None, chain), chain)  # type: ignore[arg-type]
    status = {p["name"]: (p["status"], p["admission"]) for p in manager.describe()}
    assert status == {"admits": ("loaded", {"mutating": [], "validating": ["admits"]}),
                      "wrapper": ("skipped", {"mutating": [], "validating": []})}
    assert [name for name, _ in chain.validating] == ["admits"] and chain.mutating == []  # the broken call undone
    assert admits.calls == 2  # and made again without the wrapper


async def test_an_error_passing_through_a_wrapper_is_the_wrapped_plugins() -> None:
    class Broken:
        @hookimpl
        def kplane_register_admission(self) -> None:
            raise RuntimeError("boom")

    class Passes:
        @hookimpl(wrapper=True)
        def kplane_register_admission(self) -> Iterator[None]:
            yield

    manager = PluginManager()
    manager.register(Broken(), "broken")
    manager.register(Passes(), "wrapper")
    scheme, chain = Scheme(), AdmissionChain()
    with pytest.raises(PluginError, match=r"^plugin 'broken' failed in kplane_register_admission: RuntimeError: boom"):
        await manager.setup(scheme, Registry(scheme, None, chain), chain)  # type: ignore[arg-type]


async def test_shutdown_goes_in_the_reverse_of_the_post_start_order_then_the_others_last_loaded_first() -> None:
    seen: list[str] = []

    class Stops:
        def __init__(self, name: str) -> None:
            self.name = name

        @hookimpl
        def kplane_shutdown(self) -> None:
            seen.append(f"stop {self.name}")

    class Starts(Stops):
        @hookimpl
        def kplane_post_start(self) -> None:
            seen.append(f"start {self.name}")

    class StartsFirst(Stops):
        @hookimpl(tryfirst=True)
        async def kplane_post_start(self) -> None:
            seen.append(f"start {self.name}")

    manager = PluginManager()
    for plugin in (Starts("a"), Stops("b"), StartsFirst("c"), Starts("d"), Stops("e")):
        manager.register(plugin, plugin.name)
    scheme = Scheme()
    registry = Registry(scheme, None, AdmissionChain())  # type: ignore[arg-type]
    await manager.post_start(registry, "http://127.0.0.1:1")
    await manager.shutdown(registry)
    assert seen == ["start c", "start a", "start d", "stop d", "stop a", "stop c", "stop e", "stop b"]


async def test_a_plugin_taken_out_once_serving_began_is_shut_down_at_once() -> None:
    """Its hooks may have opened sessions or started tasks (as apiregistration's aggregation
    does in kplane_register_filters): taken out under skip_broken, it gets its kplane_shutdown
    then, and no second one when the server stops."""
    from kplane.core.server.apisources import APISources
    from kplane.core.server.filterchain import FilterChain

    class Opens:
        def __init__(self) -> None:
            self.session: aiohttp.ClientSession | None = None
            self.shutdowns = 0

        @hookimpl
        def kplane_register_filters(self) -> None:
            self.session = aiohttp.ClientSession()

        @hookimpl
        def kplane_post_start(self) -> None:
            raise RuntimeError("cannot start")

        @hookimpl
        async def kplane_shutdown(self) -> None:
            self.shutdowns += 1
            assert self.session is not None
            await self.session.close()

    manager = PluginManager(skip_broken=True)
    opens = Opens()
    manager.register(opens, "opens")
    scheme, chain = Scheme(), AdmissionChain()
    registry = Registry(scheme, None, chain)  # type: ignore[arg-type]
    await manager.setup(scheme, registry, chain)
    await manager.register_http(FilterChain(), APISources(), registry, None)  # type: ignore[arg-type]
    await manager.post_start(registry, "http://127.0.0.1:1")
    assert manager.infos["opens"].status == "skipped"
    assert opens.session is not None and opens.session.closed and opens.shutdowns == 1
    await manager.shutdown(registry)
    assert opens.shutdowns == 1
