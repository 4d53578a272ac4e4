"""HTTPS by default: `kplane serve` makes its CA and certificates in DATA_DIR/pki, serves TLS with
them, and writes a kubeconfig that kubectl and the Python clients use with full verification;
--tls-cert-file serves the operator's certificate instead; plain HTTP only with --http on loopback."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import datetime
import os
import shutil
import socket
import ssl
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web
from cryptography import x509

from kplane.core.authn.clientcert import peer_certificate
from kplane.core.client.kubeconfig import client_from_kubeconfig
from kplane.core.client.rest import RESTClient
from kplane.core.client.tls import TLSClientConfig
from kplane.core.config import ServerConfig
from kplane.core.pki.certificates import KeyPair, SubjectAltNames, fingerprint, issue, new_ca
from kplane.core.pki.store import PKIFolder
from kplane.core.pytest_plugin import Cluster
from kplane.core.serving.apiserver import APIServer
from kplane.core.serving.datadir import StartupError
from kplane.core.serving.tls import loopback_certificate, prepare_secure_serving
from tests.builders import deployment
from tests.conftest import Client
from tests.servers import Served, free_port, serving, start
from tests.test_deployment_controller import complete, deployments

needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(kubeconfig.parent)}
    done = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=30)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def served_certificate(port: int, server_name: str | None = None) -> x509.Certificate:
    """The certificate the server presents (not verified: the tests compare it themselves)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port)) as raw, context.wrap_socket(raw, server_hostname=server_name) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def kubeconfig_of(served: Served) -> dict[str, Any]:
    return yaml.safe_load(served.kubeconfig.read_text())


