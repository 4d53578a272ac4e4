"""The review APIs (authentication.k8s.io TokenReview and SelfSubjectReview; authorization.k8s.io
SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview, SelfSubjectRulesReview)
through real HTTP, the real kubectl (which posts protobuf) and the official Python client: with
the default server (AlwaysAllow), and with a server whose plugin authenticates tokens and
decides access."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from kplane.api import (
    ALLOWED, NO_OPINION, Attributes, Authenticated, AuthenticationError, Decision, NonResourceRule, ResourceRule,
    Rules, Served, UserInfo, Verdict, hookimpl,
)
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.serving.apiserver import APIServer
from tests.kubectl_cli import Kubectl
from tests.servers import server_config

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402

AUTHN = "/apis/authentication.k8s.io/v1"
AUTHZ = "/apis/authorization.k8s.io/v1"
ALICE = UserInfo("alice", uid="uid-alice", groups=("staff",), extra={"scopes": ("read", "write")})


class Badges:
    """Tokens: "alice"; "mallory"; "audience" (good only for the audience "api"); "revoked" is bad."""

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        if token == "revoked":
            raise AuthenticationError("token revoked")
        if token == "alice":
            return Authenticated(ALICE)
        if token == "mallory":
            return Authenticated(UserInfo("mallory"))
        if token == "audience":
            return Authenticated(UserInfo("svc"), audiences=("api",))
        return None


class Gate:
    """Everyone may review themselves and read paths (discovery); alice may create deployments in
    "default"; mallory is denied everything else."""

    async def authorize(self, a: Attributes) -> Verdict:
        if a.resource_request and a.verb == "create" and (a.api_group, a.resource) in (
                ("authorization.k8s.io", "selfsubjectaccessreviews"), ("authorization.k8s.io", "selfsubjectrulesreviews"),
                ("authentication.k8s.io", "selfsubjectreviews")):
            return ALLOWED
        if a.user.name == "mallory":
            return Verdict(Decision.DENY, "mallory is banned")
        if not a.resource_request and a.verb == "get":
            return ALLOWED
        if a.user.name != "alice":
            return Verdict(Decision.NO_OPINION, "no rule for it")
        if a.verb == "create" and (a.api_group, a.resource) in (("authorization.k8s.io", "subjectaccessreviews"),
                                                                 ("authorization.k8s.io", "localsubjectaccessreviews"),
                                                                 ("authentication.k8s.io", "tokenreviews")):
            return ALLOWED
        if (a.verb, a.api_group, a.resource, a.namespace) == ("create", "apps", "deployments", "default"):
            return ALLOWED
        return Verdict(Decision.NO_OPINION, "no rule for it")

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        if user.name == "alice" and namespace == "default":
            return Rules([ResourceRule(("create",), ("apps",), ("deployments",))], [NonResourceRule(("get",), ("*",))])
        if user.name == "system:anonymous":
            return Rules([ResourceRule(("get",), ("",), ("configmaps",), ("settings",))], [NonResourceRule(("get",), ("*",))])
        return Rules(incomplete=True, errors=["no rules for you"])


class GatePlugin:
    @hookimpl
    def kplane_register_authenticators(self, authenticators):
        authenticators.add_token("Badges", Badges())

    @hookimpl
    def kplane_register_authorizers(self, authorizers):
        authorizers.add("Gate", Gate())


@pytest.fixture
async def gated(tmp_path: Path) -> AsyncIterator[APIServer]:
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False,
                                 extra_plugins=[("gate", GatePlugin())],
                                 authorization=AuthorizationOptions(modes=("Gate",))))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


async def _post(url: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession() as session, session.post(url, json=body, headers=headers) as reply:
        return reply.status, await reply.json(content_type=None)


def _kubectl_for(srv: APIServer, tmp_path: Path) -> Kubectl:
    """kubectl for the in-process ``srv``: anonymous, as kubectl sends no credentials over plain HTTP."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": srv.url}}],
        "users": [{"name": "u", "user": {}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "default"}}],
    }))
    env = {"KUBECONFIG": str(kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path),
           "PATH": os.environ["PATH"]}
    return Kubectl(env, tmp_path)


def _python_client(srv: APIServer, token: str) -> client.ApiClient:
    configuration = client.Configuration(host=srv.url, api_key={"authorization": token},
                                         api_key_prefix={"authorization": "Bearer"})
    return client.ApiClient(configuration)


async def _kubectl(kubectl: Kubectl, *args: str) -> tuple[int, str, str]:
    """kubectl in a thread, so the in-process server keeps serving it."""
    done = await asyncio.to_thread(kubectl.run, *args, check=False)
    return done.returncode, done.stdout, done.stderr


