"""ServiceAccount tokens end to end: ``serviceaccounts/token`` (TokenRequest) issues JWTs with
kube's claims, and a request bearing one is its account, checked by a test authorization mode
that records who asks; kubectl, the official client, bad tokens, bound objects, restarts, etcd."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kplane.api import NO_OPINION, UserInfo, Verdict, hookimpl
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.config import ServerConfig
from kplane.core.serving.apiserver import APIServer
from tests.servers import server_config

ISSUER = "https://kubernetes.default.svc.cluster.local"
TOKEN_PATH = "/api/v1/namespaces/default/serviceaccounts/{}/token"


class Who:
    """A mode with no opinion that remembers each request's user (AlwaysAllow then decides),
    but for the control plane's own (controllers, nodes), which call at any moment between a
    test's request and its look at the last user."""

    CONTROL_PLANE = ("system:serviceaccount:kube-system:", "system:kube-", "system:node:")

    def __init__(self) -> None:
        self.users: list[UserInfo] = []

    async def authorize(self, a: Attributes) -> Verdict:
        if not a.user.name.startswith(self.CONTROL_PLANE):
            self.users.append(a.user)
        return NO_OPINION


class WhoPlugin:
    def __init__(self) -> None:
        self.who = Who()

    @hookimpl
    def kplane_register_authorizers(self, authorizers):
        authorizers.add("Who", self.who)