@pytest.fixture(scope="module")
def tls_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `kplane serve` as a user starts it: no flags but where and which port."""
    with serving(tmp_path_factory.mktemp("tls") / "data", "--no-controllers", secure=True) as served:
        yield served


# -- the zero-setup default ----------------------------------------------------------------------
@needs_kubectl
def test_kubectl_works_over_https_with_the_written_kubeconfig(tls_served: Served) -> None:
    assert tls_served.url.startswith("https://")
    config = kubeconfig_of(tls_served)
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    assert cluster["server"] == tls_served.url and "insecure-skip-tls-verify" not in cluster
    ca = x509.load_pem_x509_certificate(base64.b64decode(cluster["certificate-authority-data"]))
    assert ca == x509.load_pem_x509_certificate((tls_served.kubeconfig.parent / "pki" / "ca.crt").read_bytes())
    admin = x509.load_pem_x509_certificate(base64.b64decode(user["client-certificate-data"]))
    assert admin.subject.rfc4514_string() == "CN=kplane-admin,O=system:masters"
    eku = admin.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]
    assert "default" in kubectl(tls_served.kubeconfig, "get", "namespaces", "-o", "name").stdout
    kubectl(tls_served.kubeconfig, "create", "configmap", "over-tls", "--from-literal=a=b")
    assert kubectl(tls_served.kubeconfig, "get", "configmap", "over-tls", "-o", "jsonpath={.data.a}").stdout == "b"


def test_the_official_client_and_lightkube_verify_the_server(tls_served: Served) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    with kubernetes.config.new_client_from_config(config_file=str(tls_served.kubeconfig)) as api:
        assert api.configuration.verify_ssl
        names = [ns.metadata.name for ns in kubernetes.client.CoreV1Api(api).list_namespace().items]
    assert "kube-system" in names
    lightkube = pytest.importorskip("lightkube")
    from lightkube.resources.core_v1 import Namespace
    client = lightkube.Client(lightkube.KubeConfig.from_file(str(tls_served.kubeconfig)))
    assert "default" in [ns.metadata.name for ns in client.list(Namespace)]


def test_kr8s_verifies_the_server(tls_served: Served) -> None:
    kr8s = pytest.importorskip("kr8s")
    api = kr8s.api(kubeconfig=str(tls_served.kubeconfig))
    assert "default" in [ns.name for ns in api.get("namespaces")]


async def test_the_rest_client_from_the_kubeconfig(tls_served: Served) -> None:
    client = client_from_kubeconfig(tls_served.kubeconfig)
    try:
        assert (await client.request("GET", "/api/v1/namespaces/default"))["metadata"]["name"] == "default"
    finally:
        await client.close()


async def test_a_client_that_does_not_trust_the_ca_is_refused(tls_served: Served) -> None:
    with pytest.raises(urllib.error.URLError) as refused:  # the system's CAs: kplane's is not among them
        urllib.request.urlopen(f"{tls_served.url}/version", timeout=5)
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    stranger = RESTClient(tls_served.url, ssl=TLSClientConfig(ca_data=new_ca("someone-else").cert_pem()).context())
    try:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await stranger.request("GET", "/version")
    finally:
        await stranger.close()


@needs_kubectl
def test_kubectl_without_the_ca_or_with_a_foreign_certificate_fails(tls_served: Served, tmp_path: Path) -> None:
    config = kubeconfig_of(tls_served)
    del config["clusters"][0]["cluster"]["certificate-authority-data"]
    untrusting = tmp_path / "untrusting"
    untrusting.write_text(yaml.safe_dump(config))
    failed = kubectl(untrusting, "get", "namespaces", check=False)
    assert failed.returncode != 0 and "certificate signed by unknown authority" in failed.stderr
    # A client certificate the client CA did not sign ends the handshake: never served as anonymous.
    stranger = issue(new_ca("someone-else"), "mallory", organizations=["system:masters"], client=True)
    config = kubeconfig_of(tls_served)
    config["users"][0]["user"] = {"client-certificate-data": base64.b64encode(stranger.cert_pem()).decode(),
                                  "client-key-data": base64.b64encode(stranger.key_pem()).decode()}
    forged = tmp_path / "forged"
    forged.write_text(yaml.safe_dump(config))
    failed = kubectl(forged, "get", "--raw", "/version", check=False)
    # The server ends the handshake; Go reports it as EOF, a TLS alert or a reset, by timing.
    assert failed.returncode != 0 and failed.stdout == "", failed.stdout
    assert "Unable to connect to the server" in failed.stderr, failed.stderr


def test_files_are_private(tls_served: Served) -> None:
    data = tls_served.kubeconfig.parent
    pki = data / "pki"
    assert stat.S_IMODE(pki.stat().st_mode) == 0o700
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in pki.iterdir()}
    assert modes == dict.fromkeys(["ca.crt", "ca.key", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key",
                                   "front-proxy-ca.crt", "front-proxy-ca.key", "front-proxy-client.crt",
                                   "front-proxy-client.key"], 0o600)
    assert stat.S_IMODE(tls_served.kubeconfig.stat().st_mode) == 0o600


def test_the_startup_message_says_how_to_use_the_kubeconfig(tmp_path: Path) -> None:
    port = free_port()
    process = start(tmp_path / "data", "--no-controllers", port=port, secure=True)
    try:
        lines = [process.stdout.readline() for _ in range(3)] if process.stdout else []
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert lines == [f"kplane is serving on https://127.0.0.1:{port}\n",
                     f"  export KUBECONFIG={(tmp_path / 'data' / 'kubeconfig').resolve()}\n",
                     "  kubectl get namespaces\n"]


# -- reuse, renewal, names -----------------------------------------------------------------------
def test_certificates_are_reused_across_a_restart_and_a_new_san_renews_only_the_serving_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serving(data, "--no-controllers", secure=True) as first:
        ca, serving_cert = fingerprint(served_certificate(first.port)), (data / "pki" / "apiserver.crt").read_bytes()
        admin = (data / "pki" / "admin.crt").read_bytes()
    ca = fingerprint(x509.load_pem_x509_certificate((data / "pki" / "ca.crt").read_bytes()))
    with serving(data, "--no-controllers", secure=True) as second:
        assert (data / "pki" / "apiserver.crt").read_bytes() == serving_cert
        assert (data / "pki" / "admin.crt").read_bytes() == admin
        assert served_certificate(second.port) == x509.load_pem_x509_certificate(serving_cert)
    with serving(data, "--no-controllers", "--tls-san", "kplane.example.com,10.1.2.3", "--tls-san", "api.example.com",
                 secure=True) as third:
        served = served_certificate(third.port)
        names = SubjectAltNames.of(served)
        assert {"kplane.example.com", "api.example.com", "localhost", socket.gethostname().lower()} <= names.dns
        assert {"10.1.2.3", "127.0.0.1", "::1"} <= {str(ip) for ip in names.ips}
        assert fingerprint(x509.load_pem_x509_certificate((data / "pki" / "ca.crt").read_bytes())) == ca
        assert (data / "pki" / "admin.crt").read_bytes() == admin
        assert kubeconfig_of(third)["clusters"][0]["cluster"]["server"] == third.url


def test_a_serving_certificate_near_its_end_or_not_from_the_ca_is_made_anew(tmp_path: Path) -> None:
    pki = PKIFolder(tmp_path / "pki")
    ca = pki.ensure_ca()
    sans = SubjectAltNames.parse(["127.0.0.1"])
    long_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=350)
    ending = issue(ca, "kube-apiserver", sans=sans, server=True, now=long_ago)  # 15 days left
    (tmp_path / "pki" / "apiserver.crt").write_bytes(ending.cert_pem())
    (tmp_path / "pki" / "apiserver.key").write_bytes(ending.key_pem())
    cert_file, _ = pki.ensure_serving(ca, sans)
    renewed = x509.load_pem_x509_certificate(cert_file.read_bytes())
    assert renewed.serial_number != ending.cert.serial_number
    assert renewed.not_valid_after_utc > datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=300)
    foreign = issue(new_ca("other"), "kube-apiserver", sans=sans, server=True)
    cert_file.write_bytes(foreign.cert_pem())
    (tmp_path / "pki" / "apiserver.key").write_bytes(foreign.key_pem())
    pki.ensure_serving(ca, sans)
    assert x509.load_pem_x509_certificate(cert_file.read_bytes()).issuer == ca.cert.subject
    assert pki.ensure_serving(ca, sans) == (cert_file, tmp_path / "pki" / "apiserver.key")
    assert x509.load_pem_x509_certificate(cert_file.read_bytes()).issuer == ca.cert.subject


def test_the_ca_is_never_replaced_behind_the_operators_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    prepare_secure_serving(ServerConfig(data_dir=data), loopback_certificate())
    ca_key = data / "pki" / "ca.key"
    ca_key.write_bytes(new_ca("other").key_pem())  # a key that is not the CA's
    with pytest.raises(StartupError, match="do not make a CA"):
        prepare_secure_serving(ServerConfig(data_dir=data), loopback_certificate())
    expired = new_ca("kplane-ca", now=datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=3651))
    ca_key.write_bytes(expired.key_pem())
    (data / "pki" / "ca.crt").write_bytes(expired.cert_pem())
    with pytest.raises(StartupError, match="expired on"):
        prepare_secure_serving(ServerConfig(data_dir=data), loopback_certificate())
    assert (data / "pki" / "ca.crt").read_bytes() == expired.cert_pem()  # left for the operator to decide


# -- the operator's own certificate, the client CA -----------------------------------------------
def own_pki(folder: Path) -> tuple[KeyPair, Path, Path]:
    """A CA of the operator's and a serving certificate it signed for 127.0.0.1, as files."""
    ca = new_ca("operator-ca")
    leaf = issue(ca, "my-apiserver", sans=SubjectAltNames.parse(["127.0.0.1"]), server=True)
    folder.mkdir()
    (folder / "ca.crt").write_bytes(ca.cert_pem())
    (folder / "tls.crt").write_bytes(leaf.cert_pem())
    (folder / "tls.key").write_bytes(leaf.key_pem())
    return ca, folder / "tls.crt", folder / "tls.key"