# -- the default server: AlwaysAllow, anonymous ---------------------------------------------------
def test_kubectl_can_i_and_whoami(kubectl: Kubectl) -> None:
    assert kubectl.run("auth", "can-i", "create", "deployments").stdout == "yes\n"
    assert kubectl.run("auth", "can-i", "get", "/healthz").stdout == "yes\n"
    listed = kubectl.run("auth", "can-i", "--list").stdout.splitlines()
    assert listed[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert listed[1].split() == ["*.*", "[]", "[]", "[*]"]
    whoami = kubectl.json("auth", "whoami")
    assert whoami["kind"] == "SelfSubjectReview" and whoami["apiVersion"] == "authentication.k8s.io/v1"
    assert whoami["status"] == {"userInfo": {"username": "system:anonymous", "groups": ["system:unauthenticated"]}}
    assert "Username    system:anonymous" in kubectl.run("auth", "whoami").stdout


def test_reviews_are_create_only_and_never_stored(kubectl: Kubectl) -> None:
    for group, expected in (("authentication.k8s.io", {"tokenreviews", "selfsubjectreviews"}),
                            ("authorization.k8s.io", {"subjectaccessreviews", "localsubjectaccessreviews",
                                                      "selfsubjectaccessreviews", "selfsubjectrulesreviews"})):
        resources = json.loads(kubectl.run("get", "--raw", f"/apis/{group}/v1").stdout)["resources"]
        assert {r["name"]: r["verbs"] for r in resources} == {name: ["create"] for name in expected}
    assert {r["name"]: r["namespaced"] for r in resources}["localsubjectaccessreviews"] is True
    done = kubectl.run("get", "--raw", f"{AUTHZ}/subjectaccessreviews", check=False)
    assert done.returncode != 0 and "MethodNotAllowed" in done.stderr, done.stderr
    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "x"}}}
    created = json.loads(kubectl.run("create", "-f", "-", "-o", "json", "--validate=false", stdin=json.dumps(sar)).stdout)
    assert created["status"] == {"allowed": True} and created["spec"] == sar["spec"]
    openapi = json.loads(kubectl.run("get", "--raw", "/openapi/v3/apis/authorization.k8s.io/v1").stdout)
    path = openapi["paths"]["/apis/authorization.k8s.io/v1/subjectaccessreviews"]
    assert set(path) - {"parameters"} == {"post"}
    assert path["post"]["operationId"] == "createAuthorizationV1SubjectAccessReview"


def test_the_python_client(tmp_path_factory: pytest.TempPathFactory) -> None:
    from tests.servers import serving
    with serving(tmp_path_factory.mktemp("reviews")) as served:
        api = config.new_client_from_config(config_file=str(served.kubeconfig))
        review = client.AuthorizationV1Api(api).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
                verb="create", group="apps", resource="deployments", namespace="default"))))
        assert review.status.allowed is True and review.status.denied is None
        rules = client.AuthorizationV1Api(api).create_self_subject_rules_review(client.V1SelfSubjectRulesReview(
            spec=client.V1SelfSubjectRulesReviewSpec(namespace="default")))
        assert rules.status.resource_rules[0].verbs == ["*"] and rules.status.incomplete is False
        token = client.AuthenticationV1Api(api).create_token_review(client.V1TokenReview(
            spec=client.V1TokenReviewSpec(token="nobody-knows-me")))
        assert (token.status.authenticated, token.status.error) == (None, "invalid bearer token")


# -- a restrictive server: a plugin's tokens and authorization mode ------------------------------
async def test_kubectl_against_a_restrictive_mode(gated: APIServer, tmp_path: Path) -> None:
    anonymous = _kubectl_for(gated, tmp_path)
    assert await _kubectl(anonymous, "auth", "can-i", "get", "/version") == (0, "yes\n", "")
    code, out, _ = await _kubectl(anonymous, "auth", "can-i", "create", "deployments")
    assert (code, out) == (1, "no - no rule for it\n")
    code, out, _ = await _kubectl(anonymous, "auth", "can-i", "--list")
    assert code == 0 and sorted(line.split() for line in out.splitlines()[1:]) == [
        ["[*]", "[]", "[get]"], ["configmaps", "[]", "[settings]", "[get]"]]
    code, out, _ = await _kubectl(anonymous, "auth", "whoami", "-o", "json")
    assert code == 0 and json.loads(out)["status"]["userInfo"] == {
        "username": "system:anonymous", "groups": ["system:unauthenticated"]}