class Cluster:
    def __init__(self, server: APIServer, plugin: WhoPlugin, session: aiohttp.ClientSession) -> None:
        self.server, self.who, self.session = server, plugin.who, session
        self.url = server.url

    async def call(self, method: str, path: str, body: Any = None, token: str = "") -> tuple[int, Any, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with self.session.request(method, f"{self.url}{path}", json=body, headers=headers) as reply:
            return reply.status, await reply.json(content_type=None), reply.headers

    async def create(self, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
        status, body, _ = await self.call("POST", f"/api/v1/namespaces/default/{plural}", obj)
        assert status == 201, body
        return body

    async def token(self, account: str, spec: dict[str, Any] | None = None) -> tuple[int, Any, Any]:
        return await self.call("POST", TOKEN_PATH.format(account),
                               {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec or {}})

    async def user_of(self, token: str) -> UserInfo | int:
        """The user a GET with ``token`` ran as, or the status it got instead."""
        self.who.users.clear()
        status, _, _ = await self.call("GET", "/api/v1/namespaces/default/configmaps", token=token)
        return self.who.users[-1] if status == 200 else status


def _config(data_dir: Path, plugin: WhoPlugin, storage: str = "", secure: bool = False, **core: Any) -> ServerConfig:
    return server_config(secure=secure, data_dir=data_dir, port=0, run_controllers=False, storage_url=storage,
                        extra_plugins=[("who", plugin)], authorization=AuthorizationOptions(modes=("Who", "AlwaysAllow")),
                        plugin_settings={"core": core} if core else {})


async def _started(data_dir: Path, storage: str = "", secure: bool = False, **core: Any) -> tuple[APIServer, WhoPlugin]:
    plugin = WhoPlugin()
    server = APIServer(_config(data_dir, plugin, storage, secure, **core))
    await server.start()
    return server, plugin


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    server, plugin = await _started(tmp_path / "state")
    try:
        async with aiohttp.ClientSession() as session:
            c = Cluster(server, plugin, session)
            await c.create("serviceaccounts", {"metadata": {"name": "robot"}})
            yield c
    finally:
        await server.stop()


def _claims(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


def _hmac_signed(claims: dict[str, Any], kid: str, secret: bytes) -> str:
    """A token "signed" HS256 with ``secret`` (the public key: the classic key-confusion forgery),
    made by hand since PyJWT rightly refuses to."""
    encode = jwt.utils.base64url_encode
    head = encode(json.dumps({"alg": "HS256", "kid": kid}).encode()) + b"." + encode(json.dumps(claims).encode())
    return (head + b"." + encode(hmac.new(secret, head, hashlib.sha256).digest())).decode()


def _pod(name: str, account: str = "robot") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"serviceAccountName": account, "containers": [{"name": "c", "image": "nginx:1"}]}}


async def test_a_token_request_answers_a_jwt_with_kubes_claims(cluster: Cluster) -> None:
    account = (await cluster.call("GET", "/api/v1/namespaces/default/serviceaccounts/robot"))[1]
    status, body, _ = await cluster.token("robot")
    assert status == 201, body
    assert (body["kind"], body["apiVersion"]) == ("TokenRequest", "authentication.k8s.io/v1")
    assert body["metadata"]["name"] == "robot" and body["metadata"]["uid"] == account["metadata"]["uid"]
    assert body["spec"] == {"audiences": [ISSUER], "expirationSeconds": 3600}
    token = body["status"]["token"]
    header, claims = jwt.get_unverified_header(token), _claims(token)
    assert header["alg"] == "RS256" and set(header) == {"alg", "kid"}
    assert claims["iss"] == ISSUER and claims["aud"] == ISSUER
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"] and abs(claims["iat"] - time.time()) < 5
    assert len(claims["jti"]) == 36
    assert claims["kubernetes.io"] == {"namespace": "default",
                                       "serviceaccount": {"name": "robot", "uid": account["metadata"]["uid"]}}
    expires = time.mktime(time.strptime(body["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert expires == claims["exp"]


async def test_a_token_authenticates_as_its_account(cluster: Cluster) -> None:
    token = (await cluster.token("robot"))[1]["status"]["token"]
    found = await cluster.user_of(token)
    assert isinstance(found, UserInfo)
    account = (await cluster.call("GET", "/api/v1/namespaces/default/serviceaccounts/robot"))[1]
    assert found.name == "system:serviceaccount:default:robot" and found.uid == account["metadata"]["uid"]
    assert found.groups == ("system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated")
    assert dict(found.extra) == {"authentication.kubernetes.io/credential-id": (f"JTI={_claims(token)['jti']}",)}


async def test_a_pod_bound_token_names_the_pod_and_dies_with_it(cluster: Cluster) -> None:
    pod = await cluster.create("pods", _pod("p"))
    status, body, _ = await cluster.token("robot", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}})
    assert status == 201, body
    token = body["status"]["token"]
    uid = pod["metadata"]["uid"]
    assert _claims(token)["kubernetes.io"]["pod"] == {"name": "p", "uid": uid}
    found = await cluster.user_of(token)
    assert isinstance(found, UserInfo)
    assert found.extra["authentication.kubernetes.io/pod-name"] == ("p",)
    assert found.extra["authentication.kubernetes.io/pod-uid"] == (uid,)
    assert (await cluster.call("DELETE", "/api/v1/namespaces/default/pods/p?gracePeriodSeconds=0"))[0] == 200
    assert await cluster.user_of(token) == 401
    await cluster.create("pods", _pod("p"))  # another pod of that name is not the one bound
    assert await cluster.user_of(token) == 401


async def test_a_secret_bound_token_dies_with_the_secret_and_any_token_with_its_account(cluster: Cluster) -> None:
    secret = await cluster.create("secrets", {"metadata": {"name": "s"}})
    body = (await cluster.token("robot", {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s",
                                                             "uid": secret["metadata"]["uid"]}}))[1]
    bound, plain = body["status"]["token"], (await cluster.token("robot"))[1]["status"]["token"]
    assert _claims(bound)["kubernetes.io"]["secret"] == {"name": "s", "uid": secret["metadata"]["uid"]}
    assert isinstance(await cluster.user_of(bound), UserInfo)
    await cluster.call("DELETE", "/api/v1/namespaces/default/secrets/s")
    assert await cluster.user_of(bound) == 401
    assert isinstance(await cluster.user_of(plain), UserInfo)
    await cluster.call("DELETE", "/api/v1/namespaces/default/serviceaccounts/robot")
    assert await cluster.user_of(plain) == 401
    await cluster.create("serviceaccounts", {"metadata": {"name": "robot"}})  # a new account of the same name
    assert await cluster.user_of(plain) == 401


async def test_token_requests_are_checked_as_kube_checks_them(cluster: Cluster) -> None:
    status, body, _ = await cluster.token("robot", {"expirationSeconds": 60})
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == ('TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
                               'Invalid value: 60: may not specify a duration less than 10 minutes')
    status, body, _ = await cluster.token("nobody")
    assert status == 404 and body["message"] == 'serviceaccounts "nobody" not found'
    status, body, _ = await cluster.token("robot", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "gone"}})
    assert status == 404 and body["message"] == 'pods "gone" not found'
    await cluster.create("pods", _pod("p", account="default"))
    status, body, _ = await cluster.token("robot", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}})
    assert status == 400 and "to pod running with different serviceaccount name" in body["message"]
    await cluster.create("pods", _pod("mine"))
    status, body, _ = await cluster.token("robot", {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "mine", "uid": "x"}})
    assert status == 409 and body["message"].startswith('Operation cannot be fulfilled on Pod "mine": the UID in the bound object reference (x)')
    status, body, _ = await cluster.token("robot", {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}})
    assert status == 400 and body["message"] == "cannot bind token to object of type /v1, Kind=ConfigMap"
    status, body, _ = await cluster.token("robot", {"expirationSeconds": "long"})
    assert status == 400 and body["reason"] == "BadRequest"
    status, body, _ = await cluster.token("robot", {"bogus": 1})
    assert status == 400 and 'unknown field "spec.bogus"' in body["message"]


