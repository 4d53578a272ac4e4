"""CustomResourceDefinition validation (``pkg/apis/apiextensions/validation``), with
kube-apiserver's field paths and messages.

Kubernetes validates the internal form of a CRD, which it makes from v1 by moving what all
versions share to the spec: when every version has the same ``schema`` it is
``spec.validation``, the same ``subresources`` ``spec.subresources``, the same
``additionalPrinterColumns`` and ``selectableFields`` those of the spec. Its messages name those
paths (``spec.validation.openAPIV3Schema.properties[spec].type``), and so do these
(:class:`_Internal`). Likewise the webhook is ``spec.conversion.webhookClientConfig`` and its
versions ``spec.conversion.conversionReviewVersions``, and ``spec.version`` is the first version.
"""

from __future__ import annotations

import base64
import binascii
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, duplicate, forbidden, invalid, is_dns1035_label, is_dns1123_subdomain,
    not_supported, required, too_many, validate_review_versions, validate_webhook_service, validate_webhook_url,
)
from kplane.plugins.apiextensions.schema import cel, structural
from kplane.plugins.apiextensions.schema.structural import Options
from kplane.plugins.apiextensions.types import (
    CLUSTER_SCOPED, ESTABLISHED, NAMESPACE_SCOPED, NONE_CONVERTER, WEBHOOK_CONVERTER, CustomResourceColumnDefinition,
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceSubresources,
    CustomResourceValidation, SelectableField, is_true,
)

PRINTER_COLUMN_TYPES = ["boolean", "date", "integer", "number", "string"]
PRINTER_COLUMN_FORMATS = ["byte", "date", "date-time", "double", "float", "int32", "int64", "password"]
CONVERSION_REVIEW_VERSIONS = ["v1", "v1beta1"]  # what this server sends webhooks
MAX_SELECTABLE_FIELDS = 8
API_APPROVED = "api-approved.kubernetes.io"
_APPROVAL_PR = "see https://github.com/kubernetes/enhancements/pull/1111"


@dataclass(frozen=True, slots=True)
class _Checks:
    """``validationOptions``: what a create requires; an update relaxes what the stored CRD broke."""

    schema: Options = Options()
    require_schema: bool = True
    require_recognized_review_version: bool = True
    immutable_names: bool = False
    allow_invalid_ca_bundle: bool = True
    too_many_selectable_allowed: frozenset[str | None] = frozenset()  # versions (None: the spec's)


@dataclass(slots=True)
class _Version:
    """One version as the internal form keeps it: what all versions share moved to the spec."""

    schema: CustomResourceValidation | None
    subresources: CustomResourceSubresources | None
    columns: list[CustomResourceColumnDefinition]
    selectable: list[SelectableField]


@dataclass(slots=True)
class _Internal:
    validation: CustomResourceValidation | None
    subresources: CustomResourceSubresources | None
    columns: list[CustomResourceColumnDefinition]
    selectable: list[SelectableField]
    versions: list[_Version]

    @classmethod
    def of(cls, spec: CustomResourceDefinitionSpec) -> _Internal:
        versions = spec.versions or []
        shared = [all(getattr(v, attr) == getattr(versions[0], attr) for v in versions) and bool(versions)
                  for attr in ("schema", "subresources", "additional_printer_columns", "selectable_fields")]
        first = versions[0] if versions else None
        return cls(
            validation=first.schema if first and shared[0] else None,
            subresources=first.subresources if first and shared[1] else None,
            columns=(first.additional_printer_columns or []) if first and shared[2] else [],
            selectable=(first.selectable_fields or []) if first and shared[3] else [],
            versions=[_Version(None if shared[0] else v.schema, None if shared[1] else v.subresources,
                               [] if shared[2] else v.additional_printer_columns or [],
                               [] if shared[3] else v.selectable_fields or []) for v in versions])

    def schemas(self) -> list[dict[str, Any]]:
        found = [self.validation] + [v.schema for v in self.versions]
        return [s.open_api_v3_schema for s in found if s is not None and s.open_api_v3_schema is not None]


def validate_crd(crd: CustomResourceDefinition) -> list[FieldError]:
    """``ValidateCustomResourceDefinition``: a CRD as created."""
    errs: list[FieldError] = []
    if crd.metadata.name != f"{crd.spec.names.plural}.{crd.spec.group}":
        errs.append(invalid("metadata.name", crd.metadata.name, 'must be spec.names.plural+"."+spec.group'))
    errs += _spec(crd.spec, _Checks())
    return errs + _status_and_policies(crd, None)