async def test_the_python_client_as_a_restricted_user(gated: APIServer) -> None:
    def calls() -> None:
        alice = _python_client(gated, "alice")
        review = client.AuthorizationV1Api(alice).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
                verb="create", group="apps", resource="deployments", namespace="default"))))
        assert review.status.allowed is True
        review = client.AuthorizationV1Api(alice).create_self_subject_access_review(client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=client.V1ResourceAttributes(
                verb="delete", resource="pods", namespace="default"))))
        assert (review.status.allowed, review.status.denied, review.status.reason) == (False, None, "no rule for it")
        rules = client.AuthorizationV1Api(alice).create_self_subject_rules_review(client.V1SelfSubjectRulesReview(
            spec=client.V1SelfSubjectRulesReviewSpec(namespace="default")))
        assert [(r.verbs, r.api_groups, r.resources) for r in rules.status.resource_rules] == [
            (["create"], ["apps"], ["deployments"])]
        whoami = client.AuthenticationV1Api(alice).create_self_subject_review(client.V1SelfSubjectReview())
        assert (whoami.status.user_info.username, whoami.status.user_info.extra) == ("alice", {"scopes": ["read", "write"]})
        token = client.AuthenticationV1Api(alice).create_token_review(client.V1TokenReview(
            spec=client.V1TokenReviewSpec(token="mallory")))
        assert token.status.authenticated is True and token.status.user.username == "mallory"

    await asyncio.to_thread(calls)


async def test_subject_access_reviews_decide_for_the_named_user(gated: APIServer) -> None:
    spec = {"user": "mallory", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "team"}}
    status, body = await _post(f"{gated.url}{AUTHZ}/subjectaccessreviews", {"spec": spec}, "alice")
    assert status == 201 and body["status"] == {"allowed": False, "denied": True, "reason": "mallory is banned"}
    spec = {"user": "alice", "resourceAttributes": {"verb": "create", "group": "apps", "resource": "deployments",
                                                     "namespace": "default"}}
    status, body = await _post(f"{gated.url}{AUTHZ}/namespaces/default/localsubjectaccessreviews", {"spec": spec}, "alice")
    assert status == 201 and body["status"] == {"allowed": True} and body["metadata"]["namespace"] == "default"
    spec["groups"] = ["staff"]
    status, body = await _post(f"{gated.url}{AUTHZ}/subjectaccessreviews",
                               {"spec": {"groups": ["x"], "nonResourceAttributes": {"path": "/healthz", "verb": "post"}}}, "alice")
    assert status == 201 and body["status"] == {"allowed": False, "reason": "no rule for it"}  # no opinion
    status, body = await _post(f"{gated.url}{AUTHZ}/subjectaccessreviews", {"spec": spec}, "mallory")
    assert status == 403  # reviewing others' access is itself authorized
    status, body = await _post(f"{gated.url}{AUTHZ}/selfsubjectrulesreviews", {"spec": {"namespace": "team"}}, "alice")
    assert status == 201 and body["status"] == {"resourceRules": [], "nonResourceRules": [], "incomplete": True,
                                                "evaluationError": "no rules for you"}
    status, body = await _post(f"{gated.url}{AUTHZ}/selfsubjectrulesreviews", {"spec": {}}, "alice")
    assert (status, body["message"]) == (400, "no namespace on request")


async def test_token_reviews(gated: APIServer) -> None:
    url = f"{gated.url}{AUTHN}/tokenreviews"
    status, body = await _post(url, {"spec": {"token": "alice"}}, "alice")
    assert status == 201 and body["status"] == {"authenticated": True, "user": {
        "username": "alice", "uid": "uid-alice", "groups": ["staff", "system:authenticated"],
        "extra": {"scopes": ["read", "write"]}}, "audiences": ["https://kubernetes.default.svc.cluster.local"]}
    # no audiences asked: the server's API audiences (the ServiceAccount issuer), which a token
    # that names none is good for
    # ... and for those only (kube's WrapAudienceAgnosticToken): not for another server's
    status, body = await _post(url, {"spec": {"token": "alice", "audiences": ["x", "y"]}}, "alice")
    assert status == 201 and body["status"] == {"user": {}, "error": "invalid bearer token"}
    issuer = "https://kubernetes.default.svc.cluster.local"
    status, body = await _post(url, {"spec": {"token": "alice", "audiences": ["x", issuer]}}, "alice")
    assert body["status"]["authenticated"] is True and body["status"]["audiences"] == [issuer]
    status, body = await _post(url, {"spec": {"token": "audience", "audiences": ["other", "api"]}}, "alice")
    assert body["status"]["audiences"] == ["api"] and body["status"]["user"]["username"] == "svc"
    status, body = await _post(url, {"spec": {"token": "unknown"}}, "alice")
    assert status == 201 and body["status"] == {"user": {}, "error": "invalid bearer token"}
    status, body = await _post(url, {"spec": {"token": "revoked"}}, "alice")
    assert body["status"] == {"user": {}, "error": "Badges: token revoked"}
    status, body = await _post(url, {"spec": {"token": ""}}, "alice")
    assert (status, body["message"]) == (400, "token is required for TokenReview in authentication")
    status, body = await _post(url, {"spec": {"token": "alice"}}, "mallory")
    assert status == 403


