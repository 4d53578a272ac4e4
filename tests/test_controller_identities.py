"""The controllers under their own identities: in-process, each acts as its ServiceAccount in
kube-system, authorized by its bootstrap role under RBAC. The audit log says who did what; a
controller whose ClusterRoleBinding is taken away is refused while the others go on."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from kplane.core.audit.options import AuditOptions
from kplane.core.client.informer import Informer, SharedInformerFactory
from kplane.core.client.kubeconfig import client_from_kubeconfig
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.config import ServerConfig
from kplane.core.controllers.clients import InProcessAccounts, TokenRequestAccounts
from kplane.core.controllers.standard import build_controller_manager
from kplane.core.plugins import PluginManager
from kplane.core.server.filters import RequestLimits
from kplane.core.serving.apiserver import APIServer
from kplane.plugins.rbac.bootstrap.controller_policy import CLUSTER_ROLE_BINDINGS, CONTROLLERS
from tests.builders import configmap, deployment
from tests.test_protections import CM, connect, until_in_flight
from tests.test_rbac import As, rbac_config
from tests.servers import serving
from tests.waiting import eventually

pytestmark = pytest.mark.controllers

RBAC = "/apis/rbac.authorization.k8s.io/v1"
APPS = "/apis/apps/v1/namespaces/default"
SA = "system:serviceaccount:kube-system:"
POLICY = """
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: Metadata
"""


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[APIServer, As]]:
    """An RBAC server running its controllers, auditing every write; and its admin."""
    (tmp_path / "policy.yaml").write_text(POLICY)
    audit = AuditOptions(policy_file=tmp_path / "policy.yaml", log_path=str(tmp_path / "audit.log"))
    srv = APIServer(dataclasses.replace(rbac_config(tmp_path / "state", controllers=True), audit=audit))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            yield srv, As(session, "admin")
    finally:
        await srv.stop()


def writes(srv: APIServer) -> list[dict[str, Any]]:
    """The audit log's events (written before each answer): every request that is not a read."""
    return [json.loads(line) for line in Path(srv.config.audit.log_path).read_text().splitlines()]


def writers(srv: APIServer, resource: str, verb: str, subresource: str = "") -> set[str]:
    """Who was allowed to ``verb`` ``resource`` (the users of 2xx answers)."""
    return {e["user"]["username"] for e in writes(srv)
            if e["verb"] == verb and e.get("objectRef", {}).get("resource") == resource
            and e["objectRef"].get("subresource", "") == subresource and e["responseStatus"]["code"] < 300}


async def rolled_out(admin: As, name: str) -> bool:
    reply = await admin("GET", f"{APPS}/deployments/{name}")
    status = reply.body.get("status") or {}
    return status.get("availableReplicas") == reply.body["spec"]["replicas"] == status.get("updatedReplicas")


async def gone(admin: As, path: str) -> bool:
    return (await admin("GET", path)).status == 404


