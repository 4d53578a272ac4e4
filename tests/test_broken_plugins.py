"""Broken plugins, installed for real: how `kplane serve` and `kplane plugins` report them, and how
`--skip-broken-plugins` starts without them, taking out everything they added.

Three distributions are built from the sources below and pip-installed (``pip install --target``)
into a temporary folder that only the processes started here have on their ``PYTHONPATH``: the
venv is never touched, so tests running at the same time (or after) never see these plugins, and
there is nothing to uninstall.

* ``kplane-broken 0.3.0``: one healthy plugin (``gadgets``) and one plugin per way of breaking;
* ``kplane-rival 1.2.0``: plugins claiming what ``gadgets`` or the built-in ``core`` registered;
* ``kplane-gadgets-fork 2.0.0``: a second plugin named ``gadgets`` (installed in its own folder,
  on the path only where a test asks for it).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.distributions import pyproject, write
from tests.servers import free_port, wait_ready

KINDS = '''\
"""A small kind for the plugins here: ``spec.size``, the same shape in every version."""

from dataclasses import dataclass, field, make_dataclass

from kplane.core.meta.schemas import ObjectMetaSchema
from kplane.core.meta.types import ObjectMeta
from kplane.core.runtime import fields
from kplane.core.runtime.schema import Schema


@dataclass
class Spec:
    size: int | None = None


class SpecSchema(Schema):
    size = fields.Int()


def add_kind(scheme, group, kind, plural, versions, **options):
    internal = make_dataclass(kind, [("metadata", ObjectMeta, field(default_factory=ObjectMeta)),
                                     ("spec", Spec, field(default_factory=Spec))])
    schema = type(f"{kind}Schema", (Schema,), {"metadata": fields.Nested(ObjectMetaSchema),
                                               "spec": fields.Nested(SpecSchema)})
    scheme.add_kind(group=group, kind=kind, plural=plural, internal=internal,
                    versions={v: schema for v in versions}, storage_version=versions[0], **options)
'''

BROKEN = {
    "pyproject.toml": pyproject("kplane-broken", "0.3.0", {"kplane.plugins": {
        "gadgets": "broken_plugins.gadgets",
        "bad_import": "broken_plugins.imports",
        "ghost": "broken_plugins.ghost",
        "no_attr": "broken_plugins.attrs:hooks",
        "half_types": "broken_plugins.half_types",
        "bad_strategy": "broken_plugins.bad_strategy",
        "bad_admission": "broken_plugins.bad_admission",
        "bad_post_start": "broken_plugins.bad_post_start",
        "bad_controllers": "broken_plugins.bad_controllers",
        "typo_hook": "broken_plugins.typo_hook",
        "unmarked": "broken_plugins.unmarked",
    }}, packages=["broken_plugins"]),
    "broken_plugins/__init__.py": "",
    "broken_plugins/kinds.py": KINDS,
    "broken_plugins/gadgets.py": '''\
"""Healthy: gadgets.example.com Gadget (v1, v1beta1) with a status, an admission rule, a controller."""

import asyncio

from kplane.core.hookspecs import hookimpl
from kplane.core.registry.admission import deny
from kplane.core.registry.strategy import Strategy

from broken_plugins.kinds import add_kind

GROUP = "gadgets.example.com"


@hookimpl
def kplane_register_types(scheme, plugin_name):
    add_kind(scheme, GROUP, "Gadget", "gadgets", ["v1", "v1beta1"], short_names=["gd"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1", "v1beta1"])


@hookimpl
def kplane_register_strategies(registry):
    registry.add_strategy(GROUP, "gadgets", Strategy())
    registry.add_strategy(GROUP, "gadgets", Strategy(), subresource="status")


def positive(request):
    if request.resource.group == GROUP and request.obj is not None and (request.obj.spec.size or 0) < 0:
        raise deny(request, "gadgets have a positive size")


@hookimpl
def kplane_register_admission(chain):
    chain.add_validating("GadgetsArePositive", positive)


class Idle:
    async def run(self):
        await asyncio.Event().wait()


@hookimpl
def kplane_register_controllers(manager):
    manager.add("gadget-idler", Idle())
''',
    "broken_plugins/imports.py": '''\
"""Fails to import: a dependency that is not installed."""

import kplane_no_such_dependency  # noqa: F401
''',
    "broken_plugins/attrs.py": '''\
"""The entry point names broken_plugins.attrs:hooks, which does not exist."""

from kplane.core.hookspecs import hookimpl


@hookimpl
def kplane_register_types(scheme):
    pass
''',
    "broken_plugins/half_types.py": '''\
"""Registers one kind, then raises: the kind must not stay behind."""

from kplane.core.hookspecs import hookimpl

from broken_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme, plugin_name):
    add_kind(scheme, "halves.example.com", "Half", "halves", ["v1"], plugin=plugin_name)
    raise RuntimeError("the second kind is not ready")
''',
    "broken_plugins/bad_strategy.py": '''\
"""Types and a defaulter on core's ConfigMap succeed; the strategies hook fails."""

