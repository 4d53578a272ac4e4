"""``--token-auth-file`` users and impersonation (``Impersonate-*``, ``kubectl --as``) through a
real server: a test authorization mode decides, a test filter at the PROXY stage (where the
aggregator hands requests to backends) shows whom a request reached it as, and with which headers."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml
from aiohttp import web

from kplane.api import PROXY, hookimpl
from kplane.core.authn.filter import authenticated, user_of
from kplane.core.authn.options import AuthenticationOptions
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.authorizers import ALLOWED, NO_OPINION, Verdict
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.config import ServerConfig
from kplane.core.serving.apiserver import APIServer
from kplane.core.serving.datadir import StartupError
from tests.certs import issue, new_ca
from tests.servers import server_config

TOKENS = '''
alice-token,alice,alice-uid,"staff,admins"

eve-token,eve,eve-uid
"bob,token",bob,bob-uid,devs,ignored
'''


class Policy:
    """alice may impersonate bob, system:anonymous, any group but system:masters, ServiceAccounts
    of "team", any uid and the extra "scopes"; everyone may GET paths (/whoami, discovery) and list
    configmaps."""

    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    async def authorize(self, a: Attributes) -> Verdict:
        self.asked.append(a)
        if a.verb == "impersonate":
            if a.user.name != "alice":
                return NO_OPINION
            allowed = {
                ("", "users"): a.name in ("bob", "system:anonymous"),
                ("", "groups"): a.name != "system:masters",
                ("", "serviceaccounts"): a.namespace == "team",
                ("authentication.k8s.io", "uids"): True,
                ("authentication.k8s.io", "userextras"): a.subresource == "scopes",
            }.get((a.api_group, a.resource), False)
            return ALLOWED if allowed else NO_OPINION
        if (not a.resource_request and a.verb == "get") or (a.verb == "list" and a.resource == "configmaps"):
            return ALLOWED
        return NO_OPINION


class PolicyPlugin:
    def __init__(self) -> None:
        self.policy = Policy()

    @hookimpl
    def kplane_register_authorizers(self, authorizers):
        authorizers.add("Policy", self.policy)

    @hookimpl
    def kplane_register_filters(self, filters):
        async def whoami(request: web.Request, handler):
            if request.path != "/whoami":
                return await handler(request)
            return web.json_response({"user": user_of(request).to_api(), "authenticated": authenticated(request).user.to_api(),
                                      "headers": list(request.headers)})
        filters.add(PROXY, "WhoAmI", whoami)


def _config(tmp_path: Path, plugin: PolicyPlugin, tokens: str = TOKENS, *, secure: bool = False) -> ServerConfig:
    token_file = tmp_path / "tokens.csv"
    token_file.write_text(tokens)
    return server_config(secure=secure, data_dir=tmp_path / "state", port=0, run_controllers=False, extra_plugins=[("access-policy", plugin)],
                        authentication=AuthenticationOptions(token_auth_file=token_file),
                        authorization=AuthorizationOptions(modes=("Policy",)))


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[APIServer, Policy]]:
    plugin = PolicyPlugin()
    srv = APIServer(_config(tmp_path, plugin))
    await srv.start()
    try:
        yield srv, plugin.policy
    finally:
        await srv.stop()


async def _get(srv: APIServer, token: str, headers: list[tuple[str, str]] = (), path: str = "/whoami") -> tuple[int, dict]:
    sent = [("Authorization", f"Bearer {token}"), *headers]
    async with aiohttp.ClientSession() as session, session.get(f"{srv.url}{path}", headers=sent) as reply:
        return reply.status, await reply.json(content_type=None)


async def test_token_file_users(served: tuple[APIServer, Policy]) -> None:
    srv, _ = served
    status, body = await _get(srv, "alice-token")
    assert (status, body["user"]) == (200, {"username": "alice", "uid": "alice-uid",
                                            "groups": ["staff", "admins", "system:authenticated"]})
    status, body = await _get(srv, "bob,token")  # a quoted token may hold a comma; columns past the 4th are ignored
    assert (status, body["user"]) == (200, {"username": "bob", "uid": "bob-uid", "groups": ["devs", "system:authenticated"]})
    assert (await _get(srv, "eve-token"))[1]["user"]["groups"] == ["system:authenticated"]
    status, body = await _get(srv, "nobody-token")
    assert (status, body["reason"]) == (401, "Unauthorized")


async def test_acting_as_an_impersonated_user(served: tuple[APIServer, Policy]) -> None:
    srv, policy = served
    status, body = await _get(srv, "alice-token", [
        ("Impersonate-User", "bob"), ("Impersonate-Group", "devs"), ("Impersonate-Group", "ops"),
        ("Impersonate-Uid", "bob-uid"), ("Impersonate-Extra-Scopes", "read"), ("Impersonate-Extra-Scopes", "write")])
    assert status == 200
    assert body["user"] == {"username": "bob", "uid": "bob-uid", "groups": ["devs", "ops", "system:authenticated"],
                            "extra": {"scopes": ["read", "write"]}}
    assert body["authenticated"]["username"] == "alice"  # who really sent it stays known (audit)
    assert not any(h.lower().startswith("impersonate-") for h in body["headers"])
    checks = [(a.user.name, a.verb, a.api_group, a.api_version, a.resource, a.subresource, a.name)
              for a in policy.asked if a.verb == "impersonate"]
    assert checks == [("alice", "impersonate", "", "", "users", "", "bob"),
                      ("alice", "impersonate", "", "", "groups", "", "devs"),
                      ("alice", "impersonate", "", "", "groups", "", "ops"),
                      ("alice", "impersonate", "authentication.k8s.io", "v1", "userextras", "scopes", "read"),
                      ("alice", "impersonate", "authentication.k8s.io", "v1", "userextras", "scopes", "write"),
                      ("alice", "impersonate", "authentication.k8s.io", "v1", "uids", "", "bob-uid")]
    assert policy.asked[-1].user.name == "bob"  # the request itself is authorized as bob


async def test_service_accounts_and_anonymous(served: tuple[APIServer, Policy]) -> None:
    srv, policy = served
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "system:serviceaccount:team:robot")])
    assert (status, body["user"]) == (200, {"username": "system:serviceaccount:team:robot", "groups": [
        "system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"]})
    sa = next(a for a in policy.asked if a.resource == "serviceaccounts")
    assert (sa.namespace, sa.name, sa.api_group) == ("team", "robot", "")
    # Named groups replace a ServiceAccount's own.
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "system:serviceaccount:team:robot"),
                                                   ("Impersonate-Group", "devs")])
    assert body["user"]["groups"] == ["devs", "system:authenticated"]
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "system:anonymous")])
    assert (status, body["user"]) == (200, {"username": "system:anonymous", "groups": ["system:unauthenticated"]})
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "system:serviceaccount:prod:robot")])
    assert (status, body["message"]) == (403, 'serviceaccounts "robot" is forbidden: User "alice" cannot impersonate '
                                              'resource "serviceaccounts" in API group "" in the namespace "prod"')


async def test_impersonation_without_permission_is_403(served: tuple[APIServer, Policy]) -> None:
    srv, policy = served
    status, body = await _get(srv, "eve-token", [("Impersonate-User", "bob")])
    assert (status, body) == (403, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'users "bob" is forbidden: User "eve" cannot impersonate resource "users" in API group "" '
                   "at the cluster scope",
        "reason": "Forbidden", "details": {"name": "bob", "kind": "users"}, "code": 403})
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "bob"), ("Impersonate-Group", "system:masters")])
    assert (status, body["message"]) == (403, 'groups "system:masters" is forbidden: User "alice" cannot impersonate '
                                              'resource "groups" in API group "" at the cluster scope')
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "bob"), ("Impersonate-Extra-Acme.com%2FProject", "p1")])
    assert (status, body["message"]) == (403, 'userextras.authentication.k8s.io "p1" is forbidden: User "alice" cannot '
                                              'impersonate resource "userextras/acme.com/project" in API group '
                                              '"authentication.k8s.io" at the cluster scope')
    # Anonymous may impersonate nobody either.
    async with aiohttp.ClientSession() as session, \
            session.get(f"{srv.url}/whoami", headers={"Impersonate-User": "bob"}) as reply:
        assert reply.status == 403 and 'User "system:anonymous" cannot impersonate' in (await reply.json())["message"]


async def test_groups_uid_or_extra_without_a_user_is_400(served: tuple[APIServer, Policy]) -> None:
    srv, _ = served
    status, body = await _get(srv, "alice-token", [("Impersonate-Group", "devs"), ("Impersonate-Uid", "u1")])
    assert (status, body["reason"], body["message"]) == (
        400, "BadRequest", "requested [{Group  devs    } {UID  u1  authentication.k8s.io/v1  }] without impersonating a user")
    status, body = await _get(srv, "alice-token", [("Impersonate-Extra-Scopes", "read")])
    assert (status, body["message"]) == (
        400, "requested [{UserExtra  read  authentication.k8s.io/v1  scopes}] without impersonating a user")


async def test_many_impersonated_groups(served: tuple[APIServer, Policy]) -> None:
    srv, _ = served
    groups = [("Impersonate-Group", f"g{i}") for i in range(100)]
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "bob"), *groups])
    assert status == 200 and body["user"]["groups"] == [f"g{i}" for i in range(100)] + ["system:authenticated"]
    status, body = await _get(srv, "alice-token", [("Impersonate-User", "bob"), *groups, ("Impersonate-Group", "system:masters")])
    assert status == 403
    async with aiohttp.ClientSession() as session:  # past the server's header limits: 400 before any filter
        many = [("Impersonate-User", "bob")] + [("Impersonate-Group", "g")] * 200
        async with session.get(f"{srv.url}/whoami", headers=many) as reply:
            assert reply.status == 400
        async with session.get(f"{srv.url}/whoami", headers={"Impersonate-User": "b" * 20000}) as reply:
            assert reply.status == 400


async def _raw(srv: APIServer, headers: bytes) -> tuple[int, dict]:
    """GET /whoami with header bytes as they are (not UTF-8, say), which no client library sends."""
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET /whoami HTTP/1.1\r\nHost: kplane\r\nConnection: close\r\n" + headers + b"\r\n")
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


async def test_header_bytes_that_are_not_utf8(served: tuple[APIServer, Policy]) -> None:
    srv, _ = served
    status, body = await _raw(srv, b"Authorization: Bearer eve-token\r\nImpersonate-User: b\xffob\r\n")
    assert (status, body["message"]) == (403, 'users "b\ufffdob" is forbidden: User "eve" cannot impersonate resource '
                                              '"users" in API group "" at the cluster scope')
    status, body = await _raw(srv, b"Authorization: Bearer alice-token\r\nImpersonate-User: bob\r\n"
                                   b"Impersonate-Group: \xc3\r\nImpersonate-Uid: \xfe\r\n")
    assert (status, body["user"]["groups"], body["user"]["uid"]) == (200, ["\ufffd", "system:authenticated"], "\ufffd")
    status, body = await _raw(srv, b"Authorization: Bearer alice-token\r\nImpersonate-Group: \xc3\r\n")
    assert (status, body["message"]) == (400, "requested [{Group  \ufffd    }] without impersonating a user")


async def test_kubectl_as_over_tls(tmp_path: Path) -> None:
    """kubectl sends credentials over HTTPS only: the server serves TLS, asking for client
    certificates of ``--client-ca-file``'s CA; alice comes with a token, carol with a certificate."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    client_ca = new_ca("client-ca")
    (tmp_path / "client-ca.crt").write_bytes(client_ca.pem)
    plugin = PolicyPlugin()
    config = _config(tmp_path, plugin, secure=True)
    config.authentication.client_ca_file = tmp_path / "client-ca.crt"
    srv = APIServer(config)
    await srv.start()
    try:
        url, server_ca_pem = srv.url, (tmp_path / "state" / "pki" / "ca.crt").read_bytes()
        cert, key = issue(client_ca, "carol", ["staff"]).write(tmp_path, "carol")
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "alice",
            "clusters": [{"name": "k", "cluster": {"server": url, "certificate-authority-data":
                                                   base64.b64encode(server_ca_pem).decode()}}],
            "users": [{"name": "alice", "user": {"token": "alice-token"}},
                      {"name": "carol", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
            "contexts": [{"name": "alice", "context": {"cluster": "k", "user": "alice"}},
                         {"name": "carol", "context": {"cluster": "k", "user": "carol"}}]}))
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "HOME": str(tmp_path), "KUBECACHEDIR": str(tmp_path / "cache")}

        def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=30)

        policy = plugin.policy
        done = await asyncio.to_thread(kubectl, "get", "configmaps", "-n", "default", "--as", "bob", "--as-group", "devs")
        assert done.returncode == 0, done.stderr
        listed = next(a for a in reversed(policy.asked) if a.resource == "configmaps")
        assert (listed.user.name, listed.user.groups) == ("bob", ("devs", "system:authenticated"))
        done = await asyncio.to_thread(kubectl, "get", "configmaps", "-n", "default", "--as", "eve")
        assert done.returncode != 0
        assert ('Error from server (Forbidden): users "eve" is forbidden: User "alice" cannot impersonate resource '
                '"users" in API group "" at the cluster scope') in done.stderr
        done = await asyncio.to_thread(kubectl, "--context", "carol", "get", "--raw", "/whoami")
        assert done.returncode == 0, done.stderr
        assert yaml.safe_load(done.stdout)["user"]["username"] == "carol"
        done = await asyncio.to_thread(kubectl, "--context", "carol", "get", "configmaps", "--as", "bob")
        assert 'User "carol" cannot impersonate resource "users"' in done.stderr
    finally:
        await srv.stop()