async def allowed(admin: As, user: str, verb: str, group: str, resource: str) -> bool:
    """What the server's RBAC decides now (through a SubjectAccessReview)."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": user, "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system"],
                       "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "namespace": "default"}}}
    reply = await admin("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert reply.status == 201, reply
    return bool(reply.body["status"]["allowed"])


async def test_the_controllers_work_under_rbac_each_as_its_service_account(cluster) -> None:
    srv, admin = cluster
    assert (await admin("POST", f"{APPS}/deployments", deployment("web"))).status == 201
    await eventually(lambda: rolled_out(admin, "web"), 30, what="the rollout")

    owner = (await admin("POST", "/api/v1/namespaces/default/configmaps", configmap("owner"))).body
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    child = configmap("child", ownerReferences=[reference])
    assert (await admin("POST", "/api/v1/namespaces/default/configmaps", child)).status == 201
    assert (await admin("DELETE", "/api/v1/namespaces/default/configmaps/owner")).status == 200
    await eventually(lambda: gone(admin, "/api/v1/namespaces/default/configmaps/child"), 15, what="the collection")

    assert (await admin("POST", "/api/v1/namespaces", {"metadata": {"name": "doomed"}})).status == 201
    await eventually(lambda: writers(srv, "serviceaccounts", "create"), 15, what="the default ServiceAccount")
    assert (await admin("POST", "/api/v1/namespaces/doomed/configmaps", configmap("inside"))).status == 201
    assert (await admin("DELETE", "/api/v1/namespaces/doomed")).status == 200
    await eventually(lambda: gone(admin, "/api/v1/namespaces/doomed"), 15, what="the namespace deletion")

    assert writers(srv, "replicasets", "create") == {SA + "deployment-controller"}
    assert writers(srv, "pods", "create") == {SA + "replicaset-controller"}
    assert writers(srv, "pods", "create", "binding") == {SA + "simulated-nodes"}
    assert writers(srv, "pods", "patch", "status") | writers(srv, "pods", "update", "status") == {SA + "simulated-nodes"}
    assert SA + "generic-garbage-collector" in writers(srv, "configmaps", "delete")
    assert SA + "namespace-controller" in writers(srv, "configmaps", "deletecollection")
    assert writers(srv, "namespaces", "update", "finalize") == {SA + "namespace-controller"}
    assert writers(srv, "serviceaccounts", "create") == {SA + "service-account-controller"}
    # The controller-manager's own client (system:apiserver) watches and holds the Lease, nothing more.
    own = {(e["verb"], e["objectRef"]["resource"]) for e in writes(srv) if e["user"]["username"] == "system:apiserver"}
    # (the server's loopback also writes its flow-control configuration, as kube-apiserver's does)
    own -= {(verb, plural) for verb in ("create", "update", "delete") for plural in ("flowschemas", "prioritylevelconfigurations")}
    assert own <= {("create", "leases"), ("update", "leases")}


async def test_a_controller_without_its_binding_is_forbidden_while_the_others_go_on(cluster) -> None:
    srv, admin = cluster
    name = "system:controller:deployment-controller"
    (saved,) = [b for b in CLUSTER_ROLE_BINDINGS if b["metadata"]["name"] == name]
    assert (await admin("DELETE", f"{RBAC}/clusterrolebindings/{name}")).status == 200
    user = SA + "deployment-controller"
    await eventually(lambda: _not(allowed(admin, user, "create", "apps", "replicasets")), what="RBAC to see the removal")

    assert (await admin("POST", f"{APPS}/deployments", deployment("blocked"))).status == 201

    def refused() -> bool:
        return any(e["user"]["username"] == user and e["responseStatus"]["code"] == 403 for e in writes(srv))
    await eventually(refused, 15, what="the deployment controller to be refused")
    replica_sets = await admin("GET", f"{APPS}/replicasets")
    assert replica_sets.body["items"] == []
    # The ReplicaSet controller, the simulated nodes and the collector still do their part.
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "direct"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "direct"}},
                   "template": {"metadata": {"labels": {"app": "direct"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}}}
    assert (await admin("POST", f"{APPS}/replicasets", rs)).status == 201

    async def ready() -> bool:
        return ((await admin("GET", f"{APPS}/replicasets/direct")).body.get("status") or {}).get("readyReplicas") == 1
    await eventually(ready, 30, what="the ReplicaSet's pod")
    assert (await admin("DELETE", f"{APPS}/replicasets/direct")).status == 200

    async def no_pods() -> bool:
        return (await admin("GET", "/api/v1/namespaces/default/pods")).body["items"] == []
    await eventually(no_pods, 30, what="the collector to delete the pod")

    assert (await admin("POST", f"{RBAC}/clusterrolebindings", saved)).status == 201
    await eventually(lambda: allowed(admin, user, "create", "apps", "replicasets"), what="RBAC to see the binding")
    await eventually(lambda: rolled_out(admin, "blocked"), 60, what="the rollout once allowed again")


async def _not(check: Any) -> bool:
    return not await check


async def test_controller_tokens_pass_the_in_flight_limit(tmp_path: Path) -> None:
    """The controllers' requests, as the loopback client's, are the server's own: never refused
    for being one too many (they go on to RBAC, which decides as for anyone)."""
    limits = RequestLimits(max_requests_inflight=1, max_mutating_requests_inflight=1, request_timeout=30.0)
    srv = APIServer(dataclasses.replace(rbac_config(tmp_path / "state", controllers=True), limits=limits, simulated_nodes=0))
    await srv.start()
    try:
        assert srv.controllers is not None
        body = json.dumps(configmap("held")).encode()
        _, held = await connect(srv)  # the admin's POST, its body promised but only half sent: in flight meanwhile
        held.write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin\r\nContent-Type: application/json\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:5])
        await held.drain()
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            await until_in_flight(session)
            for account, client in srv.controllers.accounts.items():
                try:
                    await client.resource("", "v1", "configmaps", "default").create(configmap(f"by-{account}"))
                except ApiError as err:
                    assert err.code == 403, err  # past the limit: refused by RBAC, not made to wait
            async with session.post(CM, json={"metadata": {"name": "guess"}}, headers={"Authorization": "Bearer x"}) as reply:
                assert reply.status == 429  # a token not of ours waits its turn
        held.close()
    finally:
        await srv.stop()
    assert srv.controllers.accounts  # the controllers' tokens are known no more once stopped
    assert set(srv.security.own_tokens.tokens) == {srv.security.loopback_token}


def _clients(obj: object, seen: set[int] | None = None) -> Iterator[RESTClient]:
    """The RESTClients a controller holds, directly or in its parts (not through shared informers,
    which are on the manager's own client by design)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None), SharedInformerFactory, Informer)):
        return
    seen.add(id(obj))
    if isinstance(obj, RESTClient):
        yield obj
        return
    if isinstance(obj, dict):
        parts: list[object] = list(obj.values())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        parts = list(obj)
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("kplane."):
        parts = list(vars(obj).values())
    else:
        return
    for part in parts:
        yield from _clients(part, seen)


AS_THE_MANAGER = {"serviceaccount-token"}  # kube-controller-manager's rootClientBuilder


async def test_every_controller_acts_as_an_account_with_its_bootstrap_role() -> None:
    """Adding a controller that acts as the manager, or as an account with no bootstrap role
    and binding, fails here. The one exception is kube's: the tokens controller runs on the
    controller-manager's root client, since the other controllers' credentials may need it."""
    plugins = PluginManager(config=ServerConfig(simulated_nodes=1))
    plugins.load_entry_points()
    base = RESTClient("http://127.0.0.1:1")  # never contacted: nothing is started
    accounts = InProcessAccounts(base, {})
    try:
        manager = await build_controller_manager(base, plugins, clients=accounts)
        by_controller = {name: set(_clients(controller)) for name, controller in manager.controllers.items()}
    finally:
        await accounts.close()
        await base.close()
    assert set(by_controller) == manager.known  # simulated-nodes with one node: every one runs
    names = {id(client): account for account, client in manager.accounts.items()}
    for controller, clients in by_controller.items():
        assert clients, f"{controller} holds no client"
        if controller in AS_THE_MANAGER:
            assert clients == {base}, f"{controller} acts through a client that is not the manager's"
            continue
        assert all(id(c) in names for c in clients), f"{controller} acts through a client that is not its account's"
    assert set(manager.accounts) == set(CONTROLLERS)  # a role for every account, and no role unused
    bound = {b["metadata"]["name"]: b["subjects"] for b in CLUSTER_ROLE_BINDINGS}
    for account in manager.accounts:
        assert bound[f"system:controller:{account}"] == [{"kind": "ServiceAccount", "name": account, "namespace": "kube-system"}]


def _serves_token_requests(resources: dict[str, Any]) -> bool:
    return any(r["name"] == "serviceaccounts/token" for r in resources["resources"])


async def test_token_request_accounts_renew_their_tokens_before_expiry(tmp_path: Path) -> None:
    """Without the server's own tokens: each account's token from the TokenRequest API (its
    ServiceAccount created first), renewed once less than a fifth of its life is left."""
    (tmp_path / "policy.yaml").write_text(POLICY)
    audit = AuditOptions(policy_file=tmp_path / "policy.yaml", log_path=str(tmp_path / "audit.log"))
    srv = APIServer(dataclasses.replace(rbac_config(tmp_path / "state"), audit=audit))
    await srv.start()
    base, bare = RESTClient(srv.url, token="admin"), RESTClient(srv.url)
    now = [time.time()]
    accounts = TokenRequestAccounts(base, bare, clock=lambda: now[0])
    try:
        if not _serves_token_requests(await base.request("GET", "/api/v1")):
            pytest.skip("this server does not serve serviceaccounts/token")
        client = accounts.client_for("deployment-controller")
        with pytest.raises(ApiError) as refused:  # allowed only what its role grants
            await client.resource("", "v1", "secrets", "default").list()
        assert refused.value.code == 403 and f'User "{SA}deployment-controller"' in refused.value.status["message"]
        assert (await base.resource("", "v1", "serviceaccounts", "kube-system").get("deployment-controller"))
        await client.resource("apps", "v1", "deployments", "default").list()
        first = client.token_source.token  # type: ignore[union-attr]
        assert await first() == await first()  # one TokenRequest while fresh

        def token_requests() -> int:
            return sum(1 for e in writes(srv) if e["verb"] == "create" and e["objectRef"].get("subresource") == "token")
        assert token_requests() == 1
        now[0] += 3600 * 0.85  # past 80% of the hour asked for
        await client.resource("apps", "v1", "deployments", "default").list()
        assert token_requests() == 2
    finally:
        await accounts.close()
        await base.close()
        await srv.stop()


async def test_kplane_controller_manager_uses_service_account_credentials(tmp_path: Path) -> None:
    """`kplane controller-manager --use-service-account-credentials` against an RBAC server: its
    kubeconfig's user (in system:masters) makes the accounts and their tokens, and each
    controller acts as its own account."""
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "tokens.csv").write_text('admin-token,admin,1,"system:masters"\n')
    log = tmp_path / "audit.log"
    with serving(tmp_path / "state", "--no-controllers", "--authorization-mode", "RBAC", "--token-auth-file",
                 str(tmp_path / "tokens.csv"), "--audit-policy-file", str(tmp_path / "policy.yaml"),
                 "--audit-log-path", str(log)) as served:
        config = yaml.safe_load(served.kubeconfig.read_text())
        user = config["users"][0]["user"]
        if not user:  # a server without client certificates: the admin by token
            user["token"] = "admin-token"
        kubeconfig = tmp_path / "admin.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        admin = client_from_kubeconfig(kubeconfig)
        try:
            if not _serves_token_requests(await admin.request("GET", "/api/v1")):
                pytest.skip("this server does not serve serviceaccounts/token")
            with (tmp_path / "cm.log").open("w") as out:
                cm = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "controller-manager", "--kubeconfig",
                                       str(kubeconfig), "--use-service-account-credentials", "--simulated-nodes", "1"],
                                      stdout=out, stderr=subprocess.STDOUT)
            try:
                deployments = admin.resource("apps", "v1", "deployments", "default")
                await deployments.create(deployment("web"))

                async def rolled() -> bool:
                    status = (await deployments.get("web")).get("status") or {}
                    return status.get("availableReplicas") == 2
                await eventually(rolled, 60, what=f"the rollout; {(tmp_path / 'cm.log').read_text()}")
                listed = await admin.resource("", "v1", "serviceaccounts", "kube-system").list()
            finally:
                cm.terminate()
                cm.wait(timeout=15)
        finally:
            await admin.close()
    accounts = {a["metadata"]["name"] for a in listed["items"]}
    assert {"deployment-controller", "replicaset-controller", "simulated-nodes"} <= accounts
    events = [json.loads(line) for line in log.read_text().splitlines()]

    def who(resource: str, subresource: str = "") -> set[str]:
        return {e["user"]["username"] for e in events if e["verb"] == "create" and e["responseStatus"]["code"] < 300
                and e.get("objectRef", {}).get("resource") == resource and e["objectRef"].get("subresource", "") == subresource}
    assert who("replicasets") == {SA + "deployment-controller"}
    assert who("pods") == {SA + "replicaset-controller"}
    assert who("pods", "binding") == {SA + "simulated-nodes"}
    assert who("serviceaccounts", "token") == {"admin"}
