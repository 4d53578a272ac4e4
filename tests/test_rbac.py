"""RBAC through real HTTP: a server in the ``RBAC`` mode, users by bearer token (a small test
plugin), decisions by Roles, ClusterRoles and their bindings, escalation refusals, the bootstrap
policy reconciled across restarts, and ClusterRole aggregation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kplane.api import Authenticated, hookimpl
from kplane.core.authn.user import UserInfo
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.config import ServerConfig
from kplane.core.serving.apiserver import APIServer
from tests.servers import server_config
from tests.conftest import Client, Reply

RBAC = "/apis/rbac.authorization.k8s.io/v1"
USERS = {
    "admin": UserInfo("admin", groups=("system:masters",)),
    "alice": UserInfo("alice", groups=("staff",)),
    "bob": UserInfo("bob"),
    "robot": UserInfo("system:serviceaccount:team:robot", groups=("system:serviceaccounts", "system:serviceaccounts:team")),
}


class Tokens:
    """Each token is the user of that name."""

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        return Authenticated(USERS[token]) if token in USERS else None


class TokensPlugin:
    @hookimpl
    def kplane_register_authenticators(self, authenticators):
        authenticators.add_token("TestTokens", Tokens())


def rbac_config(data_dir: Path, *, controllers: bool = False) -> ServerConfig:
    return server_config(data_dir=data_dir, port=0, run_controllers=controllers, extra_plugins=[("tokens", TokensPlugin())],
                        authorization=AuthorizationOptions(modes=("RBAC",)))


class As:
    """Requests as one user (or anonymous, without a token)."""

    def __init__(self, session: aiohttp.ClientSession, token: str | None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.client = Client(session)
        self.headers = headers

    async def __call__(self, method: str, path: str, body: Any = None) -> Reply:
        return await self.client.request(method, path, body, headers=self.headers)


@pytest.fixture
async def rbac(tmp_path: Path) -> AsyncIterator[tuple[APIServer, Callable[[str | None], As]]]:
    srv = APIServer(rbac_config(tmp_path / "state", controllers=True))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            yield srv, lambda token: As(session, token)
    finally:
        await srv.stop()


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def status_becomes(who: As, method: str, path: str, status: int, body: Any = None) -> Reply:
    """The cache follows the bindings through a watch: wait until the decision changes."""
    reply: list[Reply] = []

    async def check() -> bool:
        reply[:] = [await who(method, path, body)]
        return reply[0].status == status
    await eventually(check)
    return reply[0]


def role(name: str, rules: list[dict[str, Any]], kind: str = "Role", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name, **meta}, "rules": rules}


def binding(name: str, role_kind: str, role_name: str, subjects: list[dict[str, Any]], kind: str = "RoleBinding") -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role_name}, "subjects": subjects}


def user(name: str) -> dict[str, str]:
    return {"kind": "User", "name": name}  # apiGroup defaulted


async def test_roles_and_bindings_decide_requests(rbac) -> None:
    srv, as_ = rbac
    admin, alice = as_("admin"), as_("alice")
    assert (await admin("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    rules = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]},
             {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["mine"]},
             {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}]
    assert (await admin("POST", f"{RBAC}/namespaces/default/roles", role("reader", rules))).status == 201
    created = await admin("POST", f"{RBAC}/namespaces/default/rolebindings", binding("alice-reads", "Role", "reader", [user("alice")]))
    assert created.status == 201 and created.body["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}]

    await status_becomes(alice, "GET", "/api/v1/namespaces/default/configmaps", 200)
    assert (await alice("GET", "/api/v1/namespaces/default/configmaps/none")).status == 404  # allowed, missing
    denied = await alice("GET", "/api/v1/namespaces/team/configmaps")
    assert denied.status == 403 and denied.body["message"] == (
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team"')
    assert (await alice("GET", "/api/v1/namespaces/default/secrets/mine")).status == 404  # by name: allowed
    assert (await alice("GET", "/api/v1/namespaces/default/secrets/other")).status == 403
    assert (await alice("GET", "/api/v1/namespaces/default/secrets")).status == 403  # a list names nothing
    assert (await alice("GET", "/api/v1/namespaces/default/pods/p/log")).status == 404  # the subresource
    assert (await alice("GET", "/api/v1/namespaces/default/pods/p")).status == 403  # not the pod itself
    assert (await alice("DELETE", "/api/v1/namespaces/default/configmaps/x")).status == 403

    # Reasons, as SubjectAccessReview reports them.
    verdict = await srv.authorizers.authorize(_attributes(USERS["alice"], "list", "configmaps", "default"))
    assert verdict.allowed and verdict.reason == (
        'RBAC: allowed by RoleBinding "alice-reads/default" of Role "reader" to User "alice"')

    # A binding to a role that does not exist: no opinion, and why.
    await admin("POST", f"{RBAC}/namespaces/team/rolebindings", binding("dangling", "Role", "nope", [user("alice")]))
    reply = await status_becomes(alice, "GET", "/api/v1/namespaces/team/pods", 403)
    await eventually(lambda: _reason_is(srv, 'RBAC: role.rbac.authorization.k8s.io "nope" not found'))
    assert reply.body["reason"] == "Forbidden"

    # Deleting the binding takes the permission away.
    assert (await admin("DELETE", f"{RBAC}/namespaces/default/rolebindings/alice-reads")).status == 200
    await status_becomes(alice, "GET", "/api/v1/namespaces/default/configmaps", 403)


async def _reason_is(srv: APIServer, reason: str) -> bool:
    return (await srv.authorizers.authorize(_attributes(USERS["alice"], "list", "pods", "team"))).reason == reason


def _attributes(who: UserInfo, verb: str, resource: str, namespace: str, group: str = "") -> Any:
    from kplane.core.authz.attributes import Attributes
    return Attributes(who.with_group("system:authenticated"), verb, True, namespace, group, "v1", resource)


async def test_cluster_roles_groups_service_accounts_and_paths(rbac) -> None:
    srv, as_ = rbac
    admin, alice, bob, robot, anonymous = as_("admin"), as_("alice"), as_("bob"), as_("robot"), as_(None)
    # The bootstrap policy: health and version for everyone, discovery for the authenticated.
    assert (await anonymous("GET", "/healthz")).status == 200
    assert (await anonymous("GET", "/version")).status == 200
    forbidden = await anonymous("GET", "/apis")
    assert forbidden.status == 403 and forbidden.body["message"] == 'forbidden: User "system:anonymous" cannot get path "/apis"'
    assert (await bob("GET", "/apis")).status == 200 and (await bob("GET", "/api/v1")).status == 200
    assert (await bob("GET", "/metrics")).status == 403

    # A ClusterRole bound to a group, everywhere; "*/scale" grants every scale subresource.
    scaler = role("scaler", [{"verbs": ["get", "update"], "apiGroups": ["apps"], "resources": ["*/scale"]},
                             {"verbs": ["get"], "nonResourceURLs": ["/debug/*"]}], kind="ClusterRole")
    assert (await admin("POST", f"{RBAC}/clusterroles", scaler)).status == 201
    staff = binding("staff-scale", "ClusterRole", "scaler", [{"kind": "Group", "name": "staff"}], kind="ClusterRoleBinding")
    assert (await admin("POST", f"{RBAC}/clusterrolebindings", staff)).status == 201
    await status_becomes(alice, "GET", "/apis/apps/v1/namespaces/any/deployments/web/scale", 404)
    assert (await alice("GET", "/apis/apps/v1/namespaces/any/replicasets/web/scale")).status == 404
    assert (await alice("GET", "/apis/apps/v1/namespaces/any/deployments/web")).status == 403
    assert (await alice("GET", "/debug/plugins")).status == 200  # the trailing "*"
    assert (await bob("GET", "/debug/plugins")).status == 403

    # A ServiceAccount subject without a namespace is of the binding's namespace.
    sa = {"kind": "ServiceAccount", "name": "robot"}
    await admin("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    assert (await admin("POST", f"{RBAC}/namespaces/team/rolebindings", binding("robot-views", "ClusterRole", "view", [sa]))).status == 201
    await status_becomes(robot, "GET", "/api/v1/namespaces/team/pods", 200)
    assert (await robot("GET", "/api/v1/namespaces/default/pods")).status == 403
    # ... and the groups of ServiceAccounts are groups like any other.
    accounts = binding("accounts", "ClusterRole", "view", [{"kind": "Group", "name": "system:serviceaccounts:team"}],
                       kind="ClusterRoleBinding")
    await admin("POST", f"{RBAC}/clusterrolebindings", accounts)
    await status_becomes(robot, "GET", "/api/v1/namespaces/default/pods", 200)
    verdict = await srv.authorizers.authorize(_attributes(USERS["robot"], "list", "pods", "team"))
    assert verdict.reason.startswith("RBAC: allowed by ")

    # What a user may do, as SelfSubjectRulesReview lists it.
    rules = await srv.authorizers.rules_for(USERS["robot"].with_group("system:authenticated"), "team")
    assert any("pods" in r.resources and "list" in r.verbs for r in rules.resource)
    assert any("/healthz" in r.non_resource_urls for r in rules.non_resource) and not rules.incomplete


async def test_aggregation_edit_holds_view(rbac) -> None:
    srv, as_ = rbac
    admin = as_("admin")

    async def rules_of(name: str) -> list[dict[str, Any]]:
        return (await admin("GET", f"{RBAC}/clusterroles/{name}")).body["rules"] or []

    async def aggregated() -> bool:
        view, edit, admin_ = await rules_of("view"), await rules_of("edit"), await rules_of("admin")
        return bool(view) and len(edit) > len(view) and all(r in edit for r in view) and all(r in admin_ for r in edit)
    await eventually(aggregated)  # the controller runs once the server is ready
    extra = role("widgets-view", [{"verbs": ["get"], "apiGroups": ["widgets.example.com"], "resources": ["widgets"]}],
                 kind="ClusterRole", labels={"rbac.authorization.k8s.io/aggregate-to-view": "true"})
    assert (await admin("POST", f"{RBAC}/clusterroles", extra)).status == 201
    for name in ("view", "edit", "admin"):
        await eventually(lambda name=name: _has(rules_of(name), extra["rules"][0]))
    # A change of a selected role reaches the aggregate; rules written to it by hand are replaced.
    extra["rules"] = [{"verbs": ["list"], "apiGroups": ["widgets.example.com"], "resources": ["widgets"]}]
    assert (await admin("PUT", f"{RBAC}/clusterroles/widgets-view", extra)).status == 200
    await eventually(lambda: _has(rules_of("view"), extra["rules"][0]))
    assert {"verbs": ["get"], "apiGroups": ["widgets.example.com"], "resources": ["widgets"]} not in await rules_of("view")


async def _has(rules: Awaitable[list[dict[str, Any]]], rule: dict[str, Any]) -> bool:
    return rule in await rules


async def test_escalation_needs_the_permissions_or_escalate_and_bind(rbac) -> None:
    srv, as_ = rbac
    admin, alice = as_("admin"), as_("alice")
    await admin("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    writer = role("role-writer", [{"verbs": ["create", "get", "update"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"]},
                                  {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}])
    assert (await admin("POST", f"{RBAC}/namespaces/team/roles", writer)).status == 201
    assert (await admin("POST", f"{RBAC}/namespaces/team/rolebindings", binding("alice-writes", "Role", "role-writer", [user("alice")]))).status == 201
    held = role("held", [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}])
    await status_becomes(alice, "POST", f"{RBAC}/namespaces/team/roles", 201, held)

    too_much = role("too-much", [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"]},
                                 {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}])
    refused = await alice("POST", f"{RBAC}/namespaces/team/roles", too_much)
    assert refused.status == 403, refused
    assert refused.body["message"] == (
        'roles.rbac.authorization.k8s.io "too-much" is forbidden: user "alice" (groups=["staff" "system:authenticated"]) '
        'is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')
    assert (await admin("GET", f"{RBAC}/namespaces/team/roles/too-much")).status == 404
    # Updating a role held is fine; adding to it what is not held is not.
    held["rules"][0]["verbs"] = ["get", "delete"]
    assert (await alice("PUT", f"{RBAC}/namespaces/team/roles/held", held)).status == 403

    # Binding a role whose permissions alice lacks, then with "bind" on that role only.
    async def edit_aggregated() -> bool:
        return bool((await admin("GET", f"{RBAC}/clusterroles/edit")).body["rules"])
    await eventually(edit_aggregated)
    to_edit = binding("alice-edit", "ClusterRole", "edit", [user("bob")])
    refused = await alice("POST", f"{RBAC}/namespaces/team/rolebindings", to_edit)
    assert refused.status == 403 and "is attempting to grant RBAC permissions not currently held:\n" in refused.body["message"]
    assert refused.body["message"].startswith('rolebindings.rbac.authorization.k8s.io "alice-edit" is forbidden: user "alice"')
    binder = role("binder", [{"verbs": ["bind"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                              "resourceNames": ["edit"]},
                             {"verbs": ["escalate"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]}])
    assert (await admin("POST", f"{RBAC}/namespaces/team/roles", binder)).status == 201
    assert (await admin("POST", f"{RBAC}/namespaces/team/rolebindings", binding("alice-binds", "Role", "binder", [user("alice")]))).status == 201
    await status_becomes(alice, "POST", f"{RBAC}/namespaces/team/rolebindings", 201, to_edit)
    to_admin = binding("alice-admin", "ClusterRole", "admin", [user("bob")])
    assert (await alice("POST", f"{RBAC}/namespaces/team/rolebindings", to_admin)).status == 403  # bind names "edit" only
    # A binding of a role alice holds needs nothing more.
    assert (await alice("POST", f"{RBAC}/namespaces/team/rolebindings", binding("held", "Role", "held", [user("bob")]))).status == 201
    # "escalate" on roles: rules beyond one's own are allowed.
    assert (await alice("POST", f"{RBAC}/namespaces/team/roles", too_much)).status == 201
    # A role too big to break down piece by piece is refused as a whole (the check stays bounded).
    del binder["rules"][1]
    assert (await admin("PUT", f"{RBAC}/namespaces/team/roles/binder", binder)).status == 200
    huge = role("huge", [{"verbs": [f"v{i}" for i in range(300)], "apiGroups": [""], "resources": [f"r{i}" for i in range(300)]}])
    refused = await status_becomes(alice, "POST", f"{RBAC}/namespaces/team/roles", 403, huge)
    assert refused.body["message"].count("\n{APIGroups:") == 1
    # Many rules of many pieces each: the budget is the check's, and the refusal lists 100 at most.
    many = role("many", [{"verbs": [f"v{i}" for i in range(10)], "apiGroups": [f"g{j}" for j in range(10)],
                          "resources": [f"r{k}.{n}" for k in range(100)]} for n in range(80)])
    refused = await alice("POST", f"{RBAC}/namespaces/team/roles", many)
    assert refused.status == 403 and refused.body["message"].endswith(" more")
    assert refused.body["message"].count("\n{APIGroups:") == 100 and len(refused.body["message"]) < 200_000  # 5.6 MB before
    missing_role = binding("to-nothing", "Role", "nope", [user("bob")])
    assert (await alice("POST", f"{RBAC}/namespaces/team/rolebindings", missing_role)).status == 404


async def test_decisions_follow_the_roles_they_were_made_from(rbac) -> None:
    """A user's bindings and their roles are looked up once and kept until the policy changes:
    a change to a role already decided on, its deletion and its return are seen all the same."""
    _, as_ = rbac
    admin, bob = as_("admin"), as_("bob")
    reader = role("cm", [{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}])
    assert (await admin("POST", f"{RBAC}/namespaces/default/roles", reader)).status == 201
    assert (await admin("POST", f"{RBAC}/namespaces/default/rolebindings", binding("bob-cm", "Role", "cm", [user("bob")]))).status == 201
    await status_becomes(bob, "GET", "/api/v1/namespaces/default/configmaps/x", 404)
    assert (await bob("GET", "/api/v1/namespaces/default/configmaps")).status == 403

    lister = [{"op": "replace", "path": "/rules/0/verbs", "value": ["list"]}]
    reply = await admin.client.request("PATCH", f"{RBAC}/namespaces/default/roles/cm", lister, headers=admin.headers,
                                       content_type="application/json-patch+json")
    assert reply.status == 200, reply.body
    await status_becomes(bob, "GET", "/api/v1/namespaces/default/configmaps", 200)
    assert (await bob("GET", "/api/v1/namespaces/default/configmaps/x")).status == 403

    assert (await admin("DELETE", f"{RBAC}/namespaces/default/roles/cm")).status == 200
    await status_becomes(bob, "GET", "/api/v1/namespaces/default/configmaps", 403)
    assert (await admin("POST", f"{RBAC}/namespaces/default/roles", reader)).status == 201
    await status_becomes(bob, "GET", "/api/v1/namespaces/default/configmaps/x", 404)


async def test_validation_and_immutable_role_ref(rbac) -> None:
    srv, as_ = rbac
    admin = as_("admin")
    bad = role("bad", [{"apiGroups": [""], "resources": ["pods"]}, {"verbs": ["get"], "nonResourceURLs": ["/x"]},
                       {"verbs": ["get"], "resources": ["pods"]}])
    reply = await admin("POST", f"{RBAC}/namespaces/default/roles", bad)
    assert reply.status == 422
    assert [c["field"] for c in reply.body["details"]["causes"]] == ["rules[0].verbs", "rules[1].nonResourceURLs", "rules[2].apiGroups"]
    assert "rules[0].verbs: Required value: verbs must contain at least one value" in reply.body["message"]
    assert "namespaced rules cannot apply to non-resource URLs" in reply.body["message"]
    subjects = [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "r"}, {"kind": "User", "name": "u", "apiGroup": "x"}]
    reply = await admin("POST", f"{RBAC}/clusterrolebindings", binding("b", "Role", "view", subjects, kind="ClusterRoleBinding"))
    assert reply.status == 422
    assert [c["field"] for c in reply.body["details"]["causes"]] == [
        "roleRef.kind", "subjects[0].namespace", "subjects[1].kind", "subjects[2].apiGroup"]
    good = binding("b", "ClusterRole", "view", [user("u")], kind="ClusterRoleBinding")
    assert (await admin("POST", f"{RBAC}/clusterrolebindings", good)).status == 201
    good["roleRef"]["name"] = "edit"
    reply = await admin("PUT", f"{RBAC}/clusterrolebindings/b", good)
    assert reply.status == 422 and "roleRef: Invalid value: " in reply.body["message"] and reply.body["message"].endswith("cannot change roleRef")
    assert (await admin("POST", f"{RBAC}/clusterroles", role("a/b", [], kind="ClusterRole"))).status == 422


async def test_bootstrap_policy_is_reconciled_keeping_what_users_changed(tmp_path: Path) -> None:
    data = tmp_path / "state"

    async def started() -> APIServer:
        srv = APIServer(rbac_config(data))
        await srv.start()
        return srv

    srv = await started()
    client = srv.informers.client
    try:
        bootstrap = await client.request("GET", f"{RBAC}/clusterroles?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults")
        names = {r["metadata"]["name"] for r in bootstrap["items"]}
        assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user", "system:public-info-viewer",
                "system:controller:deployment-controller", "system:controller:namespace-controller",
                "system:controller:generic-garbage-collector", "system:controller:clusterrole-aggregation-controller"} <= names
        crb = await client.request("GET", f"{RBAC}/clusterrolebindings/system:controller:replicaset-controller")
        assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "replicaset-controller", "namespace": "kube-system"}]
        versions = {r["metadata"]["name"]: r["metadata"]["resourceVersion"] for r in bootstrap["items"]}
        # A user's additions, a protected role, a deleted binding.
        discovery = await client.request("GET", f"{RBAC}/clusterroles/system:discovery")
        discovery["rules"].append({"verbs": ["get"], "nonResourceURLs": ["/mine"]})
        discovery["metadata"]["labels"]["team"] = "ours"
        await client.request("PUT", f"{RBAC}/clusterroles/system:discovery", discovery)
        basic = await client.request("GET", f"{RBAC}/clusterroles/system:basic-user")
        basic["rules"] = [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
        basic["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
        await client.request("PUT", f"{RBAC}/clusterroles/system:basic-user", basic)
        public = await client.request("GET", f"{RBAC}/clusterroles/system:public-info-viewer")
        public["rules"] = []
        await client.request("PUT", f"{RBAC}/clusterroles/system:public-info-viewer", public)
        await client.request("DELETE", f"{RBAC}/clusterrolebindings/cluster-admin")
    finally:
        await srv.stop()

    srv = await started()
    client = srv.informers.client
    try:
        discovery = await client.request("GET", f"{RBAC}/clusterroles/system:discovery")
        assert {"verbs": ["get"], "nonResourceURLs": ["/mine"]} in discovery["rules"] and discovery["metadata"]["labels"]["team"] == "ours"
        basic = await client.request("GET", f"{RBAC}/clusterroles/system:basic-user")
        assert basic["rules"] == [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
        public = await client.request("GET", f"{RBAC}/clusterroles/system:public-info-viewer")
        assert {u for r in public["rules"] for u in r["nonResourceURLs"]} == {"/healthz", "/livez", "/readyz", "/version", "/version/"}
        admin = await client.request("GET", f"{RBAC}/clusterrolebindings/cluster-admin")
        assert admin["subjects"] == [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}]
        again = await client.request("GET", f"{RBAC}/clusterroles?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults")
        changed = {r["metadata"]["name"] for r in again["items"] if versions.get(r["metadata"]["name"]) != r["metadata"]["resourceVersion"]}
        assert changed == {"system:discovery", "system:basic-user", "system:public-info-viewer"}  # the ones touched
    finally:
        await srv.stop()
    srv = await started()  # a third start changes nothing
    try:
        third = await srv.informers.client.request("GET", f"{RBAC}/clusterroles?labelSelector=kubernetes.io/bootstrapping%3Drbac-defaults")
        assert {r["metadata"]["name"]: r["metadata"]["resourceVersion"] for r in third["items"]} == \
            {r["metadata"]["name"]: r["metadata"]["resourceVersion"] for r in again["items"]}
    finally:
        await srv.stop()


async def test_two_servers_on_one_storage_reconcile_together(tmp_path: Path, etcd_server) -> None:
    storage = f"etcd://127.0.0.1:{etcd_server.client_port}/rbac-{tmp_path.name}"
    servers = [APIServer(server_config(data_dir=tmp_path / name, port=0, run_controllers=False, storage_url=storage,
                                      authorization=AuthorizationOptions(modes=("RBAC",)))) for name in ("a", "b")]
    await asyncio.gather(*(s.start() for s in servers))
    try:
        listed = await servers[0].informers.client.request("GET", f"{RBAC}/clusterrolebindings")
        names = [b["metadata"]["name"] for b in listed["items"]]
        assert len(names) == len(set(names)) and "system:public-info-viewer" in names
    finally:
        await asyncio.gather(*(s.stop() for s in servers))


async def test_a_write_that_creates_needs_create(rbac) -> None:
    """Server-side apply of a missing object, and a PUT of a missing Lease (which creates on
    update): refused to a user who may patch or update but not create, as kube authorizes them."""
    srv, as_ = rbac
    admin, alice = as_("admin"), as_("alice")
    await admin("POST", "/api/v1/namespaces", {"metadata": {"name": "team"}})
    patcher = role("patcher", [{"verbs": ["get", "patch", "update"], "apiGroups": ["", "coordination.k8s.io"],
                                "resources": ["configmaps", "leases"]}])
    assert (await admin("POST", f"{RBAC}/namespaces/team/roles", patcher)).status == 201
    assert (await admin("POST", f"{RBAC}/namespaces/team/rolebindings", binding("alice", "Role", "patcher", [user("alice")]))).status == 201
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "b"}}
    apply = dict(content_type="application/apply-patch+yaml", headers={"Authorization": "Bearer alice"})
    path = "/api/v1/namespaces/team/configmaps/applied?fieldManager=test"

    async def refused() -> bool:
        reply = await alice.client.request("PATCH", path, cm, **apply)
        return reply.status == 403 and 'cannot create resource "configmaps"' in reply.body["message"]
    await eventually(refused)
    assert (await admin("GET", "/api/v1/namespaces/team/configmaps/applied")).status == 404
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {}}
    put = await alice("PUT", "/apis/coordination.k8s.io/v1/namespaces/team/leases/l", lease)
    assert put.status == 403 and put.body["message"] == (
        'leases.coordination.k8s.io "l" is forbidden: User "alice" cannot create resource "leases" in API group '
        '"coordination.k8s.io" in the namespace "team"')
    # Once it exists, patching and updating it are what alice holds.
    created = await admin.client.request("PATCH", path, cm, content_type="application/apply-patch+yaml",
                                         headers={"Authorization": "Bearer admin"})
    assert created.status == 201
    again = await alice.client.request("PATCH", path, {**cm, "data": {"a": "c"}}, **apply)
    assert again.status == 200 and again.body["data"] == {"a": "c"}
