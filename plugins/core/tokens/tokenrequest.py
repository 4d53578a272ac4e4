"""``POST .../serviceaccounts/NAME/token``: an ``authentication.k8s.io/v1`` TokenRequest in, the
same with ``status.token`` and ``status.expirationTimestamp`` out (kube's ``TokenREST``).

``spec.audiences`` defaults to the API audiences, ``spec.expirationSeconds`` to 3600 (at least
600, at most 2^32: else 422), shortened to ``--service-account-max-token-expiration`` with a
warning. ``spec.boundObjectRef`` binds the token to a Pod (which must run as the account) or a
Secret of the namespace: it must exist (404) and have the uid given, if one is (409). This is
what ``kubectl create token`` posts, as protobuf.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kplane.api import (
    OBJECT_META, TIME, APIError, Field, GroupVersionKind, Message, ObjectMeta, ObjectMetaSchema, Registry, RequestContext,
    Schema, Served, build, errors, fields, invalid, load, shape_of,
)
from kplane.plugins.core.tokens.claims import EXTENDED_EXPIRATION, WARN_ONLY_BOUND_TOKEN_EXPIRATION, bound_claims
from kplane.plugins.core.tokens.keys import KeySet
from kplane.plugins.core.tokens.settings import Settings

Obj = dict[str, Any]
GROUP, VERSION, KIND = "authentication.k8s.io", "v1", "TokenRequest"
API_VERSION = f"{GROUP}/{VERSION}"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION, MAX_EXPIRATION = 10 * 60, 1 << 32


@dataclass(slots=True)
class BoundObjectReference:
    kind: str = ""
    api_version: str = ""
    name: str = ""
    uid: str = ""


@dataclass(slots=True)
class TokenRequestSpec:
    audiences: list[str] | None = None
    expiration_seconds: int | None = None
    bound_object_ref: BoundObjectReference | None = None


@dataclass(slots=True)
class TokenRequest:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: TokenRequestSpec = field(default_factory=TokenRequestSpec)


class BoundObjectReferenceSchema(Schema):
    """The object a token is bound to: the token is good only while it exists."""

    kind = fields.Str(metadata={"description": "Kind of the referent: Pod or Secret."})
    api_version = fields.Str(metadata={"description": "API version of the referent: v1."})
    name = fields.Str(metadata={"description": "Name of the referent."})
    uid = fields.Str(metadata={"description": "UID of the referent; when given it must be the object's."})


class TokenRequestSpecSchema(Schema):
    audiences = fields.List(fields.Str(), metadata={"description": (
        "Who the token is for; a recipient must find itself among them. Default: the API server's audiences.")})
    expiration_seconds = fields.Int(metadata={"description": (
        "How long the token is good for, in seconds (default 3600, at least 600); the server may shorten it.")})
    bound_object_ref = fields.Nested(BoundObjectReferenceSchema, metadata={"description": (
        "A Pod or Secret the token is bound to: deleting it invalidates the token.")})


class TokenRequestStatusSchema(Schema):
    token = fields.Str(metadata={"description": "The token."})
    expiration_timestamp = fields.Time(metadata={"description": "When the token expires."})


class TokenRequestSchema(Schema):
    """TokenRequest asks for a token of a ServiceAccount."""

    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(TokenRequestSpecSchema)
    status = fields.Nested(TokenRequestStatusSchema)


# k8s.io/api authentication/v1 generated.proto
BOUND_OBJECT_REFERENCE = Message("BoundObjectReference", {
    1: Field("kind", "string"),
    2: Field("apiVersion", "string"),
    3: Field("name", "string"),
    4: Field("uid", "string"),
})
TOKEN_REQUEST_SPEC = Message("TokenRequestSpec", {
    1: Field("audiences", "string", repeated=True),
    4: Field("expirationSeconds", "int64", pointer=True),
    3: Field("boundObjectRef", BOUND_OBJECT_REFERENCE),
})
TOKEN_REQUEST_STATUS = Message("TokenRequestStatus", {
    1: Field("token", "string"),
    2: Field("expirationTimestamp", TIME),
})
TOKEN_REQUEST = Message(KIND, {
    1: Field("metadata", OBJECT_META),
    2: Field("spec", TOKEN_REQUEST_SPEC),
    3: Field("status", TOKEN_REQUEST_STATUS),
})


def _decode(body: Any) -> TokenRequest:
    """The posted TokenRequest, decoded strictly (unknown fields are refused, as for any body)."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body of the request must be a {KIND} object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != API_VERSION:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API version ({API_VERSION})")
    if kind and kind != KIND:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({KIND})")
    loaded = load(shape_of(TokenRequestSchema), body, skip=frozenset({"apiVersion", "kind", "status"}))
    problems = [f'unknown field "{path}"' for path in loaded.unknown] + [str(e) for e in loaded.errors]
    if problems:
        raise errors.bad_request(f'{KIND} in version "{VERSION}" cannot be handled as a {KIND}: {"; ".join(problems)}', loaded.errors)
    return build(TokenRequest, loaded.data)


