"""Auditing through real HTTP and the real kubectl: a policy of several rules, and the
``audit.k8s.io/v1`` Event lines it writes, as kube-apiserver writes them."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import stat
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kplane.api import hookimpl
from kplane.api import Authenticated
from kplane.core.audit.options import AuditOptions
from kplane.core.audit.policy import parse_policy
from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.authorizers import ALLOWED, Decision, Verdict
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.config import ServerConfig
from kplane.core.server.filterchain import PROXY
from kplane.core.serving.apiserver import APIServer
from kplane.core.serving.datadir import StartupError

from tests.servers import server_config

POLICY = """
apiVersion: audit.k8s.io/v1
kind: Policy
omitManagedFields: true
rules:
- level: None
  users: [system:apiserver]
- level: None
  nonResourceURLs: [/healthz*, /readyz*, /livez*]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
  verbs: [create, update, patch, delete]
- level: RequestResponse
  resources: [{group: "", resources: [secrets]}]
  omitManagedFields: false
  omitStages: [RequestReceived]
- level: Metadata
  omitStages: [RequestReceived]
"""

MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
ALICE = {"username": "alice", "uid": "uid-alice", "groups": ["staff", "system:authenticated"]}
ALLOW = {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}


class Tokens:
    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        if token in ("alice", "mallory"):
            return Authenticated(UserInfo(token, uid=f"uid-{token}", groups=("staff",)))
        return None


class NotMallory:
    async def authorize(self, a: Attributes) -> Verdict:
        return Verdict(Decision.DENY, "mallory is banned") if a.user.name == "mallory" else ALLOWED


class AuditedPlugin:
    @hookimpl
    def kplane_register_authenticators(self, authenticators):
        authenticators.add_token("Tokens", Tokens())

    @hookimpl
    def kplane_register_authorizers(self, authorizers):
        authorizers.add("NotMallory", NotMallory())

    @hookimpl
    def kplane_register_filters(self, filters):
        async def boom(request, handler):
            if request.path == "/boom":
                raise RuntimeError("kaboom")
            return await handler(request)
        filters.add(PROXY, "Boom", boom)


def _config(tmp_path: Path, policy: str = POLICY, **audit: Any) -> ServerConfig:
    (tmp_path / "policy.yaml").write_text(policy)
    options = AuditOptions(policy_file=tmp_path / "policy.yaml", log_path=str(tmp_path / "logs" / "audit.log"), **audit)
    return server_config(data_dir=tmp_path / "state", port=0, run_controllers=False,
                        extra_plugins=[("audited", AuditedPlugin())],
                        authorization=AuthorizationOptions(modes=("NotMallory",)), audit=options)


@pytest.fixture
async def audited(tmp_path: Path) -> AsyncIterator[APIServer]:
    srv = APIServer(_config(tmp_path))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


def _log(srv: APIServer) -> Path:
    return Path(srv.config.audit.log_path)


def events(srv: APIServer, audit_id: str | None = None) -> list[dict[str, Any]]:
    """The log's events (blocking mode: written before the answer), those of ``audit_id`` if given."""
    lines = [json.loads(line) for line in _log(srv).read_text().splitlines()]
    return [e for e in lines if audit_id is None or e["auditID"] == audit_id]


async def settled(srv: APIServer, audit_id: str, count: int) -> list[dict[str, Any]]:
    """``audit_id``'s events once there are ``count``: a watch's answer ends inside its handler,
    so the client may read all of it before its ResponseComplete is written."""
    for _ in range(100):
        found = events(srv, audit_id)
        if len(found) >= count:
            return found
        await asyncio.sleep(0.05)
    return events(srv, audit_id)


