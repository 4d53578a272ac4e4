"""Kubeconfig loading (files, merging, contexts, credentials, TLS) and a client built from it."""

from __future__ import annotations

import base64
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

from kplane.core.client.kubeconfig import ClientConfig, KubeconfigError, client_from_kubeconfig, load_kubeconfig
from kplane.core.client.rest import RESTClient
from kplane.core.serving.apiserver import APIServer


def kubeconfig(path: Path, *, current: str | None = "a", clusters: dict[str, Any] | None = None,
               users: dict[str, Any] | None = None, contexts: dict[str, Any] | None = None) -> Path:
    """Write a kubeconfig from name -> body maps; the default is one context "a" on cluster "c" as user "u"."""
    config: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": b} for n, b in (clusters if clusters is not None else {"c": {"server": "http://c:1"}}).items()],
        "users": [{"name": n, "user": b} for n, b in (users if users is not None else {"u": {"token": "tok"}}).items()],
        "contexts": [{"name": n, "context": b} for n, b in (contexts if contexts is not None else {"a": {"cluster": "c", "user": "u"}}).items()],
    }
    if current is not None:
        config["current-context"] = current
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(autouse=True)
def no_ambient_kubeconfig(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Neither the developer's KUBECONFIG nor ~/.kube/config may leak into a test."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_current_context_namespace_and_override(tmp_path: Path) -> None:
    path = kubeconfig(
        tmp_path / "kc",
        clusters={"c1": {"server": "http://one:1"}, "c2": {"server": "http://two:2"}},
        users={"u1": {"token": "t1"}, "u2": {"token": "t2"}},
        contexts={"a": {"cluster": "c1", "user": "u1", "namespace": "team"}, "b": {"cluster": "c2", "user": "u2"}},
    )
    current = load_kubeconfig(path)
    assert (current.context, current.server, current.token, current.namespace) == ("a", "http://one:1", "t1", "team")
    assert current.ssl is None  # plain http
    other = load_kubeconfig(path, context="b")
    assert (other.context, other.server, other.token, other.namespace) == ("b", "http://two:2", "t2", "default")


def test_secrets_stay_out_of_repr(tmp_path: Path) -> None:
    cfg = load_kubeconfig(kubeconfig(tmp_path / "kc", users={"u": {"token": "s3cret"}}))
    assert cfg.token == "s3cret" and "s3cret" not in repr(cfg)


def test_kubeconfig_env_merges_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = kubeconfig(tmp_path / "one", current="one", clusters={"c": {"server": "http://first:1"}},
                       users={"u": {"token": "first"}}, contexts={"one": {"cluster": "c", "user": "u"}})
    second = kubeconfig(tmp_path / "two", current="two", clusters={"c": {"server": "http://second:2"}, "only2": {"server": "http://only2:2"}},
                        users={"u": {"token": "second"}},
                        contexts={"two": {"cluster": "c", "user": "u", "namespace": "ns2"}, "three": {"cluster": "only2", "user": "u"}})
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'missing'}::{second}:{first}")
    cfg = load_kubeconfig()
    assert (cfg.context, cfg.server, cfg.token) == ("one", "http://first:1", "first")
    # A context from the second file still uses the first file's cluster "c" and user "u": whole entries, first wins.
    cfg = load_kubeconfig(context="two")
    assert (cfg.server, cfg.token, cfg.namespace) == ("http://first:1", "first", "ns2")
    assert load_kubeconfig(context="three").server == "http://only2:2"

    monkeypatch.setenv("KUBECONFIG", f"{second}:{first}")
    cfg = load_kubeconfig()
    assert (cfg.context, cfg.server, cfg.token) == ("two", "http://second:2", "second")


def test_explicit_path_ignores_kubeconfig_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = kubeconfig(tmp_path / "env", clusters={"c": {"server": "http://env:1"}})
    explicit = kubeconfig(tmp_path / "explicit", current="x", contexts={"x": {"cluster": "c", "user": "u"}})
    monkeypatch.setenv("KUBECONFIG", str(env))
    assert load_kubeconfig(explicit).server == "http://c:1"
    with pytest.raises(KubeconfigError, match='context "a" does not exist'):
        load_kubeconfig(explicit, context="a")  # only in the KUBECONFIG file