from kplane.core.hookspecs import hookimpl

from broken_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "sprockets.example.com", "Sprocket", "sprockets", ["v1"])


def mark(configmap):
    configmap["data"] = {**(configmap.get("data") or {}), "defaulted-by": "bad_strategy"}


@hookimpl
def kplane_register_conversions(scheme):
    scheme.add_defaulter("", "v1", "ConfigMap", mark)


@hookimpl
def kplane_register_strategies(registry):
    strategies = {}
    registry.add_strategy("sprockets.example.com", "sprockets", strategies["sprocket"])
''',
    "broken_plugins/bad_admission.py": '''\
"""Adds an admission plugin that refuses everything, asks for an informer, then raises."""

from kplane.core.hookspecs import hookimpl
from kplane.core.registry.admission import deny

from broken_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "cogs.example.com", "Cog", "cogs", ["v1"])


def refuse(request):
    raise deny(request, "bad_admission refuses everything")


@hookimpl
def kplane_register_admission(chain, informers):
    chain.add_validating("RefuseEverything", refuse)
    if informers is not None:
        informers.informer("cogs.example.com", "v1", "cogs")
    raise ValueError("no admission configuration found")
''',
    "broken_plugins/bad_post_start.py": '''\
"""Fails in its post-start hook, once the server listens."""

from kplane.core.hookspecs import hookimpl

from broken_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "flanges.example.com", "Flange", "flanges", ["v1"])


@hookimpl
async def kplane_post_start(registry):
    raise ConnectionError("cannot reach the flange registry")
''',
    "broken_plugins/bad_controllers.py": '''\
"""Adds a controller, then fails: the controller must never run."""

from kplane.core.hookspecs import hookimpl

from broken_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "spindles.example.com", "Spindle", "spindles", ["v1"], namespaced=False)


class Spinner:
    def __init__(self, client):
        self.client = client

    async def run(self):
        configmaps = self.client.resource("", "v1", "configmaps", "default")
        await configmaps.create({"metadata": {"name": "spinner-ran"}})


@hookimpl
def kplane_register_controllers(manager):
    manager.add("spinner", Spinner(manager.client))
    manager.add("spinner", Spinner(manager.client))  # twice
''',
    "broken_plugins/typo_hook.py": '''\
"""A misspelt hook."""

from kplane.core.hookspecs import hookimpl


@hookimpl
def kplane_register_type(scheme):
    pass
''',
    "broken_plugins/unmarked.py": '''\
"""A hook without @hookimpl."""


def kplane_register_types(scheme):
    pass