def validate_crd_update(crd: CustomResourceDefinition, old: CustomResourceDefinition) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionUpdate``: the spec checks, relaxed where the stored CRD
    did not meet them, and the fields that may not change."""
    checks = _update_checks(crd, old)
    errs = _spec(crd.spec, checks)
    spec, old_spec = crd.spec, old.spec
    immutable = [("spec.group", spec.group, old_spec.group), ("spec.names.plural", spec.names.plural, old_spec.names.plural)]
    if checks.immutable_names:
        immutable = [("spec.scope", spec.scope, old_spec.scope), ("spec.names.kind", spec.names.kind, old_spec.names.kind), *immutable]
    errs += [invalid(path, new, FIELD_IMMUTABLE) for path, new, was in immutable if new != was]
    return errs + _status_and_policies(crd, old)


def validate_crd_status(crd: CustomResourceDefinition) -> list[FieldError]:
    """``ValidateUpdateCustomResourceDefinitionStatus``: only the accepted names."""
    return _names(crd.status.accepted_names, "status.acceptedNames")


def _status_and_policies(crd: CustomResourceDefinition, old: CustomResourceDefinition | None) -> list[FieldError]:
    errs = _names(crd.status.accepted_names, "status.acceptedNames")
    errs += _stored_versions(crd)
    errs += _api_approval(crd, old)
    if crd.spec.preserve_unknown_fields and not (old is not None and old.spec.preserve_unknown_fields):
        errs.append(invalid("spec.preserveUnknownFields", True,
                            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
    return errs


def _update_checks(crd: CustomResourceDefinition, old: CustomResourceDefinition) -> _Checks:
    internal = _Internal.of(old.spec)
    schemas = internal.schemas()
    conversion = old.spec.conversion
    review = (conversion.webhook.conversion_review_versions if conversion and conversion.webhook else None) or []
    too_many: set[str | None] = set()
    new = _Internal.of(crd.spec)
    if len(internal.selectable) > MAX_SELECTABLE_FIELDS and new.selectable == internal.selectable:
        too_many.add(None)
    old_versions = {v.name: v for v in old.spec.versions or []}
    for version in crd.spec.versions or []:
        was = old_versions.get(version.name)
        if was is not None and len(was.selectable_fields or []) > MAX_SELECTABLE_FIELDS and version.selectable_fields == was.selectable_fields:
            too_many.add(version.name)
    return _Checks(
        schema=Options(
            require_valid_property_type=not any(structural.has_invalid_types(s) for s in schemas),
            require_pruned_defaults=not any(structural.has_unpruned_defaults(s) for s in schemas),
            require_atomic_set_type=not any(structural.has_non_atomic_set(s) for s in schemas),
            require_map_list_keys=not any(structural.has_invalid_map_list_keys(s) for s in schemas)),
        require_schema=internal.validation is not None or all(v.schema is not None and v.schema.open_api_v3_schema is not None
                                                                 for v in internal.versions),
        require_recognized_review_version=not review or any(v in CONVERSION_REVIEW_VERSIONS for v in review),
        immutable_names=is_true(old, ESTABLISHED),
        allow_invalid_ca_bundle=_allow_invalid_ca_bundle(old),
        too_many_selectable_allowed=frozenset(too_many))


def _spec(spec: CustomResourceDefinitionSpec, checks: _Checks) -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec`` on the internal form."""
    errs: list[FieldError] = []
    internal = _Internal.of(spec)
    versions = spec.versions or []
    if not spec.group:
        errs.append(required("spec.group"))
    elif problems := is_dns1123_subdomain(spec.group):
        errs.append(invalid("spec.group", spec.group, ",".join(problems)))
    elif "." not in spec.group:
        errs.append(invalid("spec.group", spec.group, "should be a domain with at least one dot"))
    errs += _enum("spec.scope", spec.scope, [CLUSTER_SCOPED, NAMESPACE_SCOPED])
    if checks.require_schema and (internal.validation is None or internal.validation.open_api_v3_schema is None):
        errs += [required(f"spec.versions[{i}].schema.openAPIV3Schema") for i, v in enumerate(internal.versions)
                 if v.schema is None or v.schema.open_api_v3_schema is None]
    if spec.preserve_unknown_fields and any(structural.has_defaults(s) for s in internal.schemas()):
        errs.append(invalid("spec.preserveUnknownFields", True, "must be false in order to use defaults in the schema"))
    names_seen: set[str | None] = set()
    unique = True
    for i, (version, view) in enumerate(zip(versions, internal.versions)):
        unique = unique and version.name not in names_seen
        names_seen.add(version.name)
        if problems := is_dns1035_label(version.name or ""):
            errs.append(invalid(f"spec.versions[{i}].name", version.name or "", ",".join(problems)))
        subresources = view.subresources if view.subresources is not None else internal.subresources
        errs += _version(version.name or "", version.deprecated, version.deprecation_warning, view,
                         subresources is not None and subresources.status is not None, checks, f"spec.versions[{i}]")
    if not unique:
        errs.append(invalid("spec.versions", _versions_value(spec), "must contain unique version names"))
    if sum(1 for v in versions if v.storage) != 1:
        errs.append(invalid("spec.versions", _versions_value(spec), "must have exactly one version marked as storage version"))
    if versions and (problems := is_dns1035_label(versions[0].name or "")):
        errs.append(invalid("spec.version", versions[0].name or "", ",".join(problems)))
    names = spec.names
    errs += [required(f"spec.names.{key}") for key, value in (("plural", names.plural), ("singular", names.singular),
                                                              ("kind", names.kind), ("listKind", names.list_kind)) if not value]
    errs += _names(names, "spec.names")
    any_status = any(s is not None and s.status is not None for s in [internal.subresources, *(v.subresources for v in internal.versions)])
    errs += _validation(internal.validation, any_status, checks, "spec.validation")
    errs += _subresources(internal.subresources, "spec.subresources")
    errs += [e for i, c in enumerate(internal.columns) for e in _column(c, f"spec.additionalPrinterColumns[{i}]")]
    if internal.selectable:
        if internal.validation is None:
            errs.append(invalid("spec.selectableFields", "", "may only be set when validations.schema is included"))
        else:
            errs += _selectable(internal.selectable, internal.validation.open_api_v3_schema, "spec", None, checks)
    conversion = spec.conversion
    if conversion is not None and conversion.strategy != NONE_CONVERTER and spec.preserve_unknown_fields:
        errs.append(invalid("spec.conversion.strategy", conversion.strategy, "must be None if spec.preserveUnknownFields is true"))
    return errs + _conversion(spec, checks)