@needs_kubectl
def test_tls_cert_file_is_served_instead(tmp_path: Path) -> None:
    _, cert, key = own_pki(tmp_path / "mine")
    data = tmp_path / "data"
    with serving(data, "--no-controllers", "--tls-cert-file", str(cert), "--tls-private-key-file", str(key),
                 secure=True) as served:
        assert served_certificate(served.port) == x509.load_pem_x509_certificate(cert.read_bytes())
        assert not (data / "pki" / "apiserver.crt").exists()
        config = kubeconfig_of(served)
        assert "certificate-authority-data" not in config["clusters"][0]["cluster"]  # the system's CAs, or the operator's
        assert "client-certificate-data" in config["users"][0]["user"]
        unknown = kubectl(served.kubeconfig, "get", "ns", check=False)
        assert unknown.returncode != 0 and "certificate signed by unknown authority" in unknown.stderr
        listed = kubectl(served.kubeconfig, "--certificate-authority", str(tmp_path / "mine" / "ca.crt"), "get", "ns", "-o", "name")
        assert "namespace/default" in listed.stdout
        # The server's own clients verify it whatever it serves others: they ask for their own name.
        assert SubjectAltNames.of(served_certificate(served.port, "apiserver-loopback-client")).dns == {"apiserver-loopback-client"}