def test_home_kube_config_without_env(tmp_path: Path) -> None:
    kubeconfig(tmp_path / "home" / ".kube" / "config", clusters={"c": {"server": "http://home:1"}})
    assert load_kubeconfig().server == "http://home:1"


def test_relative_paths_follow_the_defining_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "creds").mkdir()
    (tmp_path / "creds" / "token").write_text("  from-file\n")
    (tmp_path / "token").write_text("wrong-folder\n")
    main = kubeconfig(tmp_path / "kc", users={})
    creds = kubeconfig(tmp_path / "creds" / "kc", current=None, clusters={}, contexts={}, users={"u": {"tokenFile": "token"}})
    monkeypatch.setenv("KUBECONFIG", f"{main}:{creds}")
    monkeypatch.chdir(tmp_path)
    assert load_kubeconfig().token == "from-file"


def test_token_wins_over_token_file(tmp_path: Path) -> None:
    cfg = load_kubeconfig(kubeconfig(tmp_path / "kc", users={"u": {"token": "inline", "tokenFile": "nowhere"}}))
    assert cfg.token == "inline"


def test_basic_auth_header(tmp_path: Path) -> None:
    cfg = load_kubeconfig(kubeconfig(tmp_path / "kc", users={"u": {"username": "admin", "password": "pw"}}))
    assert cfg.token is None
    assert cfg.auth_headers == {"Authorization": "Basic " + base64.b64encode(b"admin:pw").decode()}
    assert ClientConfig(server="http://x").auth_headers == {}


@pytest.mark.parametrize(("setup", "message"), [
    ({"path": "absent"}, "does not exist"),
    ({"text": "clusters: [unclosed"}, "malformed kubeconfig"),
    ({"text": "- just\n- a list\n"}, "not a mapping"),
    ({"text": "clusters: {c: 1}\n"}, "clusters is not a list"),
    ({"text": "clusters: [{cluster: {server: 'http://x'}}]\n"}, "needs a name"),
    ({"context": "nope"}, 'context "nope" does not exist'),
    ({"current": None}, "no current-context"),
    ({"contexts": {"a": {"user": "u"}}}, "names no cluster"),
    ({"contexts": {"a": {"cluster": "gone", "user": "u"}}}, 'cluster "gone" of context "a" does not exist'),
    ({"contexts": {"a": {"cluster": "c", "user": "gone"}}}, 'user "gone" of context "a" does not exist'),
    ({"clusters": {"c": {"insecure-skip-tls-verify": True}}}, 'cluster "c" has no server'),
    ({"users": {"u": {"token": "t", "username": "x", "password": "y"}}}, "more than one authentication method"),
    ({"users": {"u": {"exec": {"command": "aws"}}}}, "exec is not supported"),
    ({"users": {"u": {"tokenFile": "missing-token"}}}, "cannot read tokenFile"),
    ({"clusters": {"c": {"server": "https://c:1", "certificate-authority-data": "not base64!"}}}, "certificate-authority-data is not valid base64"),
    ({"clusters": {"c": {"server": "https://c:1", "certificate-authority-data": base64.b64encode(b"junk").decode()}}}, "unusable certificate-authority"),
    ({"clusters": {"c": {"server": "https://c:1", "certificate-authority": "ca.pem"}}}, "cannot read certificate-authority"),
    ({"users": {"u": {"client-certificate": "c.pem"}}, "clusters": {"c": {"server": "https://c:1"}}}, "needs a client key"),
])
def test_errors(tmp_path: Path, setup: dict[str, Any], message: str) -> None:
    path = tmp_path / "kc"
    if "text" in setup:
        path.write_text(setup["text"])
    elif "path" not in setup:
        kubeconfig(path, **{k: v for k, v in setup.items() if k != "context"})
    with pytest.raises(KubeconfigError, match=message):
        load_kubeconfig(tmp_path / setup.get("path", "kc"), context=setup.get("context"))