''',
}

RIVAL = {
    "pyproject.toml": pyproject("kplane-rival", "1.2.0", {"kplane.plugins": {
        "rival_gadgets": "rival_plugins.resource",
        "rival_kind": "rival_plugins.kind",
        "rival_strategy": "rival_plugins.strategy",
        "a_pods": "rival_plugins.pods",
    }}, packages=["rival_plugins"]),
    "rival_plugins/__init__.py": "",
    "rival_plugins/kinds.py": KINDS,
    "rival_plugins/resource.py": '''\
"""Claims gadgets.gadgets.example.com, which the gadgets plugin registers."""

from kplane.core.hookspecs import hookimpl

from rival_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "gadgets.example.com", "Gizmo", "gadgets", ["v1"])
''',
    "rival_plugins/kind.py": '''\
"""Claims the kind Gadget of gadgets.example.com, under another resource name."""

from kplane.core.hookspecs import hookimpl

from rival_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "gadgets.example.com", "Gadget", "gizmoids", ["v1"])
''',
    "rival_plugins/strategy.py": '''\
"""Replaces the strategy of core's pods (one that validates nothing)."""

from kplane.core.hookspecs import hookimpl
from kplane.core.registry.strategy import Strategy


@hookimpl
def kplane_register_strategies(registry):
    registry.add_strategy("", "pods", Strategy())
''',
    "rival_plugins/pods.py": '''\
"""Claims core's pods; its name sorts before every built-in plugin's, yet core loads first."""

from kplane.core.hookspecs import hookimpl

from rival_plugins.kinds import add_kind


@hookimpl
def kplane_register_types(scheme):
    add_kind(scheme, "", "Pod", "pods", ["v1"])
''',
}

FORK = {
    "pyproject.toml": pyproject("kplane-gadgets-fork", "2.0.0", {"kplane.plugins": {"gadgets": "gadgets_fork.plugin"}},
                                packages=["gadgets_fork"]),
    "gadgets_fork/__init__.py": "",
    "gadgets_fork/plugin.py": '''\
from kplane.core.hookspecs import hookimpl


@hookimpl
def kplane_register_types(scheme):
    pass