def test_a_client_ca_file_of_the_operators_checks_client_certificates(tmp_path: Path) -> None:
    ca, _, _ = own_pki(tmp_path / "mine")
    data = tmp_path / "data"
    with serving(data, "--no-controllers", "--client-ca-file", str(tmp_path / "mine" / "ca.crt"), secure=True) as served:
        assert "client-certificate-data" not in kubeconfig_of(served)["users"][0]["user"]  # kplane's would be refused
        theirs = issue(ca, "alice", client=True)
        context = TLSClientConfig(ca_data=(data / "pki" / "ca.crt").read_bytes(), cert_data=theirs.cert_pem(),
                                  key_data=theirs.key_pem()).context()
        with urllib.request.urlopen(f"{served.url}/version", timeout=5, context=context) as reply:
            assert reply.status == 200
        ours = PKIFolder(data / "pki").ensure_admin(PKIFolder(data / "pki").ensure_ca())
        context = TLSClientConfig(ca_data=(data / "pki" / "ca.crt").read_bytes(), cert_data=ours.cert_pem(),
                                  key_data=ours.key_pem()).context()
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            urllib.request.urlopen(f"{served.url}/version", timeout=5, context=context).read()


@pytest.mark.parametrize(("args", "message"), [
    (["--http", "--address", "0.0.0.0"], "--http serves plain HTTP, without TLS: only on a loopback address, not on 0.0.0.0"),
    (["--http", "--address", "10.0.0.1"], "not on 10.0.0.1"),
    (["--http", "--tls-san", "a.example.com"], "--http serves plain HTTP: --tls-san would not be used"),
    (["--tls-cert-file", "x.crt"], "--tls-cert-file and --tls-private-key-file go together"),
    (["--tls-cert-file", "x.crt", "--tls-private-key-file", "x.key"], "cannot serve x.crt with x.key"),
    (["--client-ca-file", "nowhere.crt"], "--client-ca-file nowhere.crt cannot be read: No such file or directory"),
])
def test_refused_at_startup(tmp_path: Path, args: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", str(free_port()),
                           "--data-dir", str(tmp_path / "data"), *args], capture_output=True, text=True, timeout=30,
                          cwd=tmp_path)
    assert done.returncode == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_tls_san_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--tls-san", "not a name"],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode == 2 and "not an IP address or DNS name: 'not a name'" in done.stderr


def test_http_on_loopback_is_plain_warned_and_without_credentials(tmp_path: Path) -> None:
    with serving(tmp_path / "data", "--no-controllers") as served:  # the suite's default: --http
        assert served.url.startswith("http://")
        config = kubeconfig_of(served)
        assert config["clusters"][0]["cluster"] == {"server": served.url} and config["users"][0]["user"] == {}
        assert not (tmp_path / "data" / "pki").exists()
        with urllib.request.urlopen(f"{served.url}/version", timeout=5) as reply:
            assert reply.status == 200
        err = served.stop()
    assert "WARNING" in err and f"serving plain HTTP on {served.url} (--http)" in err