def test_no_kubeconfig_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KubeconfigError, match="no kubeconfig found"):
        load_kubeconfig()
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'x'}:{tmp_path / 'y'}")
    with pytest.raises(KubeconfigError, match="no kubeconfig found"):
        load_kubeconfig()


# -- TLS ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A throwaway self-signed certificate for kplane.test, used as server CA, server cert and client cert."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=kplane.test",
                    "-addext", "subjectAltName=DNS:kplane.test"], check=True, capture_output=True)
    return cert, key


@pytest.fixture
async def tls_server(certificate: tuple[Path, Path]) -> AsyncIterator[str]:
    """An HTTPS echo server on 127.0.0.1 that demands a client certificate signed by ``certificate``."""
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(cert))
    context.load_cert_chain(cert, key)
    context.verify_mode = ssl.CERT_REQUIRED

    async def echo(request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        subject = dict(pair[0] for pair in peer["subject"]) if peer else {}
        return web.json_response({"authorization": request.headers.get("Authorization"), "client": subject.get("commonName")})

    app = web.Application()
    app.router.add_get("/", echo)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    try:
        yield f"https://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


async def test_inline_ca_client_cert_and_server_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     certificate: tuple[Path, Path], tls_server: str) -> None:
    cert, key = certificate
    cluster = {"server": tls_server, "certificate-authority-data": _b64(cert), "tls-server-name": "kplane.test"}
    user = {"token": "t0k", "client-certificate-data": _b64(cert), "client-key-data": _b64(key)}
    path = kubeconfig(tmp_path / "kc", clusters={"c": cluster}, users={"u": user})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    client = client_from_kubeconfig(path)
    try:
        assert await client.request("GET", "/") == {"authorization": "Bearer t0k", "client": "kplane.test"}
    finally:
        await client.close()
    assert list(scratch.iterdir()) == []  # the inline cert and key were written only for loading, then removed

    # Dialling 127.0.0.1 without tls-server-name: the certificate (for kplane.test) does not match.
    del cluster["tls-server-name"]
    client = client_from_kubeconfig(kubeconfig(tmp_path / "kc", clusters={"c": cluster}, users={"u": user}))
    try:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await client.request("GET", "/")
    finally:
        await client.close()


async def test_insecure_and_client_cert_files(tmp_path: Path, certificate: tuple[Path, Path], tls_server: str) -> None:
    cert, key = certificate
    (tmp_path / "pki").mkdir()
    shutil.copy(cert, tmp_path / "pki" / "client.crt")
    shutil.copy(key, tmp_path / "pki" / "client.key")
    cluster = {"server": tls_server, "insecure-skip-tls-verify": True}
    user = {"username": "admin", "password": "pw", "client-certificate": "pki/client.crt", "client-key": "pki/client.key"}
    client = client_from_kubeconfig(kubeconfig(tmp_path / "kc", clusters={"c": cluster}, users={"u": user}))
    try:
        reply = await client.request("GET", "/")
    finally:
        await client.close()
    assert reply == {"authorization": "Basic " + base64.b64encode(b"admin:pw").decode(), "client": "kplane.test"}


def test_insecure_with_a_ca_is_refused(tmp_path: Path, certificate: tuple[Path, Path]) -> None:
    cluster = {"server": "https://c:1", "insecure-skip-tls-verify": True, "certificate-authority-data": _b64(certificate[0])}
    with pytest.raises(KubeconfigError, match="insecure-skip-tls-verify is not allowed"):
        load_kubeconfig(kubeconfig(tmp_path / "kc", clusters={"c": cluster}))


# -- against kplane -----------------------------------------------------------------------------
async def test_the_kubeconfig_kplane_writes(server: APIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(server.kubeconfig_path))
    cfg = load_kubeconfig()
    assert (cfg.server, cfg.namespace, cfg.context, cfg.token) == (server.url, "default", "kplane", None)
    client = RESTClient.from_config(cfg)
    try:
        configmaps = client.resource("", "v1", "configmaps", namespace=cfg.namespace)
        await configmaps.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "via-kubeconfig"}})
        assert (await configmaps.get("via-kubeconfig"))["metadata"]["namespace"] == "default"
    finally:
        await client.close()
