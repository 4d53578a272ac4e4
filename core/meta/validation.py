"""Name and ObjectMeta validation with kube-apiserver's rules and wording.

Mirrors ``k8s.io/apimachinery/pkg/util/validation`` (name validators returning detail strings),
``pkg/apis/meta/v1/validation`` (labels) and ``pkg/api/validation/objectmeta.go`` (metadata on
create and update), so clients see the same ``field.Error`` messages a real cluster returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from kplane.core.meta.errors import FieldError, forbidden, invalid, required, too_long
from kplane.core.meta.types import ObjectMeta, OwnerReference

NameValidator = Callable[[str], list[str]]

#: The detail of the error for a field an update may not change.
FIELD_IMMUTABLE = "field is immutable"
IS_NEGATIVE = "must be greater than or equal to 0"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
FINALIZER_ORPHAN = "orphan"
FINALIZER_FOREGROUND = "foregroundDeletion"

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _byte_len(value: str) -> int:
    """Go measures strings in UTF-8 bytes; so must the length limits."""
    return len(value) if value.isascii() else len(value.encode())


def max_len_error(length: int) -> str:
    return f"must be no more than {length} bytes"


def regex_error(msg: str, regex: str, *examples: str) -> str:
    """``validation.RegexError``: the message, examples and the regex, worded as k8s does."""
    if not examples:
        return f"{msg} (regex used for validation is '{regex}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{regex}')"


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: namespace names and most short names."""
    errs: list[str] = []
    if _byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: the default rule for object names."""
    errs: list[str] = []
    if _byte_len(value) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def is_path_segment_name(name: str) -> list[str]:
    """``path.IsValidPathSegmentName``: a name that is safe as one segment of a URL path (the names
    of APIServices and of RBAC's roles and bindings)."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: Service names must also start with a letter."""
    errs: list[str] = []
    if _byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` / ``IsLabelKey``: ``[prefix/]name`` with a DNS-subdomain prefix."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif _byte_len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or up to 63 alphanumerics with inner '-', '_', '.'."""
    errs: list[str] = []
    if _byte_len(value) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def mask_trailing_dash(name: str) -> str:
    """k8s ``maskTrailingDash``: a generateName prefix may end in '-' since a suffix follows.

    Kept byte-for-byte with upstream, which drops the last *two* characters before adding 'a'.
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def validate_label_name(key: str, path: str) -> list[FieldError]:
    return [invalid(path, key, msg) for msg in is_qualified_name(key)]


def validate_labels(labels: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """``ValidateLabels``: errors point at the map itself, carrying the bad key or value."""
    errs: list[FieldError] = []
    for key, value in (labels or {}).items():
        errs.extend(validate_label_name(key, path))
        errs.extend(invalid(path, value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_annotations(annotations: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys are case-insensitive qualified names; 256 KiB in total."""
    errs: list[FieldError] = []
    total = 0
    for key, value in (annotations or {}).items():
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
        total += _byte_len(key) + _byte_len(value)
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT))
    return errs


def _owner_reference_json(ref: OwnerReference) -> dict[str, object]:
    """The wire form k8s prints as the bad value of an owner reference."""
    out: dict[str, object] = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name, "uid": ref.uid}
    if ref.controller is not None:
        out["controller"] = ref.controller
    if ref.block_owner_deletion is not None:
        out["blockOwnerDeletion"] = ref.block_owner_deletion
    return out


def _validate_owner_reference(ref: OwnerReference, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version = ref.api_version or ""
    # schema.ParseGroupVersion: "" and "/" parse to nothing, more than one '/' is an error.
    group, version, parsed = "", "", True
    if api_version and api_version != "/":
        slashes = api_version.count("/")
        if slashes == 0:
            version = api_version
        elif slashes == 1:
            group, version = api_version.split("/")
        else:
            parsed = False
    if not api_version:
        errs.append(required(f"{path}.apiVersion", "must not be empty"))
    elif not parsed or not version:
        errs.append(invalid(f"{path}.apiVersion", api_version, "must be <group>/<version> or <version>"))
    if not ref.kind:
        errs.append(required(f"{path}.kind", "must not be empty"))
    if not ref.name:
        errs.append(required(f"{path}.name", "must not be empty"))
    if not ref.uid:
        errs.append(required(f"{path}.uid", "must not be empty"))
    if (group, version, ref.kind) == ("", "v1", "Event"):
        errs.append(invalid(path, _owner_reference_json(ref), "/v1, Kind=Event is disallowed from being an owner"))
    return errs


def validate_owner_references(refs: list[OwnerReference] | None, path: str) -> list[FieldError]:
    """``ValidateOwnerReferences``: required fields, banned owners, at most one controller."""
    errs: list[FieldError] = []
    first_controller = ""
    for i, ref in enumerate(refs or ()):
        errs.extend(_validate_owner_reference(ref, f"{path}[{i}]"))
        if ref.controller:
            current = f"{ref.kind}/{ref.name}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        [_owner_reference_json(r) for r in refs or ()],
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


def validate_finalizers(finalizers: list[str] | None, path: str) -> list[FieldError]:
    """``ValidateFinalizers``: qualified names, and orphan/foreground are mutually exclusive."""
    errs: list[FieldError] = []
    for name in finalizers or ():
        errs.extend(invalid(path, name, msg) for msg in is_qualified_name(name))
    if finalizers and FINALIZER_ORPHAN in finalizers and FINALIZER_FOREGROUND in finalizers:
        errs.append(
            invalid(
                path,
                list(finalizers),
                f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_FOREGROUND} cannot be both set",
            )
        )
    return errs


def validate_object_meta(
    meta: ObjectMeta,
    *,
    namespaced: bool,
    name_validator: NameValidator = is_dns1123_subdomain,
    path: str = "metadata",
) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create.

    Like k8s this runs after name generation (``rest.BeforeCreate``): an object that only has
    ``generateName`` and no generated ``name`` yet is reported as missing its name.
    """
    errs: list[FieldError] = []
    if meta.generate_name:
        errs.extend(
            invalid(f"{path}.generateName", meta.generate_name, msg)
            for msg in name_validator(mask_trailing_dash(meta.generate_name))
        )
    if not meta.name:
        errs.append(required(f"{path}.name", "name or generateName is required"))
    else:
        errs.extend(invalid(f"{path}.name", meta.name, msg) for msg in name_validator(meta.name))
    if namespaced:
        if not meta.namespace:
            errs.append(required(f"{path}.namespace"))
        else:
            errs.extend(invalid(f"{path}.namespace", meta.namespace, msg) for msg in is_dns1123_label(meta.namespace))
    elif meta.namespace:
        errs.append(forbidden(f"{path}.namespace", "not allowed on this type"))
    if (meta.generation or 0) < 0:
        errs.append(invalid(f"{path}.generation", meta.generation, IS_NEGATIVE))
    errs.extend(validate_labels(meta.labels, f"{path}.labels"))
    errs.extend(validate_annotations(meta.annotations, f"{path}.annotations"))
    errs.extend(validate_owner_references(meta.owner_references, f"{path}.ownerReferences"))
    errs.extend(validate_finalizers(meta.finalizers, f"{path}.finalizers"))
    return errs


def _go_string_slice(values: list[str]) -> str:
    """Go's ``%#v`` of a ``[]string``, which k8s embeds in the new-finalizers message."""
    quoted = ", ".join('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return "[]string{" + quoted + "}"


def validate_object_meta_update(new: ObjectMeta, old: ObjectMeta, path: str = "metadata") -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: identity fields are immutable, the rest is re-validated.

    As in k8s, ``resourceVersion`` must be set: callers doing an unconditional update copy the
    stored version in first (``Store.Update`` does). Finalizer names are not re-checked here,
    matching upstream; only additions while the object is being deleted are refused.
    """
    errs: list[FieldError] = []
    if old.deletion_timestamp:
        added = sorted(set(new.finalizers or ()) - set(old.finalizers or ()))
        if added:
            errs.append(
                forbidden(
                    f"{path}.finalizers",
                    "no new finalizers can be added if the object is being deleted, "
                    f"found new finalizers {_go_string_slice(added)}",
                )
            )
    if not new.resource_version:
        errs.append(invalid(f"{path}.resourceVersion", "", "must be specified for an update"))
    new_generation, old_generation = new.generation or 0, old.generation or 0
    if new_generation < 0:
        errs.append(invalid(f"{path}.generation", new_generation, IS_NEGATIVE))
    if new_generation < old_generation:
        errs.append(invalid(f"{path}.generation", new_generation, "must not be decremented"))
    # Go zero values: a missing string is "", a missing timestamp or pointer prints as null.
    immutable: list[tuple[str, object, object]] = [
        ("name", new.name or "", old.name or ""),
        ("namespace", new.namespace or "", old.namespace or ""),
        ("uid", new.uid or "", old.uid or ""),
        ("creationTimestamp", new.creation_timestamp or None, old.creation_timestamp or None),
        ("deletionTimestamp", new.deletion_timestamp or None, old.deletion_timestamp or None),
        ("deletionGracePeriodSeconds", new.deletion_grace_period_seconds, old.deletion_grace_period_seconds),
    ]
    for name, new_value, old_value in immutable:
        if new_value != old_value:
            errs.append(invalid(f"{path}.{name}", new_value, FIELD_IMMUTABLE))
    errs.extend(validate_labels(new.labels, f"{path}.labels"))
    errs.extend(validate_annotations(new.annotations, f"{path}.annotations"))
    errs.extend(validate_owner_references(new.owner_references, f"{path}.ownerReferences"))
    return errs


def validate_webhook_url(url: str, path: str) -> list[FieldError]:
    """``webhook.ValidateWebhookURL`` with https required (webhooks of CRD conversion and admission)."""
    form = "; desired format: https://host[/path]"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError as err:
        return [required(path, f"url must be a valid URL: {err}{form}")]
    errs = []
    if parts.scheme != "https":
        errs.append(invalid(path, parts.scheme, "'https' is the only allowed URL scheme" + form))
    if not parts.netloc.rpartition("@")[2]:
        errs.append(invalid(path, host, "host must be specified" + form))
    if "@" in parts.netloc:
        errs.append(invalid(path, parts.netloc.rpartition("@")[0], "user information is not permitted in the URL"))
    if parts.fragment:
        errs.append(invalid(path, parts.fragment, "fragments are not permitted in the URL"))
    if parts.query:
        errs.append(invalid(path, parts.query, "query parameters are not permitted in the URL"))
    return errs


def validate_review_versions(versions: list[str], known: tuple[str, ...], require_recognized: bool, path: str,
                             missing: str = "") -> list[FieldError]:
    """A webhook's ``admissionReviewVersions`` / ``conversionReviewVersions``: given, each a
    DNS-1035 label once, and (``require_recognized``, on create) one of ``known`` among them;
    ``missing``: the detail of the error when none is given."""
    if not versions:
        return [required(path, missing)]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        seen.add(version)
        errs += [invalid(f"{path}[{i}]", version, problem) for problem in is_dns1035_label(version)]
    if require_recognized and not seen & set(known):
        errs.append(invalid(path, versions, f"must include at least one of {', '.join(known)}"))
    return errs


def validate_webhook_service(name: str | None, namespace: str | None, url_path: str | None, port: int | None, path: str) -> list[FieldError]:
    """``webhook.ValidateWebhookService``."""
    errs: list[FieldError] = []
    if not name:
        errs.append(required(f"{path}.name"))
    if not namespace:
        errs.append(required(f"{path}.namespace"))
    port = 443 if port is None else port
    if not 1 <= port <= 65535:
        errs.append(invalid(f"{path}.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    if url_path is None or url_path in ("", "/"):
        return errs
    if url_path == "//":
        return [*errs, invalid(f"{path}.path", url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(f"{path}.path", url_path, "must start with a '/'"))
    steps = url_path[1:]
    steps = steps[:-1] if steps.endswith("/") else steps
    for i, step in enumerate(steps.split("/")):
        if not step:
            errs.append(invalid(f"{path}.path", url_path, f"segment[{i}] may not be empty"))
            continue
        errs += [invalid(f"{path}.path", url_path, f"segment[{i}]: {problem}") for problem in is_dns1123_subdomain(step)]
    return errs