# -- in-process -------------------------------------------------------------------------------------
def test_an_embedders_server_config_is_secure() -> None:
    assert ServerConfig().tls


@pytest.mark.secure
@pytest.mark.controllers
async def test_the_in_process_controllers_and_informers_talk_https(server: APIServer, api: Client) -> None:
    assert server.url.startswith("https://")
    created = await api.post("/apis/apps/v1/namespaces/default/deployments", deployment("web", replicas=2))
    assert created.status == 201, created
    client = client_from_kubeconfig(server.kubeconfig_path)
    try:
        done = await complete(client, "web", timeout=20)
    finally:
        await client.close()
    assert done["status"]["availableReplicas"] == 2


async def test_a_separate_controller_manager_with_the_written_kubeconfig(tmp_path: Path) -> None:
    with serving(tmp_path / "data", "--no-controllers", secure=True) as served:
        manager = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "controller-manager", "--kubeconfig",
                                    str(served.kubeconfig), "--no-leader-elect"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        client = client_from_kubeconfig(served.kubeconfig)
        try:
            await deployments(client).create(deployment("web", replicas=2))
            done = await complete(client, "web", timeout=20)
            assert done["status"]["availableReplicas"] == 2
        finally:
            await client.close()
            manager.terminate()
            _, err = manager.communicate(timeout=10)
    assert "Traceback" not in err, err


async def test_peer_certificate_is_the_verified_client_certificate(tmp_path: Path) -> None:
    loopback = loopback_certificate()
    serving_tls = await asyncio.to_thread(prepare_secure_serving, ServerConfig(data_dir=tmp_path), loopback)
    assert serving_tls.admin is not None and serving_tls.ca_data is not None

    async def whoami(request: web.Request) -> web.Response:
        cert = peer_certificate(request)
        return web.json_response(cert.subject.rfc4514_string() if cert is not None else None)

    app = web.Application()
    app.router.add_get("/", whoami)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, ssl_context=serving_tls.listener).start()
    plain = web.AppRunner(app)
    await plain.setup()
    await web.TCPSite(plain, "127.0.0.1", 0).start()
    url = f"https://127.0.0.1:{runner.addresses[0][1]}/"
    admin = TLSClientConfig(ca_data=serving_tls.ca_data, cert_data=serving_tls.admin.cert_pem(),
                            key_data=serving_tls.admin.key_pem())
    try:
        async with aiohttp.ClientSession() as session:
            for tls, seen in ((admin, "CN=kplane-admin,O=system:masters"), (TLSClientConfig(ca_data=serving_tls.ca_data), None)):
                async with session.get(url, ssl=tls.context()) as reply:
                    assert await reply.json() == seen
            async with session.get(f"http://127.0.0.1:{plain.addresses[0][1]}/") as reply:
                assert await reply.json() is None
            # Asking for the loopback name changes nothing about client certificates.
            stranger = issue(new_ca("someone-else"), "mallory", organizations=["system:masters"], client=True)
            as_loopback = TLSClientConfig(ca_data=loopback.cert_pem(), server_name="apiserver-loopback-client")
            async with session.get(url, ssl=as_loopback.context()) as reply:
                assert await reply.json() is None
            forged = dataclasses.replace(as_loopback, cert_data=stranger.cert_pem(), key_data=stranger.key_pem())
            with pytest.raises(aiohttp.ClientError):
                async with session.get(url, ssl=forged.context()) as reply:
                    await reply.read()
    finally:
        await runner.cleanup()
        await plain.cleanup()


@pytest.mark.kplane(secure=True)
def test_the_pytest_fixture_serves_https_when_asked(kplane: Cluster, kplane_client: Any) -> None:
    assert kplane.url.startswith("https://")
    kplane.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "secure"}, "data": {"a": "b"}})
    kubernetes = pytest.importorskip("kubernetes")
    read = kubernetes.client.CoreV1Api(kplane_client).read_namespaced_config_map("secure", "default")
    assert read.data == {"a": "b"}


def test_the_pytest_fixture_defaults_to_plain_http(kplane: Cluster) -> None:
    assert kplane.url.startswith("http://")