async def test_bad_tokens_are_401(cluster: Cluster, tmp_path: Path) -> None:
    good = (await cluster.token("robot"))[1]["status"]["token"]
    header, payload, signature = good.split(".")
    claims = _claims(good)
    key = serialization.load_pem_private_key((tmp_path / "state" / "pki" / "sa.key").read_bytes(), password=None)
    kid = jwt.get_unverified_header(good)["kid"]

    def signed(changes: dict[str, Any], signer: Any = key, algorithm: str = "RS256") -> str:
        return jwt.encode({**claims, **changes}, signer, algorithm=algorithm, headers={"kid": kid})

    now = int(time.time())
    other_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.utils.base64url_encode(json.dumps({**claims, "sub": "system:serviceaccount:kube-system:admin"}).encode()).decode()
    bad = {
        "tampered": f"{header}.{forged}.{signature}",
        "expired": signed({"iat": now - 7200, "nbf": now - 7200, "exp": now - 3600}),
        "not yet valid": signed({"nbf": now + 3600}),
        "for another audience": (await cluster.token("robot", {"audiences": ["vault"]}))[1]["status"]["token"],
        "another key": signed({}, other_key),
        "ECDSA key": signed({}, ec.generate_private_key(ec.SECP256R1()), "ES256"),
        "no signature": jwt.encode({**claims}, None, algorithm="none"),
        "HMAC with the public key": _hmac_signed(claims, kid, key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)),
        "another account uid": signed({"kubernetes.io": {**claims["kubernetes.io"],
                                                         "serviceaccount": {"name": "robot", "uid": "other"}}}),
        "no private claim": signed({"kubernetes.io": None}),
    }
    for what, token in bad.items():
        assert await cluster.user_of(token) == 401, what
    assert isinstance(await cluster.user_of(signed({"exp": now - 30})), UserInfo)  # within the leeway
    assert isinstance(await cluster.user_of(good), UserInfo)


