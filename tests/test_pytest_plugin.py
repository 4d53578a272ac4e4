"""kplane's pytest plugin, used the way a user's test suite uses it: test files run by pytest
itself (pytester), with the plugin found through its ``pytest11`` entry point."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=source)
    pytester.makeini("[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n")
    return pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", *args)


def test_objects_from_yaml_and_the_official_client(pytester: pytest.Pytester) -> None:
    result = run(pytester, '''
import kubernetes

def test_configmap(kplane, kplane_client):
    [applied] = kplane.apply("""
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: settings, labels: {team: a}}
        data: {mode: fast}
    """)
    assert applied["metadata"]["resourceVersion"]
    core = kubernetes.client.CoreV1Api(kplane_client)
    assert core.read_namespaced_config_map("settings", "default").data == {"mode": "fast"}
    kplane.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "labels": {"team": "a"}},
                  "data": {"mode": "slow"}})
    assert kplane.get("v1", "ConfigMap", "settings")["data"] == {"mode": "slow"}
    assert [c["metadata"]["name"] for c in kplane.list("v1", "ConfigMap", labelSelector="team=a")] == ["settings"]
    assert [c["metadata"]["name"] for c in kplane.list("v1", "ConfigMap", labelSelector="team in (a, b)")] == ["settings"]
    kplane.delete("v1", "ConfigMap", "settings")
    assert kplane.wait_for("v1", "ConfigMap", "settings", deleted=True) is None

def test_each_test_gets_a_fresh_server(kplane):
    assert kplane.get("v1", "ConfigMap", "settings") is None
    assert kplane.kubeconfig.read_text().count(kplane.url) == 1
''')
    result.assert_outcomes(passed=2)


def test_controllers_roll_out_a_deployment(pytester: pytest.Pytester) -> None:
    result = run(pytester, '''
import pytest

@pytest.mark.kplane(controllers=True, simulated_nodes=2)
def test_rollout(kplane):
    kplane.apply("""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: web}
        spec:
          replicas: 3
          selector: {matchLabels: {app: web}}
          template:
            metadata: {labels: {app: web}}
            spec: {containers: [{name: web, image: nginx}]}
    """)
    web = kplane.wait_for("apps/v1", "Deployment", "web", condition="Available",
                          until=lambda d: d["status"].get("readyReplicas") == 3)
    assert web["status"]["replicas"] == 3
    assert len(kplane.list("v1", "Pod", labelSelector="app=web")) == 3

def test_no_controllers_by_default(kplane):
    kplane.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "idle"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    with pytest.raises(TimeoutError, match="did not reach condition Available=True"):
        kplane.wait_for("apps/v1", "Deployment", "idle", condition="Available", timeout=0.5)
''')
    result.assert_outcomes(passed=2)


def test_async_tests_and_kplanes_own_client(pytester: pytest.Pytester) -> None:
    result = run(pytester, '''
import asyncio
from kplane.core.client.rest import RESTClient

async def test_a_controller_in_the_tests_event_loop(kplane):
    client = RESTClient(kplane.url)
    configmaps = client.resource("", "v1", "configmaps", namespace="default")

    async def controller():  # copies data.source into data.copy, as a controller under test would
        async for event in configmaps.watch(resource_version="0"):
            obj = event.object
            if event.type != "DELETED" and "source" in obj.get("data", {}) and "copy" not in obj["data"]:
                await configmaps.patch(obj["metadata"]["name"], {"data": {"copy": obj["data"]["source"]}})

    task = asyncio.create_task(controller())
    try:
        kplane.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"source": "x"}})
        done = await kplane.wait_for_async("v1", "ConfigMap", "c", until=lambda o: o["data"].get("copy") == "x", timeout=10)
        assert done["data"] == {"source": "x", "copy": "x"}
    finally:
        task.cancel()
        await client.close()
''')
    result.assert_outcomes(passed=1)


def test_a_bad_marker_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(pytester, '''
import pytest

@pytest.mark.kplane(controler=True)
def test_typo(kplane):
    pass
''')
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*UsageError: @pytest.mark.kplane: unknown options*controler*"])


def test_runtime_config_and_apiservice_backends(pytester: pytest.Pytester) -> None:
    """The fixture's server proxies to backends as kplane serve does, unless a test turns them
    off by the flag's dest, and serves a group/version that is off by default when asked."""
    result = run(pytester, '''
import pytest

APISERVICE = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
              "metadata": {"name": "v1.backend.example.com"},
              "spec": {"group": "backend.example.com", "version": "v1", "url": "http://127.0.0.1:9",
                       "groupPriorityMinimum": 100, "versionPriority": 10}}

@pytest.mark.kplane(runtime_config="apps/v1beta2=true")
def test_on(kplane):
    kplane.apply(APISERVICE)
    assert kplane.get("apiregistration.k8s.io/v1", "APIService", "v1.backend.example.com")["spec"]["url"]
    assert kplane.list("apps/v1beta2", "Deployment") == []

@pytest.mark.kplane(apiservice_backends=False)
def test_off(kplane):
    with pytest.raises(Exception, match="no-enable-apiservice-backends"):
        kplane.apply(APISERVICE)
''')
    result.assert_outcomes(passed=2)


def test_plugin_settings(pytester: pytest.Pytester) -> None:
    """The marker sets ``ServerConfig.plugin_settings`` as an embedder would."""
    result = run(pytester, '''
import pytest

@pytest.mark.kplane(plugin_settings={"apiregistration": {"backends": True, "probe_interval": 1}})
def test_on(kplane):
    assert kplane.server.config.plugin_settings["apiregistration"] == {"backends": True, "probe_interval": 1}
    kplane.apply({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                  "metadata": {"name": "v1.backend.example.com"},
                  "spec": {"group": "backend.example.com", "version": "v1", "url": "http://127.0.0.1:9",
                           "groupPriorityMinimum": 100, "versionPriority": 10}})
''')
    result.assert_outcomes(passed=1)


def test_a_plugin_flag_not_in_the_marker_has_its_default(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """As under ``kplane serve``, every plugin flag reaches its plugin, the defaults too (a string
    default through its ``type``); the marker's keyword replaces one."""
    pytester.makepyfile(sized_plugin='''
from kplane.api import hookimpl

SEEN = []

@hookimpl
def kplane_add_options(parser):
    parser.add_argument("--sized-size", dest="sized_size", type=int, default="3")

@hookimpl
def kplane_register_types(plugin_name, config):
    SEEN.append(config.plugin_settings[plugin_name]["sized_size"])
''')
    info = pytester.mkdir("sized-1.0.dist-info")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sized\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[kplane.plugins]\nsized = sized_plugin\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    result = run(pytester, '''
import pytest
import sized_plugin

def test_default(kplane):
    assert sized_plugin.SEEN == [3]
    assert kplane.server.config.plugin_settings["apiregistration"] == {"apiservice_probe_interval": 30.0,
                                                                       "apiservice_backends": True}

@pytest.mark.kplane(sized_size=7)
def test_given(kplane):
    assert sized_plugin.SEEN[-1] == 7
''')
    result.assert_outcomes(passed=2)
