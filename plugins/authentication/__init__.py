"""The authentication.k8s.io API group: TokenReview and SelfSubjectReview at v1, resources that
are created and answered but never stored (``kubectl auth whoami``).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import Authenticators, Registry, Scheme, hookimpl
from kplane.plugins.authentication import rest, types
from kplane.plugins.authentication.v1 import protobuf as v1_protobuf
from kplane.plugins.authentication.v1 import schemas as v1_schemas

GROUP = "authentication.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="TokenReview", plural="tokenreviews", internal=types.TokenReview,
                    versions={"v1": v1_schemas.TokenReviewSchema}, storage_version="v1", namespaced=False,
                    plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="SelfSubjectReview", plural="selfsubjectreviews",
                    internal=types.SelfSubjectReview, versions={"v1": v1_schemas.SelfSubjectReviewSchema},
                    storage_version="v1", namespaced=False, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_protobuf(GROUP, "v1", "TokenReview", v1_protobuf.TOKEN_REVIEW)
    scheme.add_protobuf(GROUP, "v1", "SelfSubjectReview", v1_protobuf.SELF_SUBJECT_REVIEW)


@hookimpl
def kplane_register_strategies(registry: Registry, authenticators: Authenticators) -> None:
    registry.add_rest(GROUP, "tokenreviews", rest.TokenReviewREST(authenticators))
    registry.add_rest(GROUP, "selfsubjectreviews", rest.SelfSubjectReviewREST())
