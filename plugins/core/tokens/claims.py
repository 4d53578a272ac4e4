"""The claims of a ServiceAccount token, as kube's ``pkg/serviceaccount/claims.go`` writes and
reads them, and the user a valid token stands for.

A token carries the public claims ``iss``, ``sub`` (``system:serviceaccount:NS:NAME``), ``aud``,
``iat``, ``nbf``, ``exp`` and ``jti``, and the private claim ``kubernetes.io``: ``namespace``,
``serviceaccount`` {name, uid}, and the object it is bound to, ``pod`` (with the pod's ``node``
when it has one) or ``secret``, each {name, uid}; ``warnafter`` when its expiry was extended.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from kplane.api import UserInfo, user

Obj = dict[str, Any]

PRIVATE_CLAIM = "kubernetes.io"
LEEWAY = 60  # seconds of clock skew allowed on exp, nbf and iat (go-jose's DefaultLeeway)
#: The expiry the ServiceAccount admission plugin asks for projected tokens, which
#: ``--service-account-extend-token-expiration`` extends to a year (warning after this).
WARN_ONLY_BOUND_TOKEN_EXPIRATION = 60 * 60 + 7
EXTENDED_EXPIRATION = 24 * 365 * 60 * 60

# The user's extra keys (k8s.io/apiserver's serviceaccount package).
POD_NAME = "authentication.kubernetes.io/pod-name"
POD_UID = "authentication.kubernetes.io/pod-uid"
NODE_NAME = "authentication.kubernetes.io/node-name"
NODE_UID = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"


def _ref(obj: Obj) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    return {k: v for k, v in (("name", meta.get("name", "")), ("uid", meta.get("uid", ""))) if v}


def bound_claims(issuer: str, account: Obj, audiences: list[str], now: int, expiration: int, *,
                 pod: Obj | None = None, node: Obj | None = None, secret: Obj | None = None,
                 warn_after: int = 0) -> dict[str, Any]:
    """The claims of a token for ``account`` good for ``expiration`` seconds from ``now``, bound
    to ``pod`` (on ``node``) or ``secret`` when given."""
    meta = account["metadata"]
    private: dict[str, Any] = {"namespace": meta["namespace"], "serviceaccount": _ref(account)}
    if pod is not None:
        private["pod"] = _ref(pod)
        if node is not None:
            private["node"] = _ref(node)
    elif secret is not None:
        private["secret"] = _ref(secret)
    if warn_after:
        private["warnafter"] = now + warn_after
    return {
        "aud": audiences[0] if len(audiences) == 1 else audiences,  # go-jose writes one audience as a string
        "exp": now + expiration,
        "iat": now,
        "iss": issuer,
        "jti": str(uuid.uuid4()),
        PRIVATE_CLAIM: private,
        "nbf": now,
        "sub": user.service_account_username(meta["namespace"], meta["name"]),
    }


@dataclass(frozen=True)
class Ref:
    name: str
    uid: str


@dataclass(frozen=True)
class BoundClaims:
    """What a verified token's private claim names."""

    namespace: str
    account: Ref
    pod: Ref | None = None
    secret: Ref | None = None
    node: Ref | None = None

    @classmethod
    def read(cls, payload: dict[str, Any]) -> BoundClaims | None:
        """The private claim of ``payload``, None when it is missing or malformed."""
        private = payload.get(PRIVATE_CLAIM)
        if not isinstance(private, dict) or not isinstance(private.get("namespace"), str) or not private["namespace"]:
            return None
        refs = {key: _read_ref(private.get(key)) for key in ("serviceaccount", "pod", "secret", "node")}
        account = refs["serviceaccount"]
        if account is None or not account.name or any(
                private.get(key) is not None and ref is None for key, ref in refs.items()):
            return None
        return cls(private["namespace"], account, refs["pod"], refs["secret"], refs["node"])


def _read_ref(value: Any) -> Ref | None:
    if not isinstance(value, dict):
        return None
    name, uid = value.get("name", ""), value.get("uid", "")
    return Ref(name, uid) if isinstance(name, str) and isinstance(uid, str) else None


def user_of(claims: BoundClaims, jti: str) -> UserInfo:
    """The user of a valid token, with kube 1.32's extra: the pod and node it is bound to, and
    its ``credential-id`` (``JTI=<jti>``)."""
    extra: dict[str, tuple[str, ...]] = {}
    if claims.pod is not None and claims.pod.name and claims.pod.uid:
        extra[POD_NAME], extra[POD_UID] = (claims.pod.name,), (claims.pod.uid,)
    if claims.node is not None and claims.node.name:
        extra[NODE_NAME] = (claims.node.name,)
        if claims.node.uid:
            extra[NODE_UID] = (claims.node.uid,)
    if jti:
        extra[CREDENTIAL_ID] = (f"JTI={jti}",)
    return UserInfo(user.service_account_username(claims.namespace, claims.account.name), uid=claims.account.uid,
                    groups=user.service_account_groups(claims.namespace), extra=extra)
