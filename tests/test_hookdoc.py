"""docs/hooks.md is generated from core/hookspecs.py, and the hookspecs say what the code does.

* the page is exactly what ``python -m kplane.core.hookdoc`` prints now (regenerate it after editing a
  hookspec docstring);
* every hook documents When, Receives (each parameter, in order), Returns and an Example that
  compiles;
* the plugin API's part lists every name of ``kplane.api.__all__``, each with what it is for, under
  the section kplane/api.py puts it in;
* a recording plugin in a real server sees the hooks in the documented order, with the documented
  arguments, at the documented moments (before /readyz answers ok for kplane_post_start, after it
  for kplane_register_controllers).
"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

import kplane.api
from kplane.core import apidoc, hookdoc, hookspecs
from kplane.core.authn.authenticators import Authenticators
from kplane.core.authz.authorizers import Authorizers
from kplane.core.client.informer import SharedInformerFactory
from kplane.core.controllers.manager import ControllerManager
from kplane.core.hookspecs import hookimpl
from kplane.core.pluginoptions import PluginOptions
from kplane.core.plugins import HOOKS, PluginManager
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from kplane.core.config import ServerConfig
from kplane.core.serving.apiserver import APIServer
from kplane.core.server.apisources import APISources
from kplane.core.server.filterchain import FilterChain
from tests.servers import server_config

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "hooks.md"


def test_docs_hooks_md_is_generated_from_the_hookspecs() -> None:
    printed = subprocess.run([sys.executable, "-m", "kplane.core.hookdoc"], capture_output=True, text=True, check=True,
                             cwd=ROOT).stdout
    assert printed == hookdoc.render()
    assert PAGE.read_text() == printed, "docs/hooks.md is stale: run `python -m kplane.core.hookdoc > docs/hooks.md`"


def test_the_page_is_markdown() -> None:
    page = hookdoc.render()
    assert not re.search(r"(?<!`)``(?!`)", page), "a reST ``literal`` left over (one broken across lines?)"
    assert ":class:" not in page and ":meth:" not in page
    assert page.count("```") % 2 == 0
    hooks_part, _, api_part = page.partition(hookdoc.API_HEADING)
    assert [line[4:] for line in hooks_part.splitlines() if line.startswith("### ")] == list(HOOKS)
    assert [line[4:] for line in api_part.splitlines() if line.startswith("### ")] == [
        hookdoc._inline(s.title[:1].upper() + s.title[1:]) for s in apidoc.sections()]


def test_the_page_lists_every_name_of_the_plugin_api() -> None:
    api_part = hookdoc.render().partition(hookdoc.API_HEADING)[2]
    missing = [name for name in kplane.api.__all__ if f"| `{name}` |" not in api_part]
    assert not missing, f"kplane.api names missing from docs/hooks.md: {missing}"
    entries = [entry for section in apidoc.sections() for entry in section.entries]
    assert sorted(entry.name for entry in entries) == kplane.api.__all__  # each once, nothing else
    assert not [e.name for e in entries if not e.summary], "a name without a docstring (or a #: comment)"
    kinds = {e.name: e.kind for e in entries}
    assert (kinds["Strategy"], kinds["deny"], kinds["errors"], kinds["STAGES"], kinds["Handler"]) == (
        "class", "function", "module", "constant", "type alias")


@pytest.mark.parametrize("hook", hookdoc.hooks(), ids=lambda h: h.__name__)
def test_each_hook_is_documented(hook: Any) -> None:
    sections = hookdoc.sections(hook)
    assert list(sections) == ["", *hookdoc.SECTIONS], f"{hook.__name__}: sections out of order or missing"
    assert sections[""], "a summary first"
    assert hookdoc.received(hook) == hookdoc.parameters(hook), "Receives must name every parameter, in order"
    assert "plugin_name" in hookdoc.parameters(hook)
    [example] = hookdoc.examples(inspect.getdoc(hook) or "")
    compile(example, f"<{hook.__name__} example>", "exec")
    assert f"def {hook.__name__}(" in example and "@hookimpl" in example


def test_the_module_examples_compile() -> None:
    blocks = hookdoc.examples(inspect.cleandoc(hookspecs.__doc__ or ""))
    assert len(blocks) == 2 and blocks[0].startswith("# pyproject.toml") and blocks[1].startswith("kplane: plugin 'widgets'")


class Recorder:
    """A plugin implementing every hook, taking every argument, noting what it got and when."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.server: APIServer | None = None
        self.readyz: dict[str, int] = {}

    async def _readyz(self, hook: str) -> None:
        assert self.server is not None and self.server.url
        async with aiohttp.ClientSession() as session, session.get(f"{self.server.url}/readyz") as reply:
            self.readyz[hook] = reply.status

    @hookimpl
    def kplane_add_options(self, parser: PluginOptions, plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_add_options", {"parser": parser, "plugin_name": plugin_name, "config": config}))

    @hookimpl
    def kplane_register_types(self, scheme: Scheme, plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_types", {"scheme": scheme, "plugin_name": plugin_name, "config": config}))

    @hookimpl
    def kplane_register_conversions(self, plugin_name: str, scheme: Scheme, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_conversions", {"scheme": scheme, "plugin_name": plugin_name, "config": config}))

    @hookimpl
    async def kplane_register_strategies(self, registry: Registry, authenticators: Authenticators,
                                         authorizers: Authorizers, plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_strategies", {"registry": registry, "authenticators": authenticators,
                                                          "authorizers": authorizers, "plugin_name": plugin_name,
                                                          "config": config}))

    @hookimpl
    def kplane_register_admission(self, chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None,
                                  plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_admission",
                           {"chain": chain, "registry": registry, "informers": informers, "plugin_name": plugin_name, "config": config}))

    @hookimpl
    def kplane_register_authenticators(self, authenticators: Authenticators, registry: Registry,
                                       informers: SharedInformerFactory | None, plugin_name: str,
                                       config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_authenticators", {"authenticators": authenticators, "registry": registry,
                                                              "informers": informers, "plugin_name": plugin_name,
                                                              "config": config}))

    @hookimpl
    def kplane_register_authorizers(self, authorizers: Authorizers, registry: Registry,
                                    informers: SharedInformerFactory | None, plugin_name: str,
                                    config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_authorizers", {"authorizers": authorizers, "registry": registry,
                                                           "informers": informers, "plugin_name": plugin_name,
                                                           "config": config}))

    @hookimpl
    def kplane_register_filters(self, filters: FilterChain, registry: Registry, informers: SharedInformerFactory,
                                plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_filters",
                           {"filters": filters, "registry": registry, "informers": informers, "plugin_name": plugin_name, "config": config}))

    @hookimpl
    def kplane_register_api_sources(self, sources: APISources, registry: Registry, informers: SharedInformerFactory,
                                    plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_api_sources",
                           {"sources": sources, "registry": registry, "informers": informers, "plugin_name": plugin_name, "config": config}))

    @hookimpl
    async def kplane_post_start(self, registry: Registry, server_url: str, plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_post_start", {"registry": registry, "server_url": server_url, "plugin_name": plugin_name, "config": config}))
        await self._readyz("kplane_post_start")

    @hookimpl
    async def kplane_register_controllers(self, manager: ControllerManager, plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_register_controllers", {"manager": manager, "plugin_name": plugin_name, "config": config}))
        await self._readyz("kplane_register_controllers")

    @hookimpl
    async def kplane_shutdown(self, registry: Registry, plugin_name: str, config: ServerConfig | None) -> None:
        self.calls.append(("kplane_shutdown", {"registry": registry, "plugin_name": plugin_name, "config": config}))


async def test_a_server_calls_the_hooks_as_documented(tmp_path: Path) -> None:
    recorder = Recorder()
    plugins = PluginManager()  # as kplane serve: loaded, asked for their flags, then served
    plugins.load_entry_points(only=frozenset({"core"}))
    plugins.register(recorder, "recorder")
    options = PluginOptions()
    plugins.add_options(options)
    server = APIServer(server_config(data_dir=tmp_path, port=0, plugins=frozenset({"core"}), simulated_nodes=0,
                                     leader_election=None, write_kubeconfig=False), plugins)
    recorder.server = server
    await server.start()
    try:
        assert [hook for hook, _ in recorder.calls] == list(HOOKS)[:-1]  # kplane_shutdown comes with stop()
        assert isinstance(recorder.calls[-1][1]["manager"], ControllerManager)
        assert recorder.calls[-1][1]["manager"] is server.controllers
        # kplane_post_start: listening, not ready yet (503);
        # kplane_register_controllers: ready.
        assert recorder.readyz == {"kplane_post_start": 503, "kplane_register_controllers": 200}
    finally:
        await server.stop()
    assert [hook for hook, _ in recorder.calls] == list(HOOKS) == [h.__name__ for h in hookdoc.hooks()]
    for hook, args in recorder.calls:
        assert set(args) == set(hookdoc.parameters(getattr(hookspecs, hook)))  # every argument offered
        assert args["plugin_name"] == "recorder"
    got = {name: value for _, args in recorder.calls for name, value in args.items()}
    assert got["parser"] is options
    assert got["scheme"] is server.scheme and got["registry"] is server.registry and got["chain"] is server.admission
    assert got["server_url"] == server.url and got["config"] is server.config
    assert isinstance(got["informers"], SharedInformerFactory) and got["informers"] is server.informers
    assert got["authenticators"] is server.authenticators and got["authorizers"] is server.authorizers
    assert isinstance(got["filters"], FilterChain) and isinstance(got["sources"], APISources)
    assert server.registry is not None and server.registry.storage is not None  # storage opened first