def _version(name: str, deprecated: bool | None, warning: str | None, view: _Version, status_enabled: bool,
             checks: _Checks, path: str) -> list[FieldError]:
    errs = [invalid(f"{path}.deprecationWarning", warning, problem) for problem in _deprecation_warning(deprecated, warning)]
    errs += _validation(view.schema, status_enabled, checks, f"{path}.schema")
    errs += _subresources(view.subresources, f"{path}.subresources")
    errs += [e for i, c in enumerate(view.columns) for e in _column(c, f"{path}.additionalPrinterColumns[{i}]")]
    if view.selectable:
        if view.schema is None or view.schema.open_api_v3_schema is None:
            errs.append(invalid(f"{path}.selectableFields", "", "may only be set when `version.schema.openAPIV3Schema` is not included"))
        else:
            errs += _selectable(view.selectable, view.schema.open_api_v3_schema, path, name, checks)
    return errs


def _deprecation_warning(deprecated: bool | None, warning: str | None) -> list[str]:
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if warning is None:
        return []
    problems = []
    if len(warning.encode()) > 256:
        problems.append("must be <= 256 characters long")
    if not warning:
        problems.append("must not be an empty string")
    for i, char in enumerate(warning):
        if not char.isprintable():
            problems.append(f"must only contain printable UTF-8 characters; non-printable character found at index {len(warning[:i].encode())}")
            break
    return problems


def _validation(validation: CustomResourceValidation | None, status_enabled: bool, checks: _Checks, path: str) -> list[FieldError]:
    if validation is None or validation.open_api_v3_schema is None:
        return []
    where = f"{path}.openAPIV3Schema"
    schema = validation.open_api_v3_schema
    errs = structural.validate_schema(schema, where, status_enabled=status_enabled, options=checks.schema)
    return errs or cel.compile_errors(schema, where)


def _subresources(subresources: CustomResourceSubresources | None, path: str) -> list[FieldError]:
    scale = subresources.scale if subresources is not None else None
    if scale is None:
        return []
    errs: list[FieldError] = []
    for key, value, under in (("specReplicasPath", scale.spec_replicas_path, (".spec.",)),
                              ("statusReplicasPath", scale.status_replicas_path, (".status.",)),
                              ("labelSelectorPath", scale.label_selector_path, (".spec.", ".status."))):
        where = f"{path}.scale.{key}"
        if not value:
            if key != "labelSelectorPath":
                errs.append(required(where))
        elif problems := _simple_json_path(value, where):
            errs += problems
        elif not value.startswith(under):
            detail = "should be a json path under either .spec or .status" if len(under) == 2 else f"should be a json path under {under[0][:-1]}"
            errs.append(invalid(where, value, detail))
    return errs