async def test_the_maximum_expiration_shortens_with_a_warning(tmp_path: Path) -> None:
    server, _ = await _started(tmp_path / "state", max_expiration=7200.0, api_audiences=("api", "https://me"))
    try:
        async with aiohttp.ClientSession() as session:
            c = Cluster(server, WhoPlugin(), session)
            await c.create("serviceaccounts", {"metadata": {"name": "robot"}})
            status, body, headers = await c.token("robot", {"expirationSeconds": 36000})
            assert status == 201 and body["spec"] == {"audiences": ["api", "https://me"], "expirationSeconds": 7200}
            assert headers["Warning"] == '299 - "requested expiration of 36000 seconds shortened to 7200 seconds"'
            claims = _claims(body["status"]["token"])
            assert claims["exp"] - claims["iat"] == 7200 and claims["aud"] == ["api", "https://me"]
    finally:
        await server.stop()


async def test_the_key_is_made_once_and_kept_across_restarts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    server, _ = await _started(state)
    assert not (state / "pki" / "sa.key").exists()  # no token issued yet: no key made
    try:
        async with aiohttp.ClientSession() as session:
            c = Cluster(server, WhoPlugin(), session)
            await c.create("serviceaccounts", {"metadata": {"name": "robot"}})
            token = (await c.token("robot"))[1]["status"]["token"]
    finally:
        await server.stop()
    key = state / "pki" / "sa.key"
    assert key.stat().st_mode & 0o777 == 0o600 and (state / "pki").stat().st_mode & 0o777 == 0o700
    made = key.read_bytes()
    server, plugin = await _started(state)
    try:
        async with aiohttp.ClientSession() as session:
            c = Cluster(server, plugin, session)
            assert isinstance(await c.user_of(token), UserInfo)
            await c.token("robot")
    finally:
        await server.stop()
    assert key.read_bytes() == made


async def test_servers_on_etcd_sharing_a_key_accept_each_others_tokens(tmp_path: Path, etcd_server) -> None:
    storage = f"etcd://127.0.0.1:{etcd_server.client_port}/kplane-{uuid.uuid4().hex[:8]}"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "shared.key"
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    public_file = tmp_path / "shared.pub"
    public_file.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                          serialization.PublicFormat.SubjectPublicKeyInfo))
    a, plugin_a = await _started(tmp_path / "a", storage, signing_key_file=str(key_file))
    b, plugin_b = await _started(tmp_path / "b", storage, key_files=[str(public_file)])  # verifies only with it
    try:
        async with aiohttp.ClientSession() as session:
            ca, cb = Cluster(a, plugin_a, session), Cluster(b, plugin_b, session)
            await ca.create("serviceaccounts", {"metadata": {"name": "robot"}})
            token = (await ca.token("robot"))[1]["status"]["token"]
            found = await eventually_user(cb, token)
            assert found.name == "system:serviceaccount:default:robot"
            own = (await cb.token("robot"))[1]["status"]["token"]  # b's own key, made now: a does not know it
            assert await ca.user_of(own) == 401 and isinstance(await cb.user_of(own), UserInfo)
    finally:
        await a.stop()
        await b.stop()


async def eventually_user(cluster: Cluster, token: str) -> UserInfo:
    """The user of ``token`` once the other server has seen the account (its watch may lag)."""
    for _ in range(100):
        found = await cluster.user_of(token)
        if isinstance(found, UserInfo):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"the token never authenticated: {found}")


