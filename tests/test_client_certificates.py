"""x509 client certificates and the front proxy's request headers, through a real TLS server
that asks for client certificates and real HTTPS clients presenting them."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from cryptography import x509
from aiohttp import web
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID

from kplane.core.authn.authenticators import AuthenticationError, Authenticators, StaticTokens
from kplane.core.authn.clientcert import CertificateAuthority, ClientCertificates
from kplane.core.pki.certificates import issue as pki_issue, new_ca as pki_ca
from kplane.core.authn.configured import AuthenticationConfigError, add_configured
from kplane.core.authn.filter import authenticated, authentication_filter
from kplane.core.authn.options import AuthenticationOptions, RequestHeaderOptions, add_flags, from_args
from kplane.core.authn.requestheader import HeaderNames, RequestHeaders
from kplane.core.authn.user import UserInfo
from kplane.core.server.app import status_errors
from kplane.core.server.filterchain import AUTHENTICATION, FilterChain
from tests.certs import Issued, client_context, issue, new_ca, server_context

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
PROXY_NAMES = HeaderNames(("X-Remote-User",), ("X-Remote-Uid",), ("X-Remote-Group",), ("X-Remote-Extra-",))


@dataclass
class PKI:
    folder: Path
    server_ca: Issued
    client_ca: Issued  # --client-ca-file
    proxy_ca: Issued  # --requestheader-client-ca-file
    foreign_ca: Issued  # trusted by the handshake, by no authenticator


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return PKI(tmp_path_factory.mktemp("pki"), new_ca("server-ca"), new_ca("client-ca"), new_ca("front-proxy-ca"),
               new_ca("foreign-ca"))


async def _whoami(request: web.Request) -> web.Response:
    """Who the request is, and every header that reached the handler."""
    return web.json_response({"user": authenticated(request).user.to_api(), "headers": list(request.headers)})


@pytest.fixture
async def serve(pki: PKI) -> AsyncIterator:
    """``await serve(authenticators)``: the URL of a TLS server authenticating with them."""
    runners: list[web.AppRunner] = []

    async def start(authenticators: Authenticators) -> str:
        chain = FilterChain()
        chain.add(AUTHENTICATION, "Authentication", authentication_filter(authenticators))
        app = web.Application(middlewares=[status_errors, chain.middleware])
        app.router.add_get("/whoami", _whoami)
        runner = web.AppRunner(app)
        await runner.setup()
        runners.append(runner)
        context = server_context(issue(pki.server_ca, "localhost", usage=ExtendedKeyUsageOID.SERVER_AUTH,
                                       hosts=["localhost"]), pki.folder,
                                 [pki.client_ca, pki.proxy_ca, pki.foreign_ca])
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        return f"https://localhost:{runner.addresses[0][1]}"

    yield start
    for runner in runners:
        await runner.cleanup()


async def _get(pki: PKI, url: str, client: Issued | None = None, headers: list[tuple[str, str]] | None = None,
               token: str = "") -> tuple[int, dict]:
    context = client_context(pki.server_ca, pki.folder, client)
    sent = list(headers or []) + ([("Authorization", f"Bearer {token}")] if token else [])
    connector = aiohttp.TCPConnector(ssl=context)
    async with aiohttp.ClientSession(connector=connector) as session, \
            session.get(f"{url}/whoami", headers=sent) as reply:
        return reply.status, await reply.json(content_type=None)


def _x509(pki: PKI) -> Authenticators:
    authenticators = Authenticators()
    authenticators.add_request("x509", ClientCertificates(CertificateAuthority(pki.client_ca.pem)))
    return authenticators


async def test_a_client_certificate_names_its_user(pki: PKI, serve) -> None:
    url = await serve(_x509(pki))
    alice = issue(pki.client_ca, "alice", ["dev", "ops"], uid="alice-uid")
    status, body = await _get(pki, url, alice)
    fingerprint = hashlib.sha256(alice.certificate.public_bytes(Encoding.DER)).hexdigest()
    assert (status, body["user"]) == (200, {
        "username": "alice", "uid": "alice-uid", "groups": ["dev", "ops", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": [f"X509SHA256={fingerprint}"]}})
    # No certificate: not this authenticator's request, so anonymous.
    status, body = await _get(pki, url)
    assert (status, body["user"]) == (200, {"username": "system:anonymous", "groups": ["system:unauthenticated"]})
    # A certificate without a CN names nobody (kube's CommonNameUserConversion): anonymous too.
    status, body = await _get(pki, url, issue(pki.client_ca, "", ["dev"]))
    assert body["user"]["username"] == "system:anonymous"


@pytest.mark.parametrize("case", ["expired", "foreign", "proxy-ca"])
async def test_a_certificate_that_does_not_verify_is_401(pki: PKI, serve, case: str) -> None:
    url = await serve(_x509(pki))
    certificate = {
        "expired": lambda: issue(pki.client_ca, "alice", expired=True),
        "foreign": lambda: issue(pki.foreign_ca, "alice", ["system:masters"]),
        "proxy-ca": lambda: issue(pki.proxy_ca, "alice"),  # the front proxy's CA signs no users
    }[case]()
    assert await _get(pki, url, certificate) == (401, UNAUTHORIZED)


async def test_a_certificate_not_for_clients_is_refused(pki: PKI, serve) -> None:
    url = await serve(_x509(pki))
    server_only = issue(pki.client_ca, "alice", usage=ExtendedKeyUsageOID.SERVER_AUTH)
    with pytest.raises(aiohttp.ClientError):  # OpenSSL's handshake refuses it already, and so would we:
        await _get(pki, url, server_only)
    with pytest.raises(AuthenticationError, match="required EKU not found"):
        CertificateAuthority(pki.client_ca.pem).verify(server_only.certificate)
    CertificateAuthority(pki.client_ca.pem).verify(issue(pki.client_ca, "alice", usage=None).certificate)  # no EKU: any use


async def test_a_bad_certificate_and_a_good_token_is_the_token(pki: PKI, serve) -> None:
    authenticators = _x509(pki)  # as kube's union: any authenticator that accepts the request wins
    authenticators.add_token("tokens", StaticTokens({"t0ken": UserInfo("bob")}))
    url = await serve(authenticators)
    status, body = await _get(pki, url, issue(pki.foreign_ca, "alice"), token="t0ken")
    assert (status, body["user"]["username"]) == (200, "bob")
    assert (await _get(pki, url, issue(pki.foreign_ca, "alice"), token="wrong"))[0] == 401


def _proxied(pki: PKI, allowed: tuple[str, ...] = ("front-proxy-client",)) -> Authenticators:
    authenticators = Authenticators()
    authenticators.add_request("requestheader", RequestHeaders(CertificateAuthority(pki.proxy_ca.pem), PROXY_NAMES, allowed))
    authenticators.add_request("x509", ClientCertificates(CertificateAuthority(pki.client_ca.pem)))
    return authenticators


PROXY_HEADERS = [("X-Remote-User", "bob"), ("X-Remote-Uid", "bob-uid"), ("X-Remote-Group", "devs"),
                 ("X-Remote-Group", "admins, ops"), ("X-Remote-Extra-Scopes", "read"), ("X-Remote-Extra-Scopes", "write"), ("X-REMOTE-EXTRA-Team", "t"),
                 ("X-Remote-Extra-Acme.com%2Fproject", "p1"), ("X-Remote-Extra-Bad%zz", "v"), ("X-Remote-Extra-Raw%FF", "v")]


async def test_the_front_proxy_names_the_user_in_headers(pki: PKI, serve) -> None:
    url = await serve(_proxied(pki))
    proxy = issue(pki.proxy_ca, "front-proxy-client")
    status, body = await _get(pki, url, proxy, PROXY_HEADERS + [("X-Other", "kept")])
    assert status == 200
    assert body["user"] == {"username": "bob", "uid": "bob-uid", "groups": ["devs", "admins, ops", "system:authenticated"],
                            "extra": {"scopes": ["read", "write"], "team": ["t"], "acme.com/project": ["p1"], "bad%zz": ["v"],
                                      "raw%ff": ["v"]}}
    seen = {h.lower() for h in body["headers"]}
    assert "x-other" in seen and not any(h.startswith("x-remote-") for h in seen)
    # Without a user header the proxy's certificate is just a certificate the client CA did not sign.
    assert await _get(pki, url, proxy) == (401, UNAUTHORIZED)


async def test_headers_from_anyone_but_the_proxy_are_ignored_and_dropped(pki: PKI, serve) -> None:
    url = await serve(_proxied(pki))
    impostor = [("X-Remote-User", "root"), ("X-Remote-Group", "system:masters"), ("X-Remote-Extra-Scopes", "all")]
    status, body = await _get(pki, url, issue(pki.client_ca, "alice"), impostor)  # a user's own certificate
    assert (status, body["user"]["username"], body["user"]["groups"]) == (200, "alice", ["system:authenticated"])
    assert not any(h.lower().startswith("x-remote-") for h in body["headers"])
    status, body = await _get(pki, url, None, impostor)  # no certificate at all
    assert (status, body["user"]["username"]) == (200, "system:anonymous")
    assert not any(h.lower().startswith("x-remote-") for h in body["headers"])
    # A certificate of the proxy's CA whose CN is not allowed, or one from another CA: 401.
    assert await _get(pki, url, issue(pki.proxy_ca, "someone-else"), impostor) == (401, UNAUTHORIZED)
    assert await _get(pki, url, issue(pki.foreign_ca, "front-proxy-client"), impostor) == (401, UNAUTHORIZED)
    assert await _get(pki, url, issue(pki.proxy_ca, "front-proxy-client", expired=True), impostor) == (401, UNAUTHORIZED)


async def test_any_name_the_proxy_ca_signed_when_none_are_listed(pki: PKI, serve) -> None:
    url = await serve(_proxied(pki, allowed=()))
    status, body = await _get(pki, url, issue(pki.proxy_ca, "any-proxy"), [("X-Remote-User", "carol")])
    assert (status, body["user"]) == (200, {"username": "carol", "groups": ["system:authenticated"]})


async def test_many_and_huge_headers_are_bounded(pki: PKI, serve) -> None:
    url = await serve(_proxied(pki))
    proxy = issue(pki.proxy_ca, "front-proxy-client")
    groups = [("X-Remote-Group", f"g{i}") for i in range(100)]
    status, body = await _get(pki, url, proxy, [("X-Remote-User", "bob"), *groups])
    assert status == 200 and body["user"]["groups"] == [f"g{i}" for i in range(100)] + ["system:authenticated"]
    # More headers than the server reads, or one longer than it reads, is a 400 before any handler.
    too_many = [("X-Remote-Extra-K", "v")] * 200
    assert (await _raw_status(pki, url, proxy, [("X-Remote-User", "bob"), *too_many])) == 400
    assert (await _raw_status(pki, url, proxy, [("X-Remote-User", "b" * 20000)])) == 400


async def _raw_status(pki: PKI, url: str, client: Issued, headers: list[tuple[str, str]]) -> int:
    connector = aiohttp.TCPConnector(ssl=client_context(pki.server_ca, pki.folder, client))
    async with aiohttp.ClientSession(connector=connector) as session, \
            session.get(f"{url}/whoami", headers=headers) as reply:
        return reply.status


async def test_header_bytes_that_are_not_utf8(pki: PKI, serve) -> None:
    url = await serve(_proxied(pki))
    port = int(url.rsplit(":", 1)[1])
    context = client_context(pki.server_ca, pki.folder, issue(pki.proxy_ca, "front-proxy-client"))
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context, server_hostname="localhost")
    writer.write(b"GET /whoami HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Remote-User: b\xffob\r\n"
                 b"X-Remote-Group: \xc3\r\nX-Remote-Extra-Scopes: \xfe\r\n\r\n")
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split()[1] == b"200"
    assert json.loads(body)["user"] == {"username": "b\ufffdob", "groups": ["\ufffd", "system:authenticated"],
                                        "extra": {"scopes": ["\ufffd"]}}


def test_the_flags_build_them_and_refuse_bad_files(pki: PKI, tmp_path: Path) -> None:
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(pki.client_ca.pem)
    authenticators = Authenticators()
    add_configured(authenticators, AuthenticationOptions(client_ca_file=ca_file, requestheader=RequestHeaderOptions(
        ca_file, ("front-proxy-client",), (" X-Remote-User ",), (), ("X-Remote-Group",), ("X-Remote-Extra-",))))
    assert [name for name, _ in authenticators.request] == ["requestheader", "x509"]
    proxy = authenticators.request[0][1]
    assert isinstance(proxy, RequestHeaders) and proxy.names.username == ("X-Remote-User",)
    garbage = tmp_path / "garbage.crt"
    garbage.write_text("not a certificate")
    for options, message in [
        (AuthenticationOptions(client_ca_file=tmp_path / "missing.crt"), "--client-ca-file .*missing.crt cannot be read"),
        (AuthenticationOptions(client_ca_file=garbage), "--client-ca-file .*garbage.crt holds no PEM certificates"),
        (AuthenticationOptions(requestheader=RequestHeaderOptions(garbage, username_headers=("X-Remote-User",))),
         "--requestheader-client-ca-file .*garbage.crt holds no PEM certificates"),
        (AuthenticationOptions(requestheader=RequestHeaderOptions(ca_file, username_headers=(" ",))),
         'empty value in "requestheader-username-headers"'),
        (AuthenticationOptions(requestheader=RequestHeaderOptions(ca_file, uid_headers=("X-Uid",))),
         "--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header"),
    ]:
        with pytest.raises(AuthenticationConfigError, match=message):
            add_configured(Authenticators(), options)


def test_list_flags_take_commas_and_repeats() -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser)
    options = from_args(parser.parse_args([
        "--client-ca-file", "ca.crt", "--token-auth-file", "tokens.csv", "--requestheader-client-ca-file", "proxy.crt",
        "--requestheader-username-headers", "X-Remote-User,X-User", "--requestheader-username-headers", "X-Third",
        "--requestheader-group-headers", "X-Remote-Group", "--requestheader-allowed-names", "front-proxy-client"]))
    assert (options.client_ca_file, options.token_auth_file) == (Path("ca.crt"), Path("tokens.csv"))
    assert options.requestheader == RequestHeaderOptions(Path("proxy.crt"), ("front-proxy-client",),
                                                         ("X-Remote-User", "X-User", "X-Third"), (), ("X-Remote-Group",))
    assert from_args(parser.parse_args([])) == AuthenticationOptions()


def test_the_ca_may_be_given_as_certificates(pki: PKI) -> None:
    assert CertificateAuthority([pki.client_ca.certificate]).certificates == (pki.client_ca.certificate,)
    with pytest.raises(ValueError, match="holds no certificates"):
        CertificateAuthority([])



def test_a_certificate_of_no_usage_is_made_without_the_extension() -> None:
    """kplane's PKI leaves ExtendedKeyUsage out rather than write it empty (no valid certificate);
    such a certificate is good for client authentication, as Go accepts it."""
    ca = pki_ca("ca")
    bare = pki_issue(ca, "nobody-in-particular")
    with pytest.raises(x509.ExtensionNotFound):
        bare.cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    CertificateAuthority(ca.cert_pem()).verify(bare.cert)
    CertificateAuthority(ca.cert_pem()).verify(bare.cert)  # the second time from what the first found
