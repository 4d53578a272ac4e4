"""Legacy ServiceAccount tokens: the never-expiring JWTs kept in Secrets of type
``kubernetes.io/service-account-token`` (kube's ``pkg/serviceaccount/legacy.go``).

A legacy token has the issuer ``kubernetes/serviceaccount``, ``sub``
``system:serviceaccount:NS:NAME`` and four private claims naming the namespace, the Secret and
the account (name and uid); no audience, no expiry. It is good while its Secret exists holding
exactly that token and the account exists with that uid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kplane.api import user

Obj = dict[str, Any]

ISSUER = "kubernetes/serviceaccount"
SECRET_TYPE = "kubernetes.io/service-account-token"
# The Secret's annotations and data keys (k8s.io/api core/v1).
NAME_ANNOTATION = "kubernetes.io/service-account.name"
UID_ANNOTATION = "kubernetes.io/service-account.uid"
TOKEN_KEY, CA_KEY, NAMESPACE_KEY = "token", "ca.crt", "namespace"

_PREFIX = "kubernetes.io/serviceaccount/"
NAMESPACE_CLAIM = _PREFIX + "namespace"
SECRET_NAME_CLAIM = _PREFIX + "secret.name"
ACCOUNT_NAME_CLAIM = _PREFIX + "service-account.name"
ACCOUNT_UID_CLAIM = _PREFIX + "service-account.uid"


def legacy_claims(account: Obj, secret_name: str) -> dict[str, Any]:
    """The claims of the token the tokens controller puts in Secret ``secret_name`` for ``account``."""
    meta = account["metadata"]
    return {
        "iss": ISSUER,
        ACCOUNT_NAME_CLAIM: meta["name"],
        ACCOUNT_UID_CLAIM: meta["uid"],
        SECRET_NAME_CLAIM: secret_name,
        NAMESPACE_CLAIM: meta["namespace"],
        "sub": user.service_account_username(meta["namespace"], meta["name"]),
    }


@dataclass(frozen=True)
class LegacyClaims:
    namespace: str
    secret_name: str
    account_name: str
    account_uid: str

    @classmethod
    def read(cls, payload: dict[str, Any]) -> LegacyClaims:
        """The claims of a verified legacy token; ValueError with kube's message for one missing,
        or for a ``sub`` that is not the account named."""
        def claim(key: str, what: str) -> str:
            value = payload.get(key)
            if not isinstance(value, str) or not value:
                raise ValueError(f"{what} claim is missing")
            return value

        subject = claim("sub", "sub")
        made = cls(claim(NAMESPACE_CLAIM, "namespace"), claim(SECRET_NAME_CLAIM, "secretName"),
                   claim(ACCOUNT_NAME_CLAIM, "serviceAccountName"), claim(ACCOUNT_UID_CLAIM, "serviceAccountUID"))
        if subject != user.service_account_username(made.namespace, made.account_name):
            raise ValueError("sub claim is invalid")
        return made