def _token_kubeconfig(server: str, ca: Path, token: str, path: Path) -> Path:
    """A kubeconfig for ``server`` with ``token`` as its only credential."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "sa",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": "robot", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "c", "user": "robot", "namespace": "default"}}],
    }))
    return path


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")
async def test_kubectl_create_token_and_use_it(tmp_path: Path) -> None:
    """Over HTTPS, where kubectl sends bearer tokens: the admin's kubeconfig asks, the token is used."""
    server, plugin = await _started(tmp_path / "state", secure=True)
    kubeconfig, ca = tmp_path / "state" / "kubeconfig", tmp_path / "state" / "pki" / "ca.crt"
    env = {**os.environ, "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}

    async def run(*args: str, config: Path = kubeconfig, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return await asyncio.to_thread(subprocess.run, ["kubectl", "--kubeconfig", str(config), *args], input=stdin,
                                       capture_output=True, text=True, env=env, timeout=30)

    try:
        assert (await run("create", "serviceaccount", "robot")).returncode == 0
        done = await run("create", "token", "robot")
        assert done.returncode == 0, done.stderr
        token = done.stdout.strip()
        claims = _claims(token)
        assert claims["sub"] == "system:serviceaccount:default:robot" and claims["exp"] - claims["iat"] == 3600
        done = await run("create", "token", "robot", "--duration", "2h", "--audience", "vault", "--audience", ISSUER)
        assert done.returncode == 0, done.stderr
        claims = _claims(done.stdout.strip())
        assert claims["exp"] - claims["iat"] == 7200 and claims["aud"] == ["vault", ISSUER]
        assert (await run("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "Pod", **_pod("p")}))).returncode == 0
        done = await run("create", "token", "robot", "--bound-object-kind", "Pod", "--bound-object-name", "p")
        assert done.returncode == 0, done.stderr
        bound = done.stdout.strip()
        assert _claims(bound)["kubernetes.io"]["pod"]["name"] == "p"
        done = await run("create", "token", "robot", "--duration", "1m")
        assert done.returncode != 0 and "may not specify a duration less than 10 minutes" in done.stderr
        done = await run("create", "token", "nobody")
        assert done.returncode != 0 and 'serviceaccounts "nobody" not found' in done.stderr

        plugin.who.users.clear()
        done = await run("get", "configmaps", config=_token_kubeconfig(server.url, ca, bound, tmp_path / "token-config"))
        assert done.returncode == 0, done.stderr
        assert {u.name for u in plugin.who.users} == {"system:serviceaccount:default:robot"}
        assert plugin.who.users[-1].extra["authentication.kubernetes.io/pod-name"] == ("p",)
        done = await run("--token", token[:-2] + "xx", "get", "configmaps",
                         config=_token_kubeconfig(server.url, ca, "", tmp_path / "empty-config"))
        assert done.returncode != 0 and "Unauthorized" in done.stderr, done.stderr
    finally:
        await server.stop()


async def test_the_official_client_asks_for_a_token_and_uses_it(cluster: Cluster) -> None:
    kubernetes = pytest.importorskip("kubernetes")

    def work() -> tuple[str, list[str]]:
        api = kubernetes.client.ApiClient(kubernetes.client.Configuration(host=cluster.url))
        core = kubernetes.client.CoreV1Api(api)
        request = kubernetes.client.AuthenticationV1TokenRequest(spec=kubernetes.client.V1TokenRequestSpec(
            audiences=[ISSUER], expiration_seconds=1200))
        answer = core.create_namespaced_service_account_token("robot", "default", request)
        config = kubernetes.client.Configuration(host=cluster.url)
        config.api_key = {"authorization": answer.status.token}
        config.api_key_prefix = {"authorization": "Bearer"}
        names = [cm.metadata.name for cm in kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(config))
                 .list_namespaced_config_map("default").items]
        return answer.status.token, names

    cluster.who.users.clear()
    token, _ = await asyncio.to_thread(work)
    assert _claims(token)["exp"] - _claims(token)["iat"] == 1200
    assert cluster.who.users[-1].name == "system:serviceaccount:default:robot"


def _serve(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
                           "--no-controllers", *flags], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("flags", "message"), [
    (("--service-account-max-token-expiration", "30m"),
     "--service-account-max-token-expiration must be between 1 hour and 2^32 seconds"),
    (("--service-account-key-file", "/nonexistent/sa.pub"), "--service-account-key-file /nonexistent/sa.pub: No such file"),
])
def test_bad_key_flags_stop_the_start(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    done = _serve(tmp_path, *flags)
    assert done.returncode == 1 and message in done.stderr, done.stderr