async def test_validation_is_kubernetes(gated: APIServer) -> None:
    def causes(body: dict) -> list[tuple[str, str, str]]:
        return [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]]

    status, body = await _post(f"{gated.url}{AUTHZ}/subjectaccessreviews", {"metadata": {"name": "n"}, "spec": {}}, "alice")
    assert status == 422 and body["reason"] == "Invalid"
    assert body["details"]["kind"] == "SubjectAccessReview" and body["details"]["group"] == "authorization.k8s.io"
    assert causes(body) == [
        ("FieldValueInvalid", "spec.resourceAttributes",
         "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"),
        ("FieldValueInvalid", "spec.user", 'Invalid value: "": at least one of user or group must be specified'),
        ("FieldValueInvalid", "metadata", 'Invalid value: {"name":"n"}: must be empty'),
    ]
    both = {"resourceAttributes": {"verb": "get", "labelSelector": {"rawSelector": "a=b", "requirements": [
                {"key": "a", "operator": "Exists", "values": ["b"]}]},
                "fieldSelector": {"requirements": [{"key": "", "operator": "Gt"}]}},
            "nonResourceAttributes": {"path": "/x", "verb": "get"}}
    status, body = await _post(f"{gated.url}{AUTHZ}/selfsubjectaccessreviews", {"spec": both}, "alice")
    assert status == 422 and causes(body) == [
        ("FieldValueInvalid", "spec.nonResourceAttributes",
         'Invalid value: {"path":"/x","verb":"get"}: cannot be specified in combination with resourceAttributes'),
        ("FieldValueRequired", "spec.resourceAttributes.fieldSelector.requirements[0].key", "Required value: must be specified"),
        ("FieldValueInvalid", "spec.resourceAttributes.labelSelector.rawSelector",
         'Invalid value: "a=b": may not specified at the same time as requirements'),
        ("FieldValueForbidden", "spec.resourceAttributes.labelSelector.requirements[0].values",
         "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
    ]  # an operator kube does not know (Gt) is accepted: a newer client's requirement only narrows
    local = f"{gated.url}{AUTHZ}/namespaces/default/localsubjectaccessreviews"
    status, body = await _post(local, {"spec": {"user": "u", "resourceAttributes": {"namespace": "team", "verb": "get"},
                                                "nonResourceAttributes": {"path": "/x"}}}, "alice")
    assert status == 422 and [c[1:] for c in causes(body)][1:] == [
        ("spec.resourceAttributes.namespace", 'Invalid value: "team": must match metadata.namespace'),
        ("spec.nonResourceAttributes", 'Invalid value: {"path":"/x"}: disallowed on this kind of request'),
    ]
    status, body = await _post(local, {"metadata": {"namespace": "team"}, "spec": {}}, "alice")
    assert (status, body["message"]) == (400, "the namespace of the provided object does not match the namespace sent on the request")


def test_a_resource_without_storage_serves_create_get_and_list_only(tmp_path: Path) -> None:
    """Reads of objects made on request (metrics.k8s.io's) are answered; what answers stored
    objects (updates, deletes, watches) is not."""
    from kplane.core.registry.admission import AdmissionChain
    from kplane.core.registry.registry import Registry
    from kplane.core.runtime.scheme import Scheme

    class Reads(Served):
        async def get(self, ctx, name):
            return None

    class Writes(Served):
        async def update(self, ctx, name, updater, *, force_allow_create=False):
            return None, False

    registry = Registry(Scheme(), None, AdmissionChain())  # type: ignore[arg-type]
    registry.add_rest("example.com", "reads", Reads())
    with pytest.raises(ValueError, match=r"writes: verbs \['update'\] cannot be served by a resource without storage"):
        registry.add_rest("example.com", "writes", Writes())
