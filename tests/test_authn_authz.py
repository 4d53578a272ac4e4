"""Authentication and authorization through the hooks: a plugin's token authenticator and
authorization mode decide real HTTP requests, with kube-apiserver's 401 and 403 Statuses."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from kplane.api import hookimpl
from kplane.api import Authenticated, AuthenticationError
from kplane.core.authn.options import AuthenticationOptions
from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.authorizers import ALLOWED, NO_OPINION, Decision, Verdict
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.config import ServerConfig
from kplane.core.serving.apiserver import APIServer
from kplane.core.serving.datadir import StartupError

from tests.servers import server_config


class Badges:
    """Tokens "alice", "mallory"; "revoked" is known and bad."""

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        if token == "revoked":
            raise AuthenticationError("token revoked")
        if token in ("alice", "mallory"):
            return Authenticated(UserInfo(token, uid=f"uid-{token}", groups=("staff",)))
        return None


class Gate:
    """alice may list configmaps in "default" and GET /version; mallory is denied outright."""

    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    async def authorize(self, a: Attributes) -> Verdict:
        self.asked.append(a)
        if a.user.name == "mallory":
            return Verdict(Decision.DENY, "mallory is banned")
        if a.user.name == "alice" and a.verb == "list" and a.resource == "configmaps" and a.namespace == "default":
            return ALLOWED
        if a.user.name == "alice" and not a.resource_request and a.path == "/version":
            return ALLOWED
        return NO_OPINION


class GatePlugin:
    def __init__(self) -> None:
        self.gate = Gate()

    @hookimpl
    def kplane_register_authenticators(self, authenticators):
        authenticators.add_token("Badges", Badges())

    @hookimpl
    def kplane_register_authorizers(self, authorizers):
        authorizers.add("Gate", self.gate)


def _config(tmp_path: Path, plugin: GatePlugin, *, anonymous: bool = True, modes: tuple[str, ...] = ("Gate",)) -> ServerConfig:
    return server_config(data_dir=tmp_path / "state", port=0, run_controllers=False, extra_plugins=[("gate", plugin)],
                        authentication=AuthenticationOptions(anonymous=anonymous),
                        authorization=AuthorizationOptions(modes=modes))


@pytest.fixture
async def gated(tmp_path: Path) -> AsyncIterator[tuple[APIServer, GatePlugin]]:
    plugin = GatePlugin()
    srv = APIServer(_config(tmp_path, plugin))
    await srv.start()
    try:
        yield srv, plugin
    finally:
        await srv.stop()


async def _get(url: str, token: str | None = None, method: str = "GET") -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session, session.request(method, url, headers=headers) as reply:
        return reply.status, await reply.json(content_type=None)


async def test_a_plugins_authenticator_and_mode_decide(gated: tuple[APIServer, GatePlugin]) -> None:
    srv, plugin = gated
    status, body = await _get(f"{srv.url}/api/v1/namespaces/default/configmaps", "alice")
    assert status == 200 and body["kind"] == "ConfigMapList"
    asked = plugin.gate.asked[-1]
    assert (asked.user.name, asked.user.groups, asked.verb, asked.api_group, asked.resource, asked.namespace) == \
        ("alice", ("staff", "system:authenticated"), "list", "", "configmaps", "default")
    status, body = await _get(f"{srv.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1", "alice")
    assert status == 403 and plugin.gate.asked[-1].verb == "watch"
    assert body["message"] == ('configmaps is forbidden: User "alice" cannot watch resource "configmaps" in API group "" '
                               'in the namespace "default"')


async def test_forbidden_messages_are_kubernetes(gated: tuple[APIServer, GatePlugin]) -> None:
    srv, _ = gated
    status, body = await _get(f"{srv.url}/apis/apps/v1/namespaces/team/deployments/web", "alice")
    assert status == 403
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'deployments.apps "web" is forbidden: User "alice" cannot get resource "deployments" '
                               'in API group "apps" in the namespace "team"',
                    "reason": "Forbidden", "details": {"name": "web", "group": "apps", "kind": "deployments"},
                    "code": 403}
    status, body = await _get(f"{srv.url}/api/v1/nodes", "alice", method="DELETE")
    assert status == 403 and body["message"] == ('nodes is forbidden: User "alice" cannot deletecollection resource '
                                                 '"nodes" in API group "" at the cluster scope')
    status, body = await _get(f"{srv.url}/api/v1/namespaces/team/pods/p/status", "alice", method="PUT")
    assert status == 403 and 'cannot update resource "pods/status"' in body["message"]
    status, body = await _get(f"{srv.url}/healthz", "alice")
    assert status == 403 and body["message"] == 'forbidden: User "alice" cannot get path "/healthz"'
    status, body = await _get(f"{srv.url}/version", "mallory")
    assert status == 403 and body["message"] == 'forbidden: User "mallory" cannot get path "/version": mallory is banned'
    status, _ = await _get(f"{srv.url}/version", "alice")
    assert status == 200


async def test_a_namespace_is_the_namespace_of_its_own_requests(gated: tuple[APIServer, GatePlugin]) -> None:
    srv, plugin = gated
    await _get(f"{srv.url}/api/v1/namespaces/team", "alice")
    asked = plugin.gate.asked[-1]
    assert (asked.resource, asked.name, asked.namespace) == ("namespaces", "team", "team")


async def test_bad_credentials_are_401_never_anonymous(gated: tuple[APIServer, GatePlugin]) -> None:
    srv, plugin = gated
    unauthorized = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    for token in ("nobody-knows-me", "revoked"):
        assert await _get(f"{srv.url}/version", token) == (401, unauthorized)
    before = len(plugin.gate.asked)
    status, body = await _get(f"{srv.url}/version")  # no credentials: anonymous, then the Gate has no opinion
    assert status == 403 and body["message"] == 'forbidden: User "system:anonymous" cannot get path "/version"'
    anonymous = plugin.gate.asked[before].user
    assert (anonymous.name, anonymous.groups) == ("system:anonymous", ("system:unauthenticated",))


async def test_without_anonymous_auth_no_credentials_is_401(tmp_path: Path) -> None:
    srv = APIServer(_config(tmp_path, GatePlugin(), anonymous=False))
    await srv.start()
    try:
        status, body = await _get(f"{srv.url}/version")
        assert status == 401 and body["reason"] == "Unauthorized"
        assert (await _get(f"{srv.url}/version", "alice"))[0] == 200
    finally:
        await srv.stop()


async def test_the_servers_own_clients_are_masters(gated: tuple[APIServer, GatePlugin]) -> None:
    srv, _ = gated  # started: its post-start hooks wrote through the loopback client, denied to anyone else
    status, body = await _get(f"{srv.url}/api/v1/namespaces/default", "alice")
    assert status == 403
    reply = await srv.informers.client.request("GET", "/api/v1/namespaces/default")
    assert reply["metadata"]["name"] == "default"


async def test_an_unknown_mode_stops_the_start(tmp_path: Path) -> None:
    srv = APIServer(_config(tmp_path, GatePlugin(), modes=("Gate", "Nope")))
    with pytest.raises(StartupError, match="--authorization-mode names modes no plugin offers: Nope"):
        await srv.start()
    await srv.stop()


async def test_hostile_bearer_tokens_are_401(gated: tuple[APIServer, GatePlugin]) -> None:
    """Bytes that are not UTF-8, and a JWT whose issuer is no string: a 401, never a 500."""
    srv, _ = gated
    host, port = srv.url.removeprefix("http://").rsplit(":", 1)
    encode = lambda part: base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=")  # noqa: E731
    forged = b".".join([encode({"alg": "RS256"}), encode({"iss": ["x"], "sub": "system:admin"}), b"sig"])
    for token in (b"\xff\xfe", forged):
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer " + token + b"\r\n\r\n")
        await writer.drain()
        answer = await reader.read()
        writer.close()
        assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]
        assert b'"reason":"Unauthorized"' in answer


async def test_paths_beyond_the_subresource_are_resource_requests(gated: tuple[APIServer, GatePlugin]) -> None:
    """As kube's RequestInfoFactory: still about pods/p/status (and not served), never a path."""
    srv, plugin = gated
    status, _ = await _get(f"{srv.url}/api/v1/namespaces/default/pods/p/status/extra/parts", "alice")
    asked = plugin.gate.asked[-1]
    assert status == 403 and (asked.resource_request, asked.resource, asked.name, asked.subresource) == \
        (True, "pods", "p", "status")


async def test_a_list_of_one_name_is_about_that_name(gated: tuple[APIServer, GatePlugin]) -> None:
    srv, plugin = gated
    await _get(f"{srv.url}/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%3Dsettings&watch=1", "alice")
    asked = plugin.gate.asked[-1]
    assert (asked.verb, asked.name) == ("watch", "settings")
    await _get(f"{srv.url}/api/v1/namespaces/default/configmaps?fieldSelector=metadata.name%21%3Dsettings", "alice")
    assert (plugin.gate.asked[-1].verb, plugin.gate.asked[-1].name) == ("list", "")