def _simple_json_path(value: str, path: str) -> list[FieldError]:
    if not value:
        return [invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [invalid(path, value, "must be a simple json path starting with .")]
    return []


def _column(column: CustomResourceColumnDefinition, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not column.name:
        errs.append(required(f"{path}.name"))
    types = f"must be one of {','.join(PRINTER_COLUMN_TYPES)}"
    if not column.type:
        errs.append(required(f"{path}.type", types))
    elif column.type not in PRINTER_COLUMN_TYPES:
        errs.append(invalid(f"{path}.type", column.type, types))
    if column.format and column.format not in PRINTER_COLUMN_FORMATS:
        errs.append(invalid(f"{path}.format", column.format, f"must be one of {','.join(PRINTER_COLUMN_FORMATS)}"))
    if not column.json_path:
        errs.append(required(f"{path}.JSONPath"))
    else:
        errs += _simple_json_path(column.json_path, f"{path}.JSONPath")
    return errs


def _selectable(fields: list[SelectableField], schema: dict[str, Any], path: str, version: str | None,
                checks: _Checks) -> list[FieldError]:
    errs: list[FieldError] = []
    init_error = structural.unsupported(schema)
    if init_error is not None:
        errs.append(invalid(f"{path}.schema.openAPIV3Schema", "", init_error))
    seen: set[str] = set()
    for i, selectable in enumerate(fields):
        where = f"{path}.selectableFields[{i}].jsonPath"
        if not selectable.json_path:
            errs.append(required(where))
            continue
        try:
            named, found = structural.field_at(None if init_error else schema, selectable.json_path)
        except ValueError as err:
            errs.append(invalid(where, selectable.json_path, f"is an invalid path: {err}"))
            continue
        if named.split(".")[0].split("[")[0] == "metadata":
            errs.append(invalid(where, selectable.json_path, "must not point to fields in metadata"))
        if found is None or found.get("type") not in ("string", "boolean", "integer"):
            errs.append(invalid(where, selectable.json_path,
                                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."))
        if named in seen:
            errs.append(duplicate(where, selectable.json_path))
        seen.add(named)
    if len(seen) > MAX_SELECTABLE_FIELDS and version not in checks.too_many_selectable_allowed:
        errs.append(too_many(f"{path}.selectableFields", len(seen), MAX_SELECTABLE_FIELDS))
    return errs


def _names(names: CustomResourceDefinitionNames, path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``: DNS-1035 labels (kinds in any case)."""
    errs: list[FieldError] = []
    for key, value in (("plural", names.plural), ("singular", names.singular)):
        if value and (problems := is_dns1035_label(value)):
            errs.append(invalid(f"{path}.{key}", value, ",".join(problems)))
    for key, value in (("kind", names.kind), ("listKind", names.list_kind)):
        if value and (problems := is_dns1035_label(value.lower())):
            errs.append(invalid(f"{path}.{key}", value, "may have mixed case, but should otherwise match: " + ",".join(problems)))
    for i, short in enumerate(names.short_names or ()):
        if problems := is_dns1035_label(short):
            errs.append(invalid(f"{path}.shortNames[{i}]", short, ",".join(problems)))
    if names.kind and names.kind == names.list_kind:
        errs.append(invalid(f"{path}.listKind", names.list_kind, "kind and listKind may not be the same"))
    for i, category in enumerate(names.categories or ()):
        if problems := is_dns1035_label(category):
            errs.append(invalid(f"{path}.categories[{i}]", category, ",".join(problems)))
    return errs


def _enum(path: str, value: str | None, accepted: list[str]) -> list[FieldError]:
    if not value:
        return [required(path)]
    return [] if value in accepted else [not_supported(path, value, accepted)]


def _conversion(spec: CustomResourceDefinitionSpec, checks: _Checks) -> list[FieldError]:
    conversion = spec.conversion
    if conversion is None:
        return []
    path = "spec.conversion"
    errs = _enum(f"{path}.strategy", conversion.strategy, [NONE_CONVERTER, WEBHOOK_CONVERTER])
    webhook = conversion.webhook
    config = webhook.client_config if webhook is not None else None
    review = webhook.conversion_review_versions if webhook is not None else None
    if conversion.strategy != WEBHOOK_CONVERTER:
        if config is not None:
            errs.append(forbidden(f"{path}.webhookClientConfig", "should not be set when strategy is not set to Webhook"))
        if review:
            errs.append(forbidden(f"{path}.conversionReviewVersions", "should not be set when strategy is not set to Webhook"))
        return errs
    where = f"{path}.webhookClientConfig"
    if config is None:
        errs.append(required(where, "required when strategy is set to Webhook"))
    else:
        if (config.url is None) == (config.service is None):
            errs.append(required(where, "exactly one of url or service is required"))
        elif config.url is not None:
            errs += validate_webhook_url(config.url, f"{where}.url")
        elif config.service is not None:
            service = config.service
            errs += validate_webhook_service(service.name, service.namespace, service.path, service.port, f"{where}.service")
        if config.ca_bundle and not checks.allow_invalid_ca_bundle and not _valid_ca_bundle(config.ca_bundle):
            errs.append(invalid(f"{where}.caBundle", config.ca_bundle, "unable to load root certificates: unable to parse bytes as PEM block"))
    return errs + validate_review_versions(review or [], CONVERSION_REVIEW_VERSIONS, checks.require_recognized_review_version,
                                   f"{path}.conversionReviewVersions")


def _valid_ca_bundle(ca_bundle: str) -> bool:
    try:
        pem = base64.b64decode(ca_bundle, validate=True).decode("ascii")
        ssl.create_default_context(cadata=pem)
    except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError):
        return False
    return True


def _allow_invalid_ca_bundle(old: CustomResourceDefinition) -> bool:
    """An invalid CA bundle may stay while the CRD is not established, or if it already was invalid."""
    if not is_true(old, ESTABLISHED):
        return True
    conversion = old.spec.conversion
    config = conversion.webhook.client_config if conversion and conversion.webhook else None
    return bool(config and config.ca_bundle) and not _valid_ca_bundle(config.ca_bundle or "")


def _stored_versions(crd: CustomResourceDefinition) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStoredVersions``."""
    stored = crd.status.stored_versions or []
    path = "status.storedVersions"
    if not stored:
        return [invalid(path, stored, "must have at least one stored version")]
    errs = []
    index = {version: i for i, version in enumerate(stored)}
    for version in crd.spec.versions or []:
        if version.storage and version.name not in index:
            errs.append(invalid(path, stored, f"must have the storage version {version.name}"))
        index.pop(version.name or "", None)
    for version, i in index.items():
        errs.append(invalid(f"{path}[{i}]", version, (
            f"missing from spec.versions; {version} was previously a storage version, and must remain in spec.versions "
            f"until a storage migration ensures no data remains persisted in {version} and removes {version} from "
            "status.storedVersions")))
    return errs


def _approval(annotations: dict[str, str] | None) -> tuple[str, str]:
    """``GetAPIApprovalState``: missing, bypassed (``unapproved...``), approved (a URL) or invalid."""
    value = (annotations or {}).get(API_APPROVED, "")
    if not value:
        return "missing", f'protected groups must have approval annotation "{API_APPROVED}", {_APPROVAL_PR}'
    if value.startswith("unapproved"):
        return "bypassed", f'not approved: "{value}"'
    try:
        parts = urlsplit(value)
    except ValueError:
        parts = None
    if parts is not None and parts.scheme and parts.netloc:
        return "approved", f"approved in {value}"
    return "invalid", (f'protected groups must have approval annotation "{API_APPROVED}" with either a URL or a reason '
                       f'starting with "unapproved", {_APPROVAL_PR}')


def _api_approval(crd: CustomResourceDefinition, old: CustomResourceDefinition | None) -> list[FieldError]:
    """CRDs of the groups the Kubernetes project owns (``k8s.io``, ``kubernetes.io`` and their
    subdomains) must say where their API was approved; a state that does not change is kept."""
    group = crd.spec.group or ""
    if not any(group == g or group.endswith("." + g) for g in ("k8s.io", "kubernetes.io")):
        return []
    state, reason = _approval(crd.metadata.annotations)
    if old is not None and _approval(old.metadata.annotations)[0] == state:
        return []
    path = f"metadata.annotations[{API_APPROVED}]"
    if state == "missing":
        return [required(path, reason)]
    if state == "invalid":
        return [invalid(path, (crd.metadata.annotations or {}).get(API_APPROVED, ""), reason)]
    return []


def _versions_value(spec: CustomResourceDefinitionSpec) -> list[dict[str, Any]]:
    """``spec.versions`` as the message quotes them: the versions' names and flags."""
    return [{"name": v.name, "served": bool(v.served), "storage": bool(v.storage)} for v in spec.versions or []]
