"""kplane as an extension API server: its users are those of the host, checked by the host's
TokenReview, and its decisions the host's, through SubjectAccessReview (both real servers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml

from kplane.api import ALLOWED, Authenticated, Decision, UserInfo, Verdict, hookimpl
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.serving.apiserver import APIServer
from kplane.core.serving.datadir import StartupError
from kplane.core.serving.delegation import DelegationOptions

from tests.servers import server_config

FLUNDERS = "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders"


class HostUsers:
    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        return Authenticated(UserInfo(token, uid=f"uid-{token}", groups=("staff",))) if token in USERS else None


USERS = ("delegator", "alice", "bob")


class HostPolicy:
    """The host's decisions: the extension server may review; alice may list flunders."""

    def __init__(self) -> None:
        self.asked: list[Attributes] = []

    async def authorize(self, a: Attributes) -> Verdict:
        self.asked.append(a)
        if a.user.name == "delegator" and a.verb == "create" and a.resource in ("tokenreviews", "subjectaccessreviews"):
            return ALLOWED
        if (a.user.name, a.verb, a.api_group, a.resource, a.namespace) == ("alice", "list", "wardle.example.com",
                                                                          "flunders", "default"):
            return ALLOWED
        return Verdict(Decision.NO_OPINION, "no host policy allows it")


class HostPlugin:
    def __init__(self) -> None:
        self.policy = HostPolicy()

    @hookimpl
    def kplane_register_authenticators(self, authenticators):
        authenticators.add_token("HostUsers", HostUsers())

    @hookimpl
    def kplane_register_authorizers(self, authorizers):
        authorizers.add("HostPolicy", self.policy)


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[tuple[APIServer, HostPlugin]]:
    plugin = HostPlugin()
    srv = APIServer(server_config(data_dir=tmp_path / "host", port=0, run_controllers=False,
                                 extra_plugins=[("host-policy", plugin)],
                                 authorization=AuthorizationOptions(modes=("HostPolicy",))))
    await srv.start()
    try:
        yield srv, plugin
    finally:
        await srv.stop()


def _kubeconfig(path: Path, server: str, token: str) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "host",
        "clusters": [{"name": "host", "cluster": {"server": server}}],
        "users": [{"name": "delegator", "user": {"token": token}}],
        "contexts": [{"name": "host", "context": {"cluster": "host", "user": "delegator"}}]}))
    return path


@pytest.fixture
async def extension(tmp_path: Path, host: tuple[APIServer, HostPlugin]) -> AsyncIterator[APIServer]:
    kubeconfig = _kubeconfig(tmp_path / "host.kubeconfig", host[0].url, "delegator")
    srv = APIServer(server_config(
        data_dir=tmp_path / "wardle", port=0, run_controllers=False, plugins=frozenset({"sample_api"}),
        delegation=DelegationOptions(authentication_kubeconfig=kubeconfig, authorization_kubeconfig=kubeconfig),
        authorization=AuthorizationOptions(modes=("Webhook",))))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def _get(url: str, token: str | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers) as reply:
        return reply.status, await reply.json(content_type=None)


def _reviews_of(policy: HostPolicy, user: str) -> int:
    return sum(1 for a in policy.asked if a.user.name == user)


async def test_the_hosts_users_and_decisions_hold(host: tuple[APIServer, HostPlugin], extension: APIServer) -> None:
    _, plugin = host
    status, body = await _get(f"{extension.url}{FLUNDERS}", "alice")
    assert status == 200 and body["kind"] == "FlunderList"
    asked = next(a for a in plugin.policy.asked if a.user.name == "alice")
    assert (asked.user.groups, asked.user.uid) == (("staff", "system:authenticated"), "uid-alice")

    status, body = await _get(f"{extension.url}{FLUNDERS}", "bob")
    assert status == 403
    assert body["message"] == ('flunders.wardle.example.com is forbidden: User "bob" cannot list resource "flunders" '
                               'in API group "wardle.example.com" in the namespace "default": no host policy allows it')
    assert (await _get(f"{extension.url}{FLUNDERS}", "mallory"))[0] == 401  # the host does not know the token


async def test_answers_are_cached(host: tuple[APIServer, HostPlugin], extension: APIServer) -> None:
    _, plugin = host
    for _ in range(5):
        assert (await _get(f"{extension.url}{FLUNDERS}", "alice"))[0] == 200
        assert (await _get(f"{extension.url}{FLUNDERS}", "bob"))[0] == 403
    assert _reviews_of(plugin.policy, "alice") == 1 and _reviews_of(plugin.policy, "bob") == 1


async def test_probes_need_no_host(host: tuple[APIServer, HostPlugin], extension: APIServer) -> None:
    _, plugin = host
    before = len(plugin.policy.asked)
    async with aiohttp.ClientSession() as session, session.get(f"{extension.url}/readyz") as reply:
        assert reply.status == 200
    assert len(plugin.policy.asked) == before
    status, body = await _get(f"{extension.url}/version")  # anonymous, asked of the host, which says no
    assert status == 403 and body["message"] == ('forbidden: User "system:anonymous" cannot get path "/version": '
                                                 'no host policy allows it')


async def test_a_host_that_cannot_be_reached_is_never_a_yes(tmp_path: Path, host: tuple[APIServer, HostPlugin],
                                                            extension: APIServer) -> None:
    await host[0].stop()
    status, body = await _get(f"{extension.url}{FLUNDERS}", "carol")
    assert status == 401 and body["message"] == "Unauthorized"


async def test_a_bad_host_kubeconfig_stops_the_start(tmp_path: Path) -> None:
    srv = APIServer(server_config(data_dir=tmp_path / "w", port=0, run_controllers=False, plugins=frozenset({"sample_api"}),
                                 delegation=DelegationOptions(authorization_kubeconfig=tmp_path / "missing")))
    with pytest.raises(StartupError, match="cannot delegate authentication or authorization"):
        await srv.start()
    await srv.stop()
