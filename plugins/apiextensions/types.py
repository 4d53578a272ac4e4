"""Internal types of apiextensions.k8s.io: CustomResourceDefinition.

Mirrors ``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/types.go``. A version's
``openAPIV3Schema`` is kept as the wire JSON the client sent (``JSONSchemaProps`` keyed by
their JSON names: ``x-kubernetes-preserve-unknown-fields``, ``$ref``...), because everything
reading it (structural schemas, validation, pruning, defaulting, CEL, OpenAPI) speaks that form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import ObjectMeta

GROUP = "apiextensions.k8s.io"

# spec.scope
NAMESPACE_SCOPED, CLUSTER_SCOPED = "Namespaced", "Cluster"
# spec.conversion.strategy
NONE_CONVERTER, WEBHOOK_CONVERTER = "None", "Webhook"
# status.conditions[].type
ESTABLISHED, NAMES_ACCEPTED, NON_STRUCTURAL_SCHEMA, TERMINATING = "Established", "NamesAccepted", "NonStructuralSchema", "Terminating"
KUBERNETES_API_APPROVAL_POLICY_CONFORMANT = "KubernetesAPIApprovalPolicyConformant"
# The finalizer that deletes every custom resource of a CRD before the CRD goes.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


@dataclass(slots=True)
class CustomResourceDefinitionNames:
    plural: str | None = None
    singular: str | None = None
    short_names: list[str] | None = None
    kind: str | None = None
    list_kind: str | None = None
    categories: list[str] | None = None


@dataclass(slots=True)
class CustomResourceValidation:
    open_api_v3_schema: dict[str, Any] | None = None  # JSONSchemaProps, wire form


@dataclass(slots=True)
class CustomResourceSubresourceStatus:
    """Empty: its presence enables ``/status``."""


@dataclass(slots=True)
class CustomResourceSubresourceScale:
    spec_replicas_path: str | None = None
    status_replicas_path: str | None = None
    label_selector_path: str | None = None


@dataclass(slots=True)
class CustomResourceSubresources:
    status: CustomResourceSubresourceStatus | None = None
    scale: CustomResourceSubresourceScale | None = None


@dataclass(slots=True)
class CustomResourceColumnDefinition:
    name: str | None = None
    type: str | None = None
    format: str | None = None
    description: str | None = None
    priority: int | None = None
    json_path: str | None = None


@dataclass(slots=True)
class SelectableField:
    json_path: str | None = None


@dataclass(slots=True)
class CustomResourceDefinitionVersion:
    name: str | None = None
    served: bool | None = None
    storage: bool | None = None
    deprecated: bool | None = None
    deprecation_warning: str | None = None
    schema: CustomResourceValidation | None = None
    subresources: CustomResourceSubresources | None = None
    additional_printer_columns: list[CustomResourceColumnDefinition] | None = None
    selectable_fields: list[SelectableField] | None = None


@dataclass(slots=True)
class ServiceReference:
    namespace: str | None = None
    name: str | None = None
    path: str | None = None
    port: int | None = None


@dataclass(slots=True)
class WebhookClientConfig:
    url: str | None = None
    service: ServiceReference | None = None
    ca_bundle: str | None = None  # base64, as fields.Bytes keeps it


@dataclass(slots=True)
class WebhookConversion:
    client_config: WebhookClientConfig | None = None
    conversion_review_versions: list[str] | None = None


@dataclass(slots=True)
class CustomResourceConversion:
    strategy: str | None = None
    webhook: WebhookConversion | None = None


@dataclass(slots=True)
class CustomResourceDefinitionSpec:
    group: str | None = None
    names: CustomResourceDefinitionNames = field(default_factory=CustomResourceDefinitionNames)
    scope: str | None = None
    versions: list[CustomResourceDefinitionVersion] | None = None
    conversion: CustomResourceConversion | None = None
    preserve_unknown_fields: bool | None = None


@dataclass(slots=True)
class CustomResourceDefinitionCondition:
    type: str | None = None
    status: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class CustomResourceDefinitionStatus:
    conditions: list[CustomResourceDefinitionCondition] | None = None
    accepted_names: CustomResourceDefinitionNames = field(default_factory=CustomResourceDefinitionNames)
    stored_versions: list[str] | None = None


@dataclass(slots=True)
class CustomResourceDefinition:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CustomResourceDefinitionSpec = field(default_factory=CustomResourceDefinitionSpec)
    status: CustomResourceDefinitionStatus = field(default_factory=CustomResourceDefinitionStatus)


def condition(crd: CustomResourceDefinition, kind: str) -> CustomResourceDefinitionCondition | None:
    """The CRD's condition of type ``kind``, if any."""
    return next((c for c in crd.status.conditions or () if c.type == kind), None)


def is_true(crd: CustomResourceDefinition, kind: str) -> bool:
    found = condition(crd, kind)
    return found is not None and found.status == "True"


def storage_version(crd: CustomResourceDefinition) -> str | None:
    return next((v.name for v in crd.spec.versions or () if v.storage), None)