''',
}


def line(sources: dict[str, str], path: str, text: str) -> int:
    """The line of ``path`` that holds ``text``: where the failure is expected to be reported."""
    [number] = [n for n, source in enumerate(sources[path].splitlines(), 1) if text in source]
    return number


# What each broken plugin is reported as (the one line `kplane: ...` prints, and the problem
# /debug/plugins gives), with the plugins it is started with.
PROBLEMS = {
    "bad_import": "plugin 'bad_import' (kplane-broken 0.3.0) failed to import broken_plugins.imports: ModuleNotFoundError: "
                  "No module named 'kplane_no_such_dependency' (broken_plugins/imports.py, line "
                  f"{line(BROKEN, 'broken_plugins/imports.py', 'import kplane_no_such_dependency')})",
    "ghost": "plugin 'ghost' (kplane-broken 0.3.0): its entry point names module broken_plugins.ghost, which does not exist "
             "(ModuleNotFoundError: No module named 'broken_plugins.ghost')",
    "no_attr": "plugin 'no_attr' (kplane-broken 0.3.0): its entry point names broken_plugins.attrs:hooks, but "
               "broken_plugins.attrs has no attribute 'hooks'",
    "half_types": "plugin 'half_types' (kplane-broken 0.3.0) failed in kplane_register_types: RuntimeError: the second kind "
                  f"is not ready (broken_plugins/half_types.py, line {line(BROKEN, 'broken_plugins/half_types.py', 'raise RuntimeError')})",
    "bad_strategy": "plugin 'bad_strategy' (kplane-broken 0.3.0) failed in kplane_register_strategies: KeyError: 'sprocket' "
                    f"(broken_plugins/bad_strategy.py, line {line(BROKEN, 'broken_plugins/bad_strategy.py', 'strategies[')})",
    "bad_admission": "plugin 'bad_admission' (kplane-broken 0.3.0) failed in kplane_register_admission: ValueError: no "
                     "admission configuration found (broken_plugins/bad_admission.py, line "
                     f"{line(BROKEN, 'broken_plugins/bad_admission.py', 'raise ValueError')})",
    "bad_post_start": "plugin 'bad_post_start' (kplane-broken 0.3.0) failed in kplane_post_start: ConnectionError: cannot "
                      "reach the flange registry (broken_plugins/bad_post_start.py, line "
                      f"{line(BROKEN, 'broken_plugins/bad_post_start.py', 'raise ConnectionError')})",
    "bad_controllers": "plugin 'bad_controllers' (kplane-broken 0.3.0) failed in kplane_register_controllers: ValueError: "
                       "controller 'spinner' is already registered (broken_plugins/bad_controllers.py, line "
                       f"{line(BROKEN, 'broken_plugins/bad_controllers.py', '# twice')})",
    "typo_hook": "plugin 'typo_hook' (kplane-broken 0.3.0) implements kplane_register_type (did you mean "
                 "kplane_register_types?), which kplane does not have (its hooks: kplane_add_options, "
                 "kplane_register_types, kplane_register_conversions, kplane_register_strategies, "
                 "kplane_register_admission, kplane_register_authenticators, "
                 "kplane_register_authorizers, kplane_register_filters, kplane_register_api_sources, kplane_post_start, "
                 "kplane_register_controllers, kplane_shutdown)",
    "unmarked": "plugin 'unmarked' (kplane-broken 0.3.0): kplane_register_types lack @hookimpl (from kplane.core.hookspecs import "
                "hookimpl), so kplane would never call them",
    "rival_gadgets": "plugin 'rival_gadgets' (kplane-rival 1.2.0) conflicts with plugin 'gadgets' (kplane-broken 0.3.0): "
                     "both register gadgets.gadgets.example.com",
    "rival_kind": "plugin 'rival_kind' (kplane-rival 1.2.0) conflicts with plugin 'gadgets' (kplane-broken 0.3.0): "
                  "both register kind Gadget of group gadgets.example.com",
    "rival_strategy": "plugin 'rival_strategy' (kplane-rival 1.2.0) conflicts with plugin 'core' (kplane 0.1.0): it "
                      "registers a strategy for pods.core, which 'core' registers",
    "a_pods": "plugin 'a_pods' (kplane-rival 1.2.0) conflicts with plugin 'core' (kplane 0.1.0): both register pods.core",
}
NEEDS = {"rival_gadgets": "gadgets", "rival_kind": "gadgets"}  # the plugin a rival conflicts with
ONLY_SERVE = {"bad_post_start"}  # `kplane plugins` runs no post-start hook
SERVE_FLAGS = ("--no-controllers", "--simulated-nodes", "0", "--authorization-mode", "AlwaysAllow")  # no rbac plugin


def pip_install_target(source: Path, target: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install", "--no-build-isolation",
                    "--no-deps", "--target", str(target), str(source)], check=True)


@dataclass
class Installed:
    path: str  # PYTHONPATH holding kplane-broken and kplane-rival
    fork: str  # a folder with kplane-gadgets-fork alone


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("broken")
    site, fork = root / "site", root / "fork-site"
    for name, files, target in (("broken", BROKEN, site), ("rival", RIVAL, site), ("fork", FORK, fork)):
        pip_install_target(write(root / "src" / name, files), target)
    assert (site / "kplane_broken-0.3.0.dist-info").is_dir() and (fork / "kplane_gadgets_fork-2.0.0.dist-info").is_dir()
    return Installed(str(site), str(fork))


def env(pythonpath: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": pythonpath}


def kplane(pythonpath: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kplane.core.cli", *args], check=False, capture_output=True, text=True, timeout=30,
                          env=env(pythonpath))


def plugins_flag(name: str) -> str:
    return ",".join(["core", *([NEEDS[name]] if name in NEEDS else []), name])


def stopped_with(done: subprocess.CompletedProcess[str], name: str) -> None:
    """Exit code 1, the problem on one line and how to go on without the plugin; no traceback."""
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-2:] == [
        f"kplane: {PROBLEMS[name]}",
        f"kplane: to go on without it: --disable-plugin {name}, or --skip-broken-plugins (-v shows the traceback)",
    ]


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_a_broken_plugin_stops_serve(installed: Installed, tmp_path: Path, name: str) -> None:
    """Whenever the plugin breaks: bad_controllers only once the server listened and was ready,
    since controllers are registered last (and not at all with --no-controllers)."""
    flags = ("--simulated-nodes", "0", "--authorization-mode", "AlwaysAllow") if name == "bad_controllers" else SERVE_FLAGS
    done = kplane(installed.path, "serve", "--port", "0", "--data-dir", str(tmp_path), *flags,
                  "--plugins", plugins_flag(name))
    stopped_with(done, name)
    assert "kplane is serving" not in done.stdout


@pytest.mark.parametrize("name", sorted(set(PROBLEMS) - ONLY_SERVE))
def test_a_broken_plugin_stops_kplane_plugins(installed: Installed, name: str) -> None:
    done = kplane(installed.path, "plugins", "--plugins", plugins_flag(name))
    stopped_with(done, name)
    assert done.stdout == ""


def test_verbose_shows_the_traceback(installed: Installed) -> None:
    done = kplane(installed.path, "plugins", "-v", "--plugins", "core,half_types")
    assert done.returncode == 1
    assert done.stderr.startswith(f"kplane: {PROBLEMS['half_types']}\nTraceback (most recent call last):\n")
    assert 'half_types.py", line' in done.stderr and "RuntimeError: the second kind is not ready" in done.stderr


@dataclass
class Running:
    url: str
    process: subprocess.Popen[str]
    log: Path  # its stderr


def http(url: str, method: str = "GET", body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


EVERYTHING = ["core", "gadgets", *sorted(PROBLEMS)]
GADGETS = {
    "name": "gadgets",
    "module": "broken_plugins.gadgets",
    "distribution": "kplane-broken",
    "version": "0.3.0",
    "status": "loaded",
    "problem": "",
    "hooks": ["kplane_register_admission", "kplane_register_controllers", "kplane_register_strategies",
              "kplane_register_types"],
    "groups": [{"name": "gadgets.example.com", "preferredVersion": "v1", "versions": [
        {"version": v, "resources": [{"kind": "Gadget", "resource": "gadgets", "scope": "Namespaced",
                                      "storageVersion": "v1", "subresources": ["status"], "shortNames": ["gd"]}]}
        for v in ("v1", "v1beta1")]}],
    "admission": {"mutating": [], "validating": ["GadgetsArePositive"]},
    "controllers": ["gadget-idler"],
}


@pytest.fixture(scope="module")
def skipping(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    """One `kplane serve --skip-broken-plugins` with every broken plugin and the healthy ones."""
    data_dir = tmp_path_factory.mktemp("skipping")
    port = free_port()
    log = data_dir / "stderr"
    with log.open("w") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "serve", "--port", str(port), "--data-dir", str(data_dir),
                                    "--simulated-nodes", "0", "--plugins", ",".join(EVERYTHING), "--skip-broken-plugins", "--http"],
                                   stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env(installed.path))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process, limit=30)
        yield Running(url, process, log)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    assert process.returncode == 0, log.read_text()


def debug_plugins(url: str) -> list[dict[str, Any]]:
    """GET /debug/plugins, once the controllers (registered right after /readyz turns ok) are in."""
    deadline = time.monotonic() + 10
    while True:
        status, body = http(f"{url}/debug/plugins")
        assert status == 200
        gadgets = next(p for p in body if p["name"] == "gadgets")
        if gadgets["controllers"] or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def test_skip_broken_plugins_reports_each_in_debug_plugins(skipping: Running) -> None:
    described = debug_plugins(skipping.url)
    # kplane's own plugins first, then the others by name: a_pods comes after core, whose pods it claims.
    assert [p["name"] for p in described] == ["core", *sorted(n for n in EVERYTHING if n != "core")]
    by_name = {p["name"]: p for p in described}
    for name, problem in PROBLEMS.items():
        assert (by_name[name]["status"], by_name[name]["problem"]) == ("skipped", problem)
        assert by_name[name]["groups"] == [] and by_name[name]["controllers"] == []
        assert by_name[name]["admission"] == {"mutating": [], "validating": []}
    assert by_name["gadgets"] == GADGETS
    core = by_name["core"]
    assert (core["status"], core["problem"], core["distribution"], core["module"]) == ("loaded", "", "kplane", "kplane.plugins.core")
    assert "kplane_post_start" in core["hooks"] and core["admission"]["validating"] == ["NamespaceLifecycle", "LimitRanger", "ResourceQuota"]
    [group] = core["groups"]
    assert group["name"] == "" and group["preferredVersion"] == "v1"
    pods = next(r for r in group["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods == {"kind": "Pod", "resource": "pods", "scope": "Namespaced", "storageVersion": "v1",
                    "subresources": ["attach", "binding", "eviction", "exec", "log", "portforward", "proxy", "status"], "shortNames": ["po"]}


def test_skip_broken_plugins_logs_each_and_serves_the_rest(skipping: Running) -> None:
    url = skipping.url
    status, groups = http(f"{url}/apis")
    assert status == 200
    names = {g["name"] for g in groups["groups"]}
    assert "gadgets.example.com" in names
    # Nothing half-registered: the kinds of every skipped plugin are gone, even those registered
    # by hooks that succeeded, and the later plugin of a conflict is the one left out.
    assert not names & {"halves.example.com", "sprockets.example.com", "cogs.example.com", "flanges.example.com",
                        "spindles.example.com"}
    _, gadget_versions = http(f"{url}/apis/gadgets.example.com/v1")
    assert [(r["name"], r["kind"]) for r in gadget_versions["resources"]] == [("gadgets", "Gadget"), ("gadgets/status", "Gadget")]
    assert http(f"{url}/apis/halves.example.com/v1/halves")[0] == 404
    assert http(f"{url}/apis/flanges.example.com/v1/flanges")[0] == 404  # taken out after the post-start hook failed

    created = http(f"{url}/apis/gadgets.example.com/v1/namespaces/default/gadgets", "POST",
                   {"apiVersion": "gadgets.example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"size": 2}})
    assert created[0] == 201, created
    refused = http(f"{url}/apis/gadgets.example.com/v1/namespaces/default/gadgets", "POST",
                   {"apiVersion": "gadgets.example.com/v1", "kind": "Gadget", "metadata": {"name": "h"}, "spec": {"size": -1}})
    assert refused[0] == 403 and refused[1]["message"].endswith("gadgets have a positive size")

    # bad_admission's RefuseEverything and bad_strategy's ConfigMap defaulter were taken out.
    status, configmap = http(f"{url}/api/v1/namespaces/default/configmaps", "POST",
                             {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}})
    assert status == 201, configmap
    assert configmap["data"] == {"a": "b"}
    # rival_strategy's pod strategy was taken out: core's validation is back.
    status, pod = http(f"{url}/api/v1/namespaces/default/pods", "POST",
                       {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}})
    assert status == 422 and pod["details"]["causes"][0]["field"] == "spec.containers", pod
    # bad_controllers' controller never ran.
    time.sleep(1.0)
    assert http(f"{url}/api/v1/namespaces/default/configmaps/spinner-ran")[0] == 404

    # Each skipped plugin was logged once, as a warning; no traceback.
    err = skipping.log.read_text()
    assert "Traceback" not in err
    warnings = [entry.split(" WARNING kplane.core.plugins: ", 1)[1] for entry in err.splitlines() if " WARNING kplane.core.plugins: " in entry]
    assert sorted(warnings) == sorted(f"{problem}; skipped, kplane goes on without it (--skip-broken-plugins)"
                                      for problem in PROBLEMS.values())


def test_kplane_plugins_marks_skipped_plugins(installed: Installed) -> None:
    done = kplane(installed.path, "plugins", "--skip-broken-plugins", "--plugins", ",".join(EVERYTHING))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert textwrap.dedent("""\
        gadgets  (broken_plugins.gadgets, kplane-broken 0.3.0)
          hooks: kplane_register_admission, kplane_register_controllers, kplane_register_strategies, kplane_register_types
          Gadget (gadgets.gadgets.example.com): v1, v1beta1; stored as v1; namespaced, subresources: status
          group gadgets.example.com: v1 (preferred), v1beta1
          admission: validating GadgetsArePositive
          controllers: gadget-idler
        """) in text
    assert textwrap.dedent(f"""\
        half_types  (broken_plugins.half_types, kplane-broken 0.3.0)  SKIPPED
          problem: {PROBLEMS['half_types']}
          hooks: kplane_register_types
        """) in text
    assert textwrap.dedent(f"""\
        ghost  (broken_plugins.ghost, kplane-broken 0.3.0)  SKIPPED
          problem: {PROBLEMS['ghost']}
          hooks: \n""") in text
    for name in set(PROBLEMS) - ONLY_SERVE:
        assert f"{name}  (" in text and f"  problem: {PROBLEMS[name]}\n" in text
    assert "bad_post_start  (broken_plugins.bad_post_start, kplane-broken 0.3.0)\n" in text  # loaded: no post-start here
    assert "Pod (pods.core): v1; stored as v1; namespaced, subresources: attach, binding, eviction, exec, log, portforward, proxy, status" in text


def test_kplane_plugins_json_is_debug_plugins(installed: Installed, skipping: Running) -> None:
    """`kplane plugins -o json` gives the document the server serves, but for the post-start
    hook, which only the server runs."""
    done = kplane(installed.path, "plugins", "-o", "json", "--skip-broken-plugins", "--plugins", ",".join(EVERYTHING))
    assert done.returncode == 0, done.stderr
    listed = {p["name"]: p for p in json.loads(done.stdout)}
    served = {p["name"]: p for p in debug_plugins(skipping.url)}
    assert listed.keys() == served.keys()
    for name in listed.keys() - ONLY_SERVE:
        assert listed[name] == served[name], name
    assert listed["bad_post_start"]["status"] == "loaded" and served["bad_post_start"]["status"] == "skipped"


def test_two_distributions_with_one_plugin_name(installed: Installed) -> None:
    pythonpath = os.pathsep.join([installed.path, installed.fork])
    problem = ("plugin 'gadgets' (kplane-gadgets-fork 2.0.0) has the same name as plugin 'gadgets' (kplane-broken 0.3.0); "
               "they name gadgets_fork.plugin and broken_plugins.gadgets, and only the first is loaded")
    done = kplane(pythonpath, "plugins", "--plugins", "core,gadgets")
    assert done.returncode == 1 and done.stderr.splitlines()[0] == f"kplane: {problem}"
    done = kplane(pythonpath, "plugins", "--plugins", "core,gadgets", "--skip-broken-plugins", "-o", "json")
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)
    assert [(p["name"], p["distribution"], p["status"], p["problem"]) for p in described] == [
        ("core", "kplane", "loaded", ""),
        ("gadgets", "kplane-broken", "loaded", ""),
        ("gadgets", "kplane-gadgets-fork", "skipped", problem),
    ]


def test_plugins_here_are_not_installed_in_the_venv(installed: Installed) -> None:
    """The packages above are on the path of this module's processes only."""
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "plugins"], check=False, capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0 and "kplane-broken" not in done.stdout and "kplane-rival" not in done.stdout