@pytest.mark.parametrize("tokens, message", [
    (b"alice-token,alice\n", " must have at least 3 columns (token, user name, user uid), found 2 on line 1"),
    (b'ok,a,1\nbad,b"x,2\n', ': parse error on line 2: bare " in non-quoted field'),
    (b'ok,a,1\nbad,"b"x,2\n', ": parse error on line 2: ',' expected after '\"'"),
    (b'ok,a,1\n"open,b,2\n', ": parse error on line 2: unexpected end of data"),
    (b"a,b,\xff\n", " is not UTF-8 text: invalid start byte at byte 4"),
])
async def test_a_bad_token_file_stops_the_start(tmp_path: Path, tokens: bytes, message: str) -> None:
    config = _config(tmp_path, PolicyPlugin())
    path = config.authentication.token_auth_file
    path.write_bytes(tokens)
    srv = APIServer(config)
    with pytest.raises(StartupError, match=re.escape(f"--token-auth-file: token file '{path}'{message}")):
        await srv.start()
    await srv.stop()


def test_kplane_serve_refuses_a_missing_token_file(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--data-dir", str(tmp_path / "d"), "--port", "0",
                           "--token-auth-file", str(tmp_path / "missing.csv")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"token file '{tmp_path / 'missing.csv'}' cannot be read: No such file or directory" in done.stderr
    assert "Traceback" not in done.stderr