def timeless(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with its timestamps checked for form and taken out."""
    event = dict(event)
    for key in ("requestReceivedTimestamp", "stageTimestamp"):
        assert MICRO_TIME.match(event.pop(key)), key
    return event


async def _call(srv: APIServer, method: str, path: str, token: str | None = "alice", body: Any = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any, str]:
    sent = {**({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    async with aiohttp.ClientSession() as session, \
            session.request(method, srv.url + path, json=body, headers=sent) as reply:
        text = await reply.text()
        return reply.status, text, reply.headers.get("Audit-Id", "")


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": {"color": "blue"}}


async def test_a_create_at_request_response(audited: APIServer) -> None:
    status, text, audit_id = await _call(audited, "POST", "/api/v1/namespaces/default/configmaps", body=CONFIGMAP,
                                         headers={"User-Agent": "audit-test/1.0", "X-Forwarded-For": "10.0.0.7"})
    assert status == 201 and UUID.match(audit_id)
    created = json.loads(text)
    received, complete = events(audited, audit_id)
    common = {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": audit_id,
              "requestURI": "/api/v1/namespaces/default/configmaps", "verb": "create", "user": ALICE,
              "sourceIPs": ["10.0.0.7", "127.0.0.1"], "userAgent": "audit-test/1.0"}
    assert timeless(received) == {**common, "stage": "RequestReceived",
                                  "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"}}
    assert received["stageTimestamp"] == received["requestReceivedTimestamp"]
    without_fields = {**created, "metadata": {k: v for k, v in created["metadata"].items() if k != "managedFields"}}
    assert "managedFields" in created["metadata"]  # the policy's omitManagedFields takes them out of the log
    assert timeless(complete) == {
        **common, "stage": "ResponseComplete",
        "objectRef": {"resource": "configmaps", "namespace": "default", "name": "settings", "apiVersion": "v1"},
        "responseStatus": {"metadata": {}, "code": 201}, "requestObject": CONFIGMAP, "responseObject": without_fields,
        "annotations": ALLOW}
    assert list(complete) == ["kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user",
                              "sourceIPs", "userAgent", "objectRef", "responseStatus", "requestObject",
                              "responseObject", "requestReceivedTimestamp", "stageTimestamp", "annotations"]


async def test_a_get_at_metadata_omits_its_request_received_stage(audited: APIServer) -> None:
    await _call(audited, "POST", "/api/v1/namespaces/default/configmaps", body=CONFIGMAP)
    status, _, audit_id = await _call(audited, "GET", "/api/v1/namespaces/default/configmaps/settings?pretty=false",
                                      headers={"Audit-ID": "my-own-id"})
    assert (status, audit_id) == (200, "my-own-id")  # the client's audit ID is kept, as kube keeps it
    [event] = events(audited, "my-own-id")
    assert timeless(event) == {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": "my-own-id",
        "stage": "ResponseComplete", "requestURI": "/api/v1/namespaces/default/configmaps/settings?pretty=false",
        "verb": "get", "user": ALICE, "sourceIPs": ["127.0.0.1"], "userAgent": event["userAgent"],
        "objectRef": {"resource": "configmaps", "namespace": "default", "name": "settings", "apiVersion": "v1"},
        "responseStatus": {"metadata": {}, "code": 200}, "annotations": ALLOW}
    status, _, audit_id = await _call(audited, "GET", "/version")
    [event] = events(audited, audit_id)
    assert (event["verb"], event["requestURI"], "objectRef" in event) == ("get", "/version", False)
    status, _, audit_id = await _call(audited, "GET", "/healthz")
    assert status == 200 and audit_id and events(audited, audit_id) == []  # level None: not recorded, still an ID


async def test_a_watch_is_started_then_complete(audited: APIServer) -> None:
    status, text, audit_id = await _call(audited, "GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1")
    assert status == 200
    started, complete = await settled(audited, audit_id, 2)
    assert (started["stage"], complete["stage"]) == ("ResponseStarted", "ResponseComplete")
    for event in (started, complete):
        assert (event["verb"], event["level"], event["responseStatus"]) == ("watch", "Metadata", {"metadata": {}, "code": 200})
        assert event["annotations"] == ALLOW
    assert started["stageTimestamp"] < complete["stageTimestamp"]


async def test_a_forbidden_request_says_forbid_and_why(audited: APIServer) -> None:
    status, _, audit_id = await _call(audited, "DELETE", "/api/v1/namespaces/default/configmaps/settings", token="mallory")
    assert status == 403
    received, complete = events(audited, audit_id)
    assert received["stage"] == "RequestReceived" and "annotations" not in received  # before authorization
    message = ('configmaps "settings" is forbidden: User "mallory" cannot delete resource "configmaps" in API group "" '
               'in the namespace "default": mallory is banned')
    status_body = {"metadata": {}, "status": "Failure", "message": message, "reason": "Forbidden",
                   "details": {"name": "settings", "kind": "configmaps"}, "code": 403}
    assert timeless(complete) == {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": audit_id,
        "stage": "ResponseComplete", "requestURI": "/api/v1/namespaces/default/configmaps/settings", "verb": "delete",
        "user": {"username": "mallory", "uid": "uid-mallory", "groups": ["staff", "system:authenticated"]},
        "sourceIPs": ["127.0.0.1"], "userAgent": complete["userAgent"],
        "objectRef": {"resource": "configmaps", "namespace": "default", "name": "settings", "apiVersion": "v1"},
        "responseStatus": status_body, "responseObject": {"kind": "Status", "apiVersion": "v1", **status_body},
        "annotations": {"authorization.k8s.io/decision": "forbid", "authorization.k8s.io/reason": "mallory is banned"}}


async def test_a_request_authentication_refuses_is_recorded_once(audited: APIServer) -> None:
    status, _, audit_id = await _call(audited, "GET", "/api/v1/namespaces/default/configmaps", token="forged")
    assert status == 401 and UUID.match(audit_id)
    [event] = events(audited, audit_id)  # kube's failed-authentication branch: one event, no user
    assert timeless(event) == {
        "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata", "auditID": audit_id,
        "stage": "ResponseStarted", "requestURI": "/api/v1/namespaces/default/configmaps", "verb": "list",
        "user": {}, "sourceIPs": ["127.0.0.1"], "userAgent": event["userAgent"],
        "objectRef": {"resource": "configmaps", "namespace": "default", "apiVersion": "v1"},
        "responseStatus": {"metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized",
                           "code": 401}}


async def test_omit_managed_fields_by_rule(audited: APIServer) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "token"}, "stringData": {"k": "v"}}
    status, text, audit_id = await _call(audited, "POST", "/api/v1/namespaces/default/secrets", body=secret)
    assert status == 201
    [event] = events(audited, audit_id)  # the rule omits RequestReceived and keeps managed fields
    assert event["stage"] == "ResponseComplete" and event["requestObject"] == secret
    assert event["responseObject"] == json.loads(text) and event["responseObject"]["metadata"]["managedFields"]
    status, text, audit_id = await _call(audited, "PUT", "/api/v1/namespaces/default/configmaps/settings",
                                         body=CONFIGMAP)
    assert status == 404
    [event] = events(audited, audit_id)[1:]
    assert event["requestObject"] == CONFIGMAP and event["responseObject"]["reason"] == "NotFound"


async def test_an_unexpected_exception_is_a_panic_stage(audited: APIServer) -> None:
    status, text, audit_id = await _call(audited, "GET", "/boom")
    assert status == 500 and "kaboom" not in text  # the client is told nothing of it; the log is
    [event] = events(audited, audit_id)
    assert event["stage"] == "Panic"
    assert event["responseStatus"] == {"metadata": {}, "status": "Failure", "message": "APIServer panic'd: kaboom",
                                       "reason": "InternalError", "code": 500}


async def test_the_log_is_private_and_rotates_by_size(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "audit.log").write_text("")
    (logs / "audit.log").chmod(0o644)  # found readable by others: tightened
    srv = APIServer(_config(tmp_path, log_max_size=1, log_max_backups=2, log_mode="batch"))
    await srv.start()
    try:
        big = {**CONFIGMAP, "data": {"blob": "x" * 300_000}}
        for i in range(9):
            body = {**big, "metadata": {"name": f"big-{i}"}}
            assert (await _call(srv, "POST", "/api/v1/namespaces/default/configmaps", body=body))[0] == 201
            await asyncio.sleep(0.01)  # backups are named by the millisecond
    finally:
        await srv.stop()
    files = sorted(p.name for p in logs.iterdir())
    backups = [n for n in files if n != "audit.log"]
    assert "audit.log" in files and len(backups) == 2, files
    assert all(re.fullmatch(r"audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log", n) for n in backups)
    for path in logs.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert path.stat().st_size <= 1024 * 1024
        assert all(json.loads(line)["kind"] == "Event" for line in path.read_text().splitlines())
    names = [json.loads(line)["objectRef"].get("name") for p in sorted(logs.iterdir()) for line in p.read_text().splitlines()]
    assert "big-8" in names and "big-0" not in names  # the oldest backups went


async def test_the_legacy_format(tmp_path: Path) -> None:
    srv = APIServer(_config(tmp_path, log_format="legacy"))
    await srv.start()
    try:
        _, _, audit_id = await _call(srv, "GET", "/api/v1/namespaces/default/configmaps")
    finally:
        await srv.stop()
    [line] = [line for line in _log(srv).read_text().splitlines() if audit_id in line]
    assert re.fullmatch(
        r'\S+Z AUDIT: id="%s" stage="ResponseComplete" ip="127.0.0.1" method="list" user="alice" '
        r'groups="\\"staff\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="[^"]+" '
        r'namespace="default" uri="/api/v1/namespaces/default/configmaps" response="200"' % audit_id, line), line


async def test_without_a_policy_nothing_is_installed(tmp_path: Path) -> None:
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False))
    await srv.start()
    try:
        status, _, audit_id = await _call(srv, "GET", "/version", token=None)
        assert (status, audit_id, srv.security.auditor) == (200, "", None)
    finally:
        await srv.stop()


BAD_POLICIES = [
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n", "loaded illegal policy with 0 rules"),
    ("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: Metadata}]\n",
     'failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Loud}]\n",
     'rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse"'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]\n", "rules[0].level: Required value"),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Never]\nrules: [{level: Metadata}]\n",
     'omitStages[0]: Invalid value: "Never": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  nonResourceURLs: [healthz, /a*b]\n",
     "[rules[0].nonResourceURLs[0]: Invalid value: \"healthz\": non-resource URL rules must begin with a '/' character, "
     "rules[0].nonResourceURLs[1]: Invalid value: \"/a*b\": non-resource URL wildcards '*' must be the final "
     "character of the rule]"),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: apps/v1}]\n",
     'rules[0].resources.group: Invalid value: "apps/v1": a lowercase RFC 1123 subdomain'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{resourceNames: [x]}]\n",
     'rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one resource'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  namespaces: [a]\n  nonResourceURLs: [/x]\n",
     'rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs'),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: {level: Metadata}\n", "rules: Invalid value"),
    ("rules: [", "failed decoding:"),
    ("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: [Metadata]}]\n",
     'rules[0].level: Unsupported value: ["Metadata"]'),
]

MATCHING = """
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: RequestResponse
  resources: [{group: "", resources: [pods/log, "*/status"]}]
- level: Request
  resources: [{group: apps, resources: [deployments], resourceNames: [web]}]
- level: Metadata
  namespaces: [""]
- level: Request
  userGroups: [staff]
  nonResourceURLs: [/apis/*]
- level: None
"""


@pytest.mark.parametrize(("attributes", "level"), [
    (Attributes(UserInfo("u"), "get", True, "team", "", "v1", "pods", "log", "p"), "RequestResponse"),
    (Attributes(UserInfo("u"), "update", True, "team", "", "v1", "services", "status", "x"), "RequestResponse"),
    (Attributes(UserInfo("u"), "update", True, "team", "apps", "v1", "deployments", "status", "x"), "None"),
    (Attributes(UserInfo("u"), "get", True, "team", "", "v1", "pods", "", "p"), "None"),
    (Attributes(UserInfo("u"), "patch", True, "team", "apps", "v1", "deployments", "", "web"), "Request"),
    (Attributes(UserInfo("u"), "patch", True, "team", "apps", "v1", "deployments", "", "api"), "None"),
    (Attributes(UserInfo("u"), "list", True, "", "", "v1", "nodes"), "Metadata"),
    (Attributes(UserInfo("u", groups=("staff",)), "get", False, path="/apis/apps"), "Request"),
    (Attributes(UserInfo("u"), "get", False, path="/apis/apps"), "None"),
])
def test_the_first_matching_rule_decides(attributes: Attributes, level: str) -> None:
    policy = parse_policy(MATCHING.encode())
    assert policy.evaluate(attributes, attributes.user).level.api_name == level


@pytest.mark.parametrize(("policy", "message"), BAD_POLICIES)
async def test_a_bad_policy_stops_the_start(tmp_path: Path, policy: str, message: str) -> None:
    srv = APIServer(_config(tmp_path, policy))
    with pytest.raises(StartupError) as failure:
        await srv.start()
    await srv.stop()
    assert str(failure.value).startswith("loading audit policy file: ")
    assert message in str(failure.value) and str(failure.value).endswith(f": from file {tmp_path / 'policy.yaml'}")


async def test_a_missing_policy_file_stops_the_start(tmp_path: Path) -> None:
    srv = APIServer(_config(tmp_path))
    srv.config.audit.policy_file = tmp_path / "nowhere.yaml"
    with pytest.raises(StartupError, match='loading audit policy file: failed to read file path ".*nowhere.yaml": '
                                           'No such file or directory'):
        await srv.start()
    await srv.stop()


async def _kubectl(srv: APIServer, home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    return await asyncio.to_thread(subprocess.run, ["kubectl", "--kubeconfig", str(srv.kubeconfig_path), *args],
                                   input=stdin, capture_output=True, text=True, timeout=30, env={"HOME": str(home)})


def _sent(json_text: str) -> dict[str, Any]:
    """What kubectl prints with ``--dry-run=client -o json``, as its protobuf body carries it: an
    unset creationTimestamp is JSON's null and protobuf's nothing."""
    sent = json.loads(json_text)
    assert sent["metadata"].pop("creationTimestamp") is None
    return sent


async def test_kubectl_requests_are_recorded(audited: APIServer, tmp_path: Path) -> None:
    async def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
        return await _kubectl(audited, tmp_path, *args)

    create_args = ("create", "configmap", "from-kubectl", "--from-literal=k=v")
    sent = _sent((await kubectl(*create_args, "--dry-run=client", "-o", "json")).stdout)
    done = await kubectl(*create_args)
    assert done.returncode == 0, done.stderr
    done = await kubectl("get", "configmap", "from-kubectl", "-o", "name")
    assert done.stdout.strip() == "configmap/from-kubectl"
    # kubectl sends no credentials over plain HTTP: its requests are anonymous here.
    anonymous = {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
    mine = [e for e in events(audited) if e["userAgent"].startswith("kubectl")]
    create = [e for e in mine if e["verb"] == "create"]
    assert [e["stage"] for e in create] == ["RequestReceived", "ResponseComplete"]
    complete = create[1]
    assert complete["requestURI"].startswith("/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create")
    # kubectl sends built-in objects as protobuf: recorded as the JSON they stand for, named by it.
    assert complete["objectRef"] == {"resource": "configmaps", "namespace": "default", "name": "from-kubectl",
                                     "apiVersion": "v1"}
    assert complete["user"] == anonymous and complete["annotations"] == ALLOW
    assert complete["requestObject"] == sent and complete["responseObject"]["data"] == {"k": "v"}
    assert "managedFields" not in complete["responseObject"]["metadata"]
    [get] = [e for e in mine if e["verb"] == "get" and e.get("objectRef", {}).get("name") == "from-kubectl"]
    assert (get["level"], get["stage"], get["user"], "responseObject" in get) == \
        ("Metadata", "ResponseComplete", anonymous, False)


async def test_an_impersonated_request_keeps_both_users_and_the_decision(audited: APIServer) -> None:
    status, _, audit_id = await _call(audited, "GET", "/api/v1/namespaces/default/configmaps/settings",
                                      headers={"Impersonate-User": "mallory"})
    assert status == 403  # as mallory, whom NotMallory bans
    [event] = events(audited, audit_id)
    assert event["user"] == ALICE
    assert event["impersonatedUser"] == {"username": "mallory", "groups": ["system:authenticated"]}
    assert event["annotations"] == {"authorization.k8s.io/decision": "forbid",
                                    "authorization.k8s.io/reason": "mallory is banned"}



SHARED_YAML = """apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
data:
  color: {color}
"""


async def test_yaml_bodies_are_recorded_as_json(audited: APIServer, tmp_path: Path) -> None:
    manifest = tmp_path / "shared.yaml"
    manifest.write_text(SHARED_YAML.format(color="blue"))
    done = await _kubectl(audited, tmp_path, "apply", "-f", str(manifest))  # not there yet: a create
    assert done.returncode == 0, done.stderr
    manifest.write_text(SHARED_YAML.format(color="green"))
    done = await _kubectl(audited, tmp_path, "apply", "-f", str(manifest))  # then a strategic merge patch
    assert done.returncode == 0, done.stderr
    done = await _kubectl(audited, tmp_path, "apply", "--server-side", "--force-conflicts", "-f", "-",
                          stdin=SHARED_YAML.format(color="red"))  # an apply patch (apply-patch+yaml)
    assert done.returncode == 0, done.stderr
    writes = [e for e in events(audited) if e["stage"] == "ResponseComplete" and e["userAgent"].startswith("kubectl")
              and e["verb"] in ("create", "patch")]
    # kubectl apply --server-side after client-side applies migrates the managed fields with more patches
    writes = writes[:3]
    assert [e["verb"] for e in writes] == ["create", "patch", "patch"]
    ref = {"resource": "configmaps", "namespace": "default", "name": "shared", "apiVersion": "v1"}
    assert all(e["objectRef"] == ref for e in writes)
    last_applied = "kubectl.kubernetes.io/last-applied-configuration"
    created, patched, applied = (e["requestObject"] for e in writes)
    assert created["data"] == {"color": "blue"} and created["metadata"]["name"] == "shared"
    assert json.loads(created["metadata"]["annotations"][last_applied])["data"] == {"color": "blue"}
    assert patched["data"] == {"color": "green"} and "kind" not in patched  # the patch, as sent
    assert applied == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared", "namespace": "default"},
                       "data": {"color": "red"}}

    yaml_body = SHARED_YAML.format(color="blue").replace("shared", "from-yaml")
    async with aiohttp.ClientSession() as session, session.post(
            audited.url + "/api/v1/namespaces/default/configmaps", data=yaml_body,
            headers={"Authorization": "Bearer alice", "Content-Type": "application/yaml"}) as reply:
        assert reply.status == 201
        audit_id = reply.headers["Audit-Id"]
    complete = events(audited, audit_id)[-1]
    assert complete["objectRef"]["name"] == "from-yaml"
    assert complete["requestObject"] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-yaml"},
                                         "data": {"color": "blue"}}


LEVELS = """
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
- level: Metadata
"""


async def test_the_level_decides_what_of_a_decoded_body_is_kept(tmp_path: Path) -> None:
    srv = APIServer(_config(tmp_path, LEVELS))
    await srv.start()
    try:
        create_args = ("create", "secret", "generic", "sealed", "--from-literal=k=v")
        sent = _sent((await _kubectl(srv, tmp_path, *create_args, "--dry-run=client", "-o", "json")).stdout)
        done = await _kubectl(srv, tmp_path, *create_args)  # protobuf, at Request level
        assert done.returncode == 0, done.stderr
        [secret] = [e for e in events(srv) if e["verb"] == "create" and e["objectRef"]["resource"] == "secrets"]
        assert secret["level"] == "Request" and secret["objectRef"]["name"] == "sealed"
        assert secret["requestObject"] == sent and "responseObject" not in secret

        # A protobuf-only Accept is answered in JSON, and that answer is the response object.
        status, text, audit_id = await _call(srv, "POST", "/api/v1/namespaces/default/configmaps", body=CONFIGMAP,
                                             headers={"Accept": "application/vnd.kubernetes.protobuf"})
        assert status == 201
        [event] = events(srv, audit_id)
        assert event["requestObject"] == CONFIGMAP and event["responseObject"] == json.loads(text)

        options = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
        status, _, audit_id = await _call(srv, "DELETE", "/api/v1/namespaces/default/configmaps/settings", body=options)
        assert status == 200
        [event] = events(srv, audit_id)  # a delete's options are its request object, as kube records them
        assert event["requestObject"] == options and event["objectRef"]["name"] == "settings"

        generated = {**CONFIGMAP, "metadata": {"generateName": "gen-"}}
        status, text, audit_id = await _call(srv, "POST", "/api/v1/namespaces/default/configmaps", body=generated)
        assert status == 201 and json.loads(text)["metadata"]["name"].startswith("gen-")
        [event] = events(srv, audit_id)  # a generateName is no name yet
        assert "name" not in event["objectRef"] and event["requestObject"] == generated

        status, _, audit_id = await _call(srv, "POST", "/api/v1/namespaces/default/pods",
                                          body={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
        [event] = events(srv, audit_id)  # Metadata: named from the body, but not kept
        assert event["level"] == "Metadata" and event["objectRef"]["name"] == "p" and "requestObject" not in event
    finally:
        await srv.stop()
