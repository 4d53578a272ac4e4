"""kplane as the host of an extension API server, and as that server: real processes, as in a
cluster running sample-apiserver.

The host is ``kplane serve`` as it runs by default (HTTPS, RBAC) with ``--token-auth-file``
users. The extension is ``kplane serve --plugins sample_api`` with the delegated flags: its
users are checked by the host's TokenReview, its decisions come from the host's
SubjectAccessReview, and which CAs to trust (the host's client CA, its front proxy's) it reads
from the host's ``kube-system/extension-apiserver-authentication``. The host reaches it through a
Service over HTTPS, verified with the APIService's ``caBundle``, presenting its front-proxy
certificate with the user in ``X-Remote-*`` headers.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from kplane.core.pki.certificates import SubjectAltNames, issue, new_ca
from tests.kubectl_cli import Kubectl
from tests.servers import Served, free_port, serving, wait_ready

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789", "wardle-server": "wardle-token-0123456789"}

FLUNDER = """
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: alices-flunder
"""


def _wardle_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "sample_api" for ep in entry_points(group="kplane.plugins"))


pytestmark = [
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH"),
    pytest.mark.skipif(not _wardle_installed(), reason="the sample_api (wardle.example.com) plugin is not installed"),
]


@dataclass
class Topology:
    host: Served
    extension_url: str
    admin: Kubectl  # the host's admin (its kubeconfig's client certificate)
    users: Kubectl  # the host's URL and CA, no credentials: each call gives --token
    extension_ca: Path  # the CA of the extension's serving certificate

    def as_user(self, name: str, *args: str, server: str | None = None, stdin: str | None = None,
                check: bool = True) -> subprocess.CompletedProcess[str]:
        """kubectl as the token user ``name``, at the host (or at ``server``, the extension)."""
        extra = ["--server", server, "--certificate-authority", str(self.extension_ca)] if server else []
        return self.users.run("--token", TOKENS[name], *extra, *args, stdin=stdin, check=check)


def _kubeconfig(path: Path, server: str, ca: bytes, token: str | None = None) -> Path:
    user = {"token": token} if token else {}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "host",
        "clusters": [{"name": "host", "cluster": {"server": server,
                                                  "certificate-authority-data": base64.b64encode(ca).decode()}}],
        "users": [{"name": "user", "user": user}],
        "contexts": [{"name": "host", "context": {"cluster": "host", "user": "user"}}]}))
    return path


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    work = tmp_path_factory.mktemp("topology")
    tokens = work / "tokens.csv"
    tokens.write_text("".join(f"{token},{name},uid-{name}\n" for name, token in TOKENS.items()))
    with serving(work / "host", "--disable-plugin", "sample_api", "--token-auth-file", str(tokens),
                 "--apiservice-probe-interval", "1", secure=True) as host:
        env = {**os.environ, "KUBECACHEDIR": str(work / "cache"), "HOME": str(work)}
        admin = Kubectl({**env, "KUBECONFIG": str(host.kubeconfig)}, work)
        host_ca = (work / "host" / "pki" / "ca.crt").read_bytes()
        users = Kubectl({**env, "KUBECONFIG": str(_kubeconfig(work / "users.kubeconfig", host.url, host_ca))}, work)
        # What sample-apiserver's artifacts grant the extension server's identity at the host.
        admin.run("create", "clusterrolebinding", "wardle:system:auth-delegator", "--clusterrole=system:auth-delegator",
                  "--user=wardle-server")
        admin.run("create", "rolebinding", "wardle-auth-reader", "-n", "kube-system",
                  "--role=extension-apiserver-authentication-reader", "--user=wardle-server")

        # The extension's serving certificate, valid for its Service's name, and the CA for caBundle.
        ca = new_ca("wardle-ca")
        serving_pair = issue(ca, "api.wardle.svc", sans=SubjectAltNames.parse(["api.wardle.svc", "127.0.0.1"]), server=True)
        (work / "tls.crt").write_bytes(serving_pair.cert_pem())
        (work / "tls.key").write_bytes(serving_pair.key_pem())
        (work / "wardle-ca.crt").write_bytes(ca.cert_pem())
        to_host = _kubeconfig(work / "host.kubeconfig", host.url, host_ca, TOKENS["wardle-server"])
        port = free_port()
        extension = subprocess.Popen(
            [sys.executable, "-m", "kplane.core.cli", "serve", "--plugins", "sample_api", "--no-controllers",
             "--port", str(port), "--data-dir", str(work / "wardle"),
             "--tls-cert-file", str(work / "tls.crt"), "--tls-private-key-file", str(work / "tls.key"),
             "--authentication-kubeconfig", str(to_host), "--authorization-kubeconfig", str(to_host)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        url = f"https://127.0.0.1:{port}"
        try:
            wait_ready(url, extension)
            admin.run("create", "namespace", "wardle")
            admin.run("apply", "-f", "-", stdin=_service_and_api_services(port, ca.cert_pem()))
            waited = admin.run("wait", "--for=condition=Available", "apiservice/v1alpha1.wardle.example.com",
                               "--timeout=20s", check=False)
            assert waited.returncode == 0, admin.json("get", "apiservice", "v1alpha1.wardle.example.com")["status"]
            yield Topology(host, url, admin, users, work / "wardle-ca.crt")
        finally:
            extension.terminate()
            extension.communicate(timeout=10)


def _service_and_api_services(port: int, ca: bytes) -> str:
    """The Service in front of the extension (kplane dials a cluster IP as it is written) and
    the APIService pointing at it, its caBundle the CA that signed the serving certificate."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "wardle"},
               "spec": {"clusterIP": "127.0.0.1", "ports": [{"port": port}]}}
    api_service = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                   "metadata": {"name": "v1alpha1.wardle.example.com"},
                   "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000,
                            "versionPriority": 15, "caBundle": base64.b64encode(ca).decode(),
                            "service": {"namespace": "wardle", "name": "api", "port": port}}}
    return yaml.safe_dump_all([service, api_service])


