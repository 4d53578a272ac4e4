"""Third-party plugins: pip-install a package, restart, and its resource is served."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from core.plugins import PluginError, PluginManager
from core.registry.admission import AdmissionChain
from core.registry.registry import Registry
from core.runtime.scheme import Scheme
from tests.conftest import Client
from tests.servers import serving

FIXTURE = Path(__file__).parent / "fixtures" / "widgets"
WIDGETS = "/apis/widgets.test.kplane.io/v1/namespaces/default/widgets"
ALPHA = "/apis/widgets.test.kplane.io/v1alpha1/namespaces/default/widgets"


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


@pytest.fixture(scope="module")
def widgets_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    source = tmp_path_factory.mktemp("widgets") / "widgets"
    shutil.copytree(FIXTURE, source)
    pip("install", "--no-build-isolation", "--no-deps", str(source))
    try:
        yield
    finally:
        pip("uninstall", "-y", "kplane-widgets-testplugin")


@pytest.fixture
def widget_server(widgets_installed: None, tmp_path: Path) -> Iterator[str]:
    with serving(tmp_path) as served:
        yield served.url
    assert served.process.returncode == 0


def widget(name: str, **spec: object) -> dict:
    return {"apiVersion": "widgets.test.kplane.io/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


async def test_installed_plugin_is_served(widget_server: str) -> None:
    async with aiohttp.ClientSession(base_url=widget_server) as session:
        api = Client(session)
        groups = (await api.get("/apis")).body["groups"]
        assert any(g["name"] == "widgets.test.kplane.io" for g in groups)
        created = await api.post(WIDGETS, widget("w1", replicas=3))
        assert created.status == 201, created
        assert created.body["spec"] == {"replicas": 3, "color": "grey"}
        alpha = (await api.get(f"{ALPHA}/w1")).body
        assert alpha["apiVersion"] == "widgets.test.kplane.io/v1alpha1" and alpha["spec"] == {"size": 3, "color": "grey"}
        alpha["spec"]["size"] = 5
        assert (await api.put(f"{ALPHA}/w1", alpha)).status == 200
        assert (await api.get(f"{WIDGETS}/w1")).body["spec"]["replicas"] == 5

        unconditional = await api.put(f"{WIDGETS}/w1", widget("w1", replicas=4))
        assert unconditional.status == 422 and unconditional.body["details"]["causes"][0]["field"] == "metadata.resourceVersion"
        too_many = await api.post(WIDGETS, widget("w2", replicas=11))
        assert too_many.status == 422 and "must be no more than 10" in too_many.body["message"]
        red = await api.post(WIDGETS, widget("w3", color="red"))
        assert red.status == 403 and red.body["message"] == 'widgets.widgets.test.kplane.io "w3" is forbidden: red widgets are not allowed'
        names = [w["metadata"]["name"] for w in (await api.get(WIDGETS)).body["items"]]
        assert names == ["w1"]


def test_kplane_plugins_lists_what_each_plugin_registers(widgets_installed: None) -> None:
    out = subprocess.run([sys.executable, "-m", "core.cli", "plugins"], capture_output=True, text=True, check=True).stdout
    assert "widgets  (kplane_widgets, kplane-widgets-testplugin 0.1.0)" in out
    assert "Widget (widgets.widgets.test.kplane.io): v1, v1alpha1; stored as v1; namespaced" in out
    assert "Deployment (deployments.apps): v1, v1beta2; stored as v1; namespaced, subresources: scale, status" in out
    assert "kplane_register_strategies" in out


def test_disable_plugin(widgets_installed: None) -> None:
    out = subprocess.run([sys.executable, "-m", "core.cli", "plugins", "--disable-plugin", "widgets"],
                         capture_output=True, text=True, check=True).stdout
    assert "Widget" not in out and "Deployment" in out


async def test_a_plugin_failing_in_a_hook_is_named() -> None:
    class Broken:
        @staticmethod
        def kplane_register_types(scheme):
            raise RuntimeError("boom")

    from core.hookspecs import hookimpl

    Broken.kplane_register_types = hookimpl(Broken.kplane_register_types)  # type: ignore[method-assign]
    manager = PluginManager()
    manager.register(Broken, "broken")
    scheme = Scheme()
    with pytest.raises(PluginError, match="plugin 'broken' failed in kplane_register_types: boom"):
        await manager.setup(scheme, Registry(scheme, None, AdmissionChain()), AdmissionChain())  # type: ignore[arg-type]


async def test_two_plugins_claiming_one_resource_are_refused() -> None:
    scheme = Scheme()
    manager = PluginManager()
    manager.load_entry_points()
    with pytest.raises(PluginError, match="already registered by plugin 'core'"):
        from core.hookspecs import hookimpl
        from plugins.core import types
        from plugins.core.v1 import schemas

        class Copycat:
            @hookimpl
            def kplane_register_types(self, scheme):
                scheme.add_kind(group="", kind="Pod", plural="pods", internal=types.Pod,
                                versions={"v1": schemas.PodSchema}, storage_version="v1", plugin="copycat")

        manager.register(Copycat(), "copycat")
        await manager.setup(scheme, Registry(scheme, None, AdmissionChain()), AdmissionChain())  # type: ignore[arg-type]
