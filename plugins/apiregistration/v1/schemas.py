"""Wire schemas of apiregistration.k8s.io/v1 (kube-aggregator's ``pkg/apis/apiregistration/v1``),
plus kplane's ``spec.url``."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class ServiceReferenceSchema(Schema):
    """A Service in this server's core API through which the backend is reached."""

    namespace = fields.Str(metadata={"description": "The namespace of the Service."})
    name = fields.Str(metadata={"description": "The name of the Service."})
    port = fields.Int32(metadata={"description": (
        "The port on the Service the backend listens on, 1-65535. Defaults to 443. kplane resolves a Service of "
        "type ExternalName to https://<externalName>:<port>, and a Service with a cluster IP to "
        "https://<clusterIP>:<port>; the backend's certificate must be valid for <name>.<namespace>.svc."
    ), "default": 443})


class APIServiceSpecSchema(Schema):
    """Where the server of one group/version is and how it ranks in discovery."""

    service = fields.Nested(ServiceReferenceSchema, metadata={"pointer": True, "description": (
        "The Service in front of the backend server. Unset (and url unset): this server serves the group/version "
        "itself, a Local APIService; requests go to its own handlers. A backend (service or url) is refused by a "
        "server started with --no-enable-apiservice-backends."
    )})
    url = fields.Str(metadata={"description": (
        "kplane extension: the base URL of the backend server, for a server outside any Service, such as "
        "http://127.0.0.1:8444 (scheme http or https, a host, an optional path prefix; no query, fragment or user "
        "information). Requests for /apis/<group>/<version>/... go to <url>/apis/<group>/<version>/.... Only "
        "an https backend is told who the user is. Mutually exclusive with service."
    )})
    group = fields.Str(metadata={"description": "The API group this server hosts, such as wardle.example.com."})
    version = fields.Str(metadata={"description": "The API version this server hosts, such as v1alpha1."})
    insecure_skip_tls_verify = fields.Bool(data_key="insecureSkipTLSVerify", metadata={"description": (
        "Do not verify the backend's TLS certificate (https backends only). Strongly discouraged; give caBundle "
        "instead. May not be true together with caBundle."
    )})
    ca_bundle = fields.Bytes(metadata={"description": (
        "PEM-encoded CA bundle, base64-encoded as every byte field, to verify an https backend's serving "
        "certificate. Unset: the system's trust roots."
    )})
    group_priority_minimum = fields.Int32(metadata={"omitempty": False, "description": (
        "The priority this group should have at least, 1-20000: discovery lists groups from the highest priority "
        "to the lowest, then by APIService name. Kubernetes' own groups rank between 16000 and 18000; others "
        "are recommended in the thousands."
    )})
    version_priority = fields.Int32(metadata={"omitempty": False, "description": (
        "The order of this version within its group, 1-1000: highest first (the preferred version); equal "
        "priorities order by version string, GA before beta before alpha."
    )})


class APIServiceConditionSchema(Schema):
    """One aspect of an APIService's state."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect: Available."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"description": (
        "Machine-readable, CamelCase reason for the last transition: Local, Passed, FailedDiscoveryCheck, "
        "ServiceNotFound, ServiceAccessError, ServicePortError, MissingEndpoints."
    )})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class APIServiceStatusSchema(Schema):
    """What the server observed about the backend."""

    conditions = fields.List(fields.Nested(APIServiceConditionSchema), metadata=fields.merge_by("type", description=(
        "The current state of the APIService, one condition per type."
    )))


class APIServiceSchema(Schema):
    """An APIService registers the server of one API group/version with this server, the aggregator: requests for
    /apis/<group>/<version> go to that server, and discovery and OpenAPI include what it serves. The name must be
    <version>.<group>.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, labels, annotations, and what the server records about the object."
    )})
    spec = fields.Nested(APIServiceSpecSchema, metadata={"description": "Where the backend is and how it ranks."})
    status = fields.Nested(APIServiceStatusSchema, metadata={"description": (
        "Whether the backend is available, as the server last checked."
    )})
