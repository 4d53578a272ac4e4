"""plugins/sample_api/artifacts/example: the manifests that run the wardle server in a cluster.

They are applied with the real kubectl, ``kubectl apply --dry-run=server -f DIR``, to a kplane
host as their README describes it: one that does not serve wardle.example.com itself and takes
APIServices with backends.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubectl_cli import Kubectl
from tests.servers import serving

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "plugins" / "sample_api" / "artifacts" / "example"


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("host")
    with serving(workdir / "data", "--disable-plugin", "sample_api") as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        yield Kubectl(env, workdir)


def _objects() -> list[dict[str, Any]]:
    return [doc for path in sorted(EXAMPLE.glob("*.yaml")) for doc in yaml.safe_load_all(path.read_text()) if doc]


def _served_kinds(kubectl: Kubectl) -> set[tuple[str, str]]:
    """(apiVersion, kind) of every resource discovery lists (APIVERSION and KIND are the last
    columns but two and the last; SHORTNAMES may be empty)."""
    lines = kubectl.run("api-resources", "--no-headers").stdout.splitlines()
    return {(line.split()[-3], line.split()[-1]) for line in lines if line.strip()}


def _reference(obj: dict[str, Any]) -> str:
    """How kubectl names an object in its output: ``deployment.apps/wardle-server``."""
    group = obj["apiVersion"].rpartition("/")[0]
    return f"{obj['kind'].lower()}{'.' + group if group else ''}/{obj['metadata']['name']}"


def test_every_manifest_applies_with_server_dry_run(host: Kubectl) -> None:
    objects = _objects()
    kinds = {(obj["apiVersion"], obj["kind"]) for obj in objects}
    assert {kind for _, kind in kinds} >= {"Namespace", "ServiceAccount", "ConfigMap", "Deployment", "Service",
                                          "APIService", "ClusterRoleBinding", "RoleBinding"}
    assert kinds <= _served_kinds(host), f"kinds kplane does not serve: {kinds - _served_kinds(host)}"

    # The namespaced objects need their Namespace, on kplane as in a cluster (the README's step 3).
    host.run("apply", "-f", str(EXAMPLE / "ns.yaml"))
    applied = host.run("apply", "--dry-run=server", "-f", str(EXAMPLE), check=False)
    assert applied.returncode == 0, applied.stderr
    for obj in objects:
        done = "unchanged" if obj["kind"] == "Namespace" else "created"
        assert f"{_reference(obj)} {done} (server dry run)" in applied.stdout, applied.stdout + applied.stderr
    assert not applied.stderr.strip(), applied.stderr

    # A dry run stores nothing.
    for reference, namespace in (("deployment/wardle-server", "wardle"), ("service/api", "wardle"),
                                 ("apiservice/v1alpha1.wardle.example.com", "")):
        missing = host.run("get", reference, *(("-n", namespace) if namespace else ()), check=False)
        assert missing.returncode != 0 and "NotFound" in missing.stderr, reference


def test_the_deployment_runs_the_wardle_server_with_delegated_flags() -> None:
    (deployment,) = [obj for obj in _objects() if obj["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    args = container["args"]
    assert args[:2] == ["serve", "--plugins=sample_api"] and pod["serviceAccountName"] == "apiserver"
    flags = {arg.partition("=")[0] for arg in args[1:]}
    assert {"--tls-cert-file", "--tls-private-key-file", "--authentication-kubeconfig", "--authorization-kubeconfig",
            "--storage", "--address", "--port"} <= flags
    served = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--help"], capture_output=True, text=True, check=True)
    known = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", served.stdout))
    assert flags <= known, f"flags kplane serve does not take: {flags - known}"

    mounts = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
    files = {arg.partition("=")[2] for arg in args if arg.startswith(("--tls-", "--authentication-", "--authorization-"))}
    assert all(any(path.startswith(mounts[name] + "/") for path in files) for name in ("serving-cert", "host-kubeconfig"))
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    (kubeconfig,) = [obj for obj in _objects() if obj["kind"] == "ConfigMap"]
    assert volumes["host-kubeconfig"]["configMap"]["name"] == kubeconfig["metadata"]["name"]
    assert yaml.safe_load(kubeconfig["data"]["kubeconfig"])["users"][0]["user"]["tokenFile"].startswith(
        "/var/run/secrets/kubernetes.io/serviceaccount/")

    (service,) = [obj for obj in _objects() if obj["kind"] == "Service"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == container["ports"][0]["containerPort"]
    for apiservice in (obj for obj in _objects() if obj["kind"] == "APIService"):
        assert apiservice["spec"]["service"] == {"name": service["metadata"]["name"], "namespace": "wardle",
                                                 "port": service["spec"]["ports"][0]["port"]}
        assert apiservice["spec"]["caBundle"] and not apiservice["spec"].get("insecureSkipTLSVerify")


def test_the_image_recipe_copies_what_the_package_needs() -> None:
    recipe = (EXAMPLE / "Dockerfile").read_text()
    sources = [part for line in recipe.splitlines() if line.startswith("COPY ") for part in line.split()[1:-1]]
    assert set(sources) >= {"pyproject.toml", "setup.py", "kplane", "core", "plugins"}
    assert all((ROOT / source).exists() for source in sources), sources
    assert 'ENTRYPOINT ["kplane"]' in recipe and "USER 10001" in recipe