class TokenREST(Served):
    """create only, answering the TokenRequest with its token."""

    kind = GroupVersionKind(GROUP, VERSION, KIND)
    schema = TokenRequestSchema
    protobuf = TOKEN_REQUEST
    own_kind = True

    def __init__(self, registry: Registry, keys: KeySet, settings: Settings) -> None:
        self.registry = registry
        self.keys = keys
        self.settings = settings

    async def _get(self, plural: str, namespace: str, name: str) -> Obj:
        store = self.registry.store("", plural)
        assert store is not None  # the core plugin registered it
        return (await store.get(RequestContext(resource=plural, namespace=namespace, name=name), name)).obj

    async def create(self, ctx: RequestContext, obj: Any) -> Obj:
        request = _decode(obj)
        meta, spec, name, namespace = request.metadata, request.spec, ctx.name, ctx.namespace
        if meta.name and meta.name != name:
            raise errors.invalid_object(KIND, GROUP, name, [invalid("metadata.name", meta.name, "must match the service account name if specified")])
        if meta.namespace and meta.namespace != namespace:
            raise errors.invalid_object(KIND, GROUP, name, [invalid("metadata.namespace", meta.namespace, "must match the service account namespace if specified")])
        account = await self._get("serviceaccounts", namespace, name)
        audiences = list(spec.audiences or self.settings.audiences)
        expiration = DEFAULT_EXPIRATION if spec.expiration_seconds is None else spec.expiration_seconds
        if expiration < MIN_EXPIRATION:
            raise errors.invalid_object(KIND, GROUP, "", [invalid("spec.expirationSeconds", expiration, "may not specify a duration less than 10 minutes")])
        if expiration > MAX_EXPIRATION:
            raise errors.invalid_object(KIND, GROUP, "", [invalid("spec.expirationSeconds", expiration, "may not specify a duration larger than 2^32 seconds")])
        pod = node = secret = None
        ref = spec.bound_object_ref
        if ref is not None:
            pod, node, secret = await self._bound(ref, name, namespace)
        maximum = int(self.settings.max_expiration)
        if maximum and expiration > maximum:
            ctx.warnings.append(f"requested expiration of {expiration} seconds shortened to {maximum} seconds")
            expiration = maximum
        # The ServiceAccount admission plugin's projected tokens, for kube's audiences: good for a
        # year, warning after the hour asked for (--service-account-extend-token-expiration).
        lifetime, warn_after = expiration, 0
        if (self.settings.extend_expiration and pod is not None and expiration == WARN_ONLY_BOUND_TOKEN_EXPIRATION
                and set(audiences) <= set(self.settings.audiences)):
            lifetime, warn_after = EXTENDED_EXPIRATION, expiration
        now = int(time.time())
        claims = bound_claims(self.settings.issuers[0], account, audiences, now, lifetime,
                              pod=pod, node=node, secret=secret, warn_after=warn_after)
        token = await self.keys.sign(claims)
        account_meta = account["metadata"]
        out_meta = {"name": name, "namespace": namespace, "uid": meta.uid or account_meta.get("uid", ""),
                    "creationTimestamp": _rfc3339(now)}
        out_spec: Obj = {"audiences": audiences, "expirationSeconds": expiration}
        if ref is not None:
            out_spec["boundObjectRef"] = {k: v for k, v in (("kind", ref.kind), ("apiVersion", ref.api_version),
                                                            ("name", ref.name), ("uid", ref.uid)) if v}
        return {"kind": KIND, "apiVersion": API_VERSION, "metadata": out_meta, "spec": out_spec,
                "status": {"token": token, "expirationTimestamp": _rfc3339(now + expiration)}}

    async def _bound(self, ref: BoundObjectReference, name: str, namespace: str) -> tuple[Obj | None, Obj | None, Obj | None]:
        """(pod, its node, secret) of the bound object reference; 400/404/409 as kube's."""
        group, _, version = ref.api_version.rpartition("/")
        pod = node = secret = None
        if group == "" and ref.kind == "Pod":
            pod = bound = await self._get("pods", namespace, ref.name)
            account_name = (pod.get("spec") or {}).get("serviceAccountName", "")
            if account_name != name:
                raise errors.bad_request(f'cannot bind token for serviceaccount "{name}" to pod running with different serviceaccount name.')
            node_name = (pod.get("spec") or {}).get("nodeName", "")
            if node_name:
                try:
                    node = await self._get("nodes", "", node_name)
                except APIError as err:  # kube keeps the node's name in the claims all the same
                    if err.code != 404:
                        raise
                    node = {"metadata": {"name": node_name}}
        elif group == "" and ref.kind == "Secret":
            secret = bound = await self._get("secrets", namespace, ref.name)
        elif group == "" and ref.kind == "Node":
            raise errors.bad_request('cannot bind token to a Node object as the "ServiceAccountTokenNodeBinding" feature-gate is disabled')
        else:
            raise errors.bad_request(f"cannot bind token to object of type {group}/{version}, Kind={ref.kind}")
        uid = bound["metadata"].get("uid", "")
        if ref.uid and ref.uid != uid:
            raise errors.conflict(ref.kind, group, ref.name, f"the UID in the bound object reference ({ref.uid}) does not match "
                                                             "the UID in record. The object might have been deleted and then recreated")
        return pod, node, secret


def _rfc3339(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
