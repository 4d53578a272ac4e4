"""Kubernetes' CEL authorizer library (``k8s.io/apiserver/pkg/cel/library/authz.go``): an
expression asks whether the requesting user (or a ServiceAccount) may do something -
``authorizer.group('apps').resource('deployments').namespace('ns').check('delete').allowed()``,
``authorizer.path('/healthz').check('get').reason()``.

Values are tagged one-entry maps, as the other libraries' (the binding carries no opaque types).
The checks themselves are the caller's: whoever evaluates an expression with an ``authorizer``
sets :data:`CHECK` to a function that takes the check's attributes and answers a decision -
it is called on the evaluating thread, mid-evaluation, so an evaluation that authorizes runs in a
worker thread while the event loop answers the checks.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Callable
from typing import Any

from cel_expr_python import cel

T = cel.Type
OPAQUE = T.Map(T.STRING, T.STRING)
AUTHORIZER, PATH, GROUP, RESOURCE, DECISION = ("kubernetes.authorization.Authorizer", "kubernetes.authorization.PathCheck",
                                               "kubernetes.authorization.GroupCheck", "kubernetes.authorization.ResourceCheck",
                                               "kubernetes.authorization.Decision")

#: A check's attributes (``user``: None for the request's user, else ``{"serviceAccount": [ns, name]}``;
#: ``path`` or ``group``/``resource``/``subresource``/``namespace``/``name``; ``verb``) →
#: ``{"decision": "allow"|"deny"|"noopinion", "reason": str, "error": str}``.
Check = Callable[[dict[str, Any]], dict[str, str]]
CHECK: contextvars.ContextVar[Check | None] = contextvars.ContextVar("kplane_cel_authorizer_check", default=None)


class AuthzError(ValueError):
    """A function of the library given what it does not take (the expression's error)."""


def value(user: dict[str, Any] | None = None) -> dict[str, str]:
    """The ``authorizer`` variable: checks as the request's user (``user`` None) or another."""
    return {AUTHORIZER: json.dumps(user or {})}


def _open(tagged: Any, *kinds: str) -> tuple[str, dict[str, Any]]:
    for kind in kinds:
        if isinstance(tagged, dict) and kind in tagged:
            return kind, json.loads(tagged[kind])
    raise AuthzError(f"no such overload: expected {' or '.join(kinds)}")


def _wrap(kind: str, fields: dict[str, Any]) -> dict[str, str]:
    return {kind: json.dumps(fields)}


def _service_account(authz: Any, namespace: str, name: str) -> dict[str, str]:
    _open(authz, AUTHORIZER)
    return value({"serviceAccount": [namespace, name]})


def _path(authz: Any, path: str) -> dict[str, str]:
    _, user = _open(authz, AUTHORIZER)
    return _wrap(PATH, {"user": user, "path": path})


def _group(authz: Any, group: str) -> dict[str, str]:
    _, user = _open(authz, AUTHORIZER)
    return _wrap(GROUP, {"user": user, "group": group})


def _resource(group_check: Any, resource: str) -> dict[str, str]:
    _, fields = _open(group_check, GROUP)
    return _wrap(RESOURCE, fields | {"resource": resource})


def _setter(field: str) -> Callable[[Any, str], dict[str, str]]:
    def setter(resource_check: Any, text: str) -> dict[str, str]:
        _, fields = _open(resource_check, RESOURCE)
        return _wrap(RESOURCE, fields | {field: text})
    return setter


def _check(target: Any, verb: str) -> dict[str, str]:
    _, fields = _open(target, PATH, RESOURCE)
    check = CHECK.get()
    if check is None:
        decision = {"decision": "noopinion", "reason": "", "error": "no authorizer available"}
    else:
        decision = check({**fields, "user": fields.get("user") or None, "verb": verb})
    return _wrap(DECISION, decision)


def _decision(field: str) -> Callable[[Any], Any]:
    def read(tagged: Any) -> Any:
        _, decision = _open(tagged, DECISION)
        if field == "allowed":
            return decision.get("decision") == "allow"
        if field == "errored":
            return bool(decision.get("error"))
        return str(decision.get(field) or "")
    return read


def functions(guard: Callable[[Callable[..., Any]], Callable[..., Any]]) -> list[Any]:
    """The library's declarations; ``guard`` wraps each implementation (the libraries' error handling)."""
    s, b, o = T.STRING, T.BOOL, OPAQUE

    def fn(name: str, oid: str, ret: Any, params: list[Any], impl: Callable[..., Any]) -> Any:
        return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=True, impl=guard(impl))])

    return [
        fn("serviceAccount", "authorizer_serviceaccount", o, [o, s, s], _service_account),
        fn("path", "authorizer_path", o, [o, s], _path),
        fn("group", "authorizer_group", o, [o, s], _group),
        fn("resource", "groupcheck_resource", o, [o, s], _resource),
        fn("subresource", "resourcecheck_subresource", o, [o, s], _setter("subresource")),
        fn("namespace", "resourcecheck_namespace", o, [o, s], _setter("namespace")),
        fn("name", "resourcecheck_name", o, [o, s], _setter("name")),
        fn("check", "authz_check", o, [o, s], _check),
        fn("allowed", "decision_allowed", b, [o], _decision("allowed")),
        fn("reason", "decision_reason", s, [o], _decision("reason")),
        fn("errored", "decision_errored", b, [o], _decision("errored")),
        fn("error", "decision_error", s, [o], _decision("error")),
    ]