def test_the_host_publishes_whom_its_extensions_trust(topology: Topology) -> None:
    configmap = topology.admin.json("get", "configmap", "-n", "kube-system", "extension-apiserver-authentication")
    data = configmap["data"]
    host_pki = topology.host.kubeconfig.parent / "pki"
    assert data["client-ca-file"] == (host_pki / "ca.crt").read_text()
    assert data["requestheader-client-ca-file"] == (host_pki / "front-proxy-ca.crt").read_text()
    assert json.loads(data["requestheader-allowed-names"]) == ["front-proxy-client"]
    assert data["requestheader-username-headers"] == '["X-Remote-User"]'  # JSON lists, as kube-apiserver writes them
    assert json.loads(data["requestheader-group-headers"]) == ["X-Remote-Group"]
    assert json.loads(data["requestheader-extra-headers-prefix"]) == ["X-Remote-Extra-"]
    assert json.loads(data["requestheader-uid-headers"]) == ["X-Remote-Uid"]
    role = topology.admin.json("get", "role", "-n", "kube-system", "extension-apiserver-authentication-reader")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"],
                              "resourceNames": ["extension-apiserver-authentication"]}]
    binding = topology.admin.json("get", "rolebinding", "-n", "kube-system", "system::extension-apiserver-authentication-reader")
    assert binding["roleRef"]["name"] == "extension-apiserver-authentication-reader"
    # the extension learnt the same CAs: they are what it wrote down
    wardle_pki = topology.host.kubeconfig.parent.parent / "wardle" / "pki"
    assert (wardle_pki / "host-requestheader-client-ca.crt").read_text() == data["requestheader-client-ca-file"]


def test_a_user_granted_flunders_at_the_host_uses_them_through_it(topology: Topology) -> None:
    resources = topology.admin.run("api-resources", "--api-group=wardle.example.com").stdout
    assert "flunders" in resources and "wardle.example.com/v1alpha1" in resources
    topology.admin.run("create", "clusterrole", "flunder-editor", "--verb=get,list,watch,create,delete",
                       "--resource=flunders.wardle.example.com")
    topology.admin.run("create", "rolebinding", "alice-flunders", "-n", "default", "--clusterrole=flunder-editor",
                       "--user=alice")
    created = topology.as_user("alice", "create", "-f", "-", stdin=FLUNDER)
    assert created.stdout.strip() == "flunder.wardle.example.com/alices-flunder created"
    listed = topology.as_user("alice", "get", "flunders", "-o", "name").stdout.split()
    assert listed == ["flunder.wardle.example.com/alices-flunder"]
    # the same user straight at the extension: its token checked by the host's TokenReview
    direct = topology.as_user("alice", "get", "flunders", "-o", "name", server=topology.extension_url).stdout.split()
    assert direct == listed


def test_a_user_without_the_grant_is_forbidden(topology: Topology) -> None:
    forbidden = ('Error from server (Forbidden): flunders.wardle.example.com is forbidden: User "bob" cannot list '
                 'resource "flunders" in API group "wardle.example.com" in the namespace "default"')
    through_host = topology.as_user("bob", "get", "flunders", check=False)
    assert through_host.returncode == 1 and forbidden in through_host.stderr, through_host.stderr
    # at the extension itself, which asks the host's SubjectAccessReview
    direct = topology.as_user("bob", "get", "flunders", server=topology.extension_url, check=False)
    assert direct.returncode == 1 and forbidden in direct.stderr, direct.stderr


def test_forged_front_proxy_headers_are_not_believed(topology: Topology) -> None:
    """Without the front proxy's client certificate, X-Remote-* headers name nobody: the request
    is anonymous, and the host denies the anonymous user."""
    context = ssl.create_default_context(cafile=str(topology.extension_ca))
    request = urllib.request.Request(f"{topology.extension_url}{FLUNDERS}", headers={
        "X-Remote-User": "alice", "X-Remote-Group": "system:masters", "Accept": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10, context=context)
    assert refused.value.code == 403
    status = json.loads(refused.value.read())
    assert status["message"] == ('flunders.wardle.example.com is forbidden: User "system:anonymous" cannot list '
                                 'resource "flunders" in API group "wardle.example.com" in the namespace "default"')
