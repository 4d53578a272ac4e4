"""Name and ObjectMeta validation against k8s.io/apimachinery's rules and messages."""

from __future__ import annotations

import pytest

from kplane.core.meta.errors import FieldError, FieldErrorType
from kplane.core.meta.types import ObjectMeta, OwnerReference
from kplane.core.meta.validation import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    mask_trailing_dash,
    validate_annotations,
    validate_finalizers,
    validate_labels,
    validate_object_meta,
    validate_object_meta_update,
    validate_owner_references,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
KEY_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
    "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
    "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def rendered(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors]


# ---- name validators (IsDNS1123Subdomain & co return detail strings) ----


@pytest.mark.parametrize(
    "value",
    ["a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "a.a", "a.b.c", "1.2.3", "a-1.b-2", "a" * 253,
     ("a" * 63 + ".") * 3 + "a" * 61],
)
def test_dns1123_subdomain_accepts(value: str) -> None:
    assert is_dns1123_subdomain(value) == []


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("", [SUBDOMAIN_MSG]),
        ("A", [SUBDOMAIN_MSG]),
        ("a_b", [SUBDOMAIN_MSG]),
        ("-a", [SUBDOMAIN_MSG]),
        ("a-", [SUBDOMAIN_MSG]),
        ("a..b", [SUBDOMAIN_MSG]),
        (".a", [SUBDOMAIN_MSG]),
        ("a\n", [SUBDOMAIN_MSG]),  # no trailing-newline leniency: Go's $ only matches at the end
        ("é", [SUBDOMAIN_MSG]),
        ("a" * 254, ["must be no more than 253 bytes"]),
        ("A" * 254, ["must be no more than 253 bytes", SUBDOMAIN_MSG]),
    ],
)
def test_dns1123_subdomain_rejects(value: str, errors: list[str]) -> None:
    assert is_dns1123_subdomain(value) == errors


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("abc", []),
        ("a-1", []),
        ("1abc", []),
        ("a" * 63, []),
        ("a" * 64, ["must be no more than 63 bytes"]),
        ("a.b", ["must not contain dots"]),
        ("A", [LABEL_MSG]),
        ("a_b", [LABEL_MSG]),
        ("", [LABEL_MSG]),
        ("-a", [LABEL_MSG]),
    ],
)
def test_dns1123_label(value: str, errors: list[str]) -> None:
    assert is_dns1123_label(value) == errors


@pytest.mark.parametrize(
    ("value", "errors"),
    [("abc", []), ("a-1", []), ("1abc", [DNS1035_MSG]), ("a.b", [DNS1035_MSG]), ("a" * 64, ["must be no more than 63 bytes"])],
)
def test_dns1035_label(value: str, errors: list[str]) -> None:
    assert is_dns1035_label(value) == errors


@pytest.mark.parametrize(
    "value",
    ["simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple",
     "now-with-dashes/now-with-dashes", "now.with.dots/simple", "now-with.dashes-and.dots/simple",
     "1-num.2-num/3-num", "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123",
     "requests.storage-foo", "a" * 63, "a" * 253 + "/" + "b" * 63],
)
def test_qualified_name_accepts(value: str) -> None:
    assert is_qualified_name(value) == []


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("", ["name part must be non-empty", KEY_NAME_MSG]),
        ("nospecialchars%^=@", [KEY_NAME_MSG]),
        ("cantendwithadash-", [KEY_NAME_MSG]),
        ("-cantstartwithadash-", [KEY_NAME_MSG]),
        ("only/one/slash", [
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')"
        ]),
        ("Example.com/abc", ["prefix part " + SUBDOMAIN_MSG]),
        ("example_com/abc", ["prefix part " + SUBDOMAIN_MSG]),
        ("example.com/", ["name part must be non-empty", KEY_NAME_MSG]),
        ("/simple", ["prefix part must be non-empty"]),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
        ("a" * 254 + "/abc", ["prefix part must be no more than 253 bytes"]),
    ],
)
def test_qualified_name_rejects(value: str, errors: list[str]) -> None:
    assert is_qualified_name(value) == errors


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ("", []),
        ("simple", []),
        ("now-with-dashes", []),
        ("1-starts-with-num", []),
        ("end-with-num-1", []),
        ("1234", []),
        ("Mixed_Case.and-dots_1", []),
        ("a" * 63, []),
        ("a" * 64, ["must be no more than 63 bytes"]),
        ("-a" * 32 + "-", ["must be no more than 63 bytes", VALUE_MSG]),
        ("nospecialchars%^=@", [VALUE_MSG]),
        ("Tama-nui-te-rā.is.Māori.sun", [VALUE_MSG]),
        ("\\backslashes\\are\\bad", [VALUE_MSG]),
        ("-starts-with-dash", [VALUE_MSG]),
        ("ends-with-dash-", [VALUE_MSG]),
        (".starts.with.dot", [VALUE_MSG]),
        ("ends.with.dot.", [VALUE_MSG]),
        ("with/slash", [VALUE_MSG]),
    ],
)
def test_label_value(value: str, errors: list[str]) -> None:
    assert is_valid_label_value(value) == errors


def test_length_limits_count_utf8_bytes() -> None:
    # 32 two-byte characters are 64 bytes: over the limit although only 32 characters long.
    assert is_valid_label_value("é" * 32)[0] == "must be no more than 63 bytes"


@pytest.mark.parametrize(
    ("value", "masked"),
    [("abc", "abc"), ("abc-", "aba"), ("-", "-"), ("a-", "a"), ("", "")],
)
def test_mask_trailing_dash_matches_upstream(value: str, masked: str) -> None:
    assert mask_trailing_dash(value) == masked


# ---- labels, annotations, owner references, finalizers ----


def test_validate_labels_points_at_the_map() -> None:
    assert validate_labels({"app": "web", "example.com/x": ""}, "metadata.labels") == []
    assert validate_labels(None, "metadata.labels") == []
    assert rendered(validate_labels({"-k": "ok", "k": "-v"}, "metadata.labels")) == [
        f'metadata.labels: Invalid value: "-k": {KEY_NAME_MSG}',
        f'metadata.labels: Invalid value: "-v": {VALUE_MSG}',
    ]


def test_validate_annotations_keys_are_case_insensitive_and_values_free() -> None:
    ok = {"Example.COM/Key": "any value / with spaces!", "kubectl.kubernetes.io/last-applied-configuration": "{}"}
    assert validate_annotations(ok, "metadata.annotations") == []
    assert rendered(validate_annotations({"bad key": "v"}, "metadata.annotations")) == [
        f'metadata.annotations: Invalid value: "bad key": {KEY_NAME_MSG}'
    ]


def test_validate_annotations_total_size() -> None:
    limit = 256 * 1024
    exact = {"a": "x" * (limit - 1)}
    assert validate_annotations(exact, "metadata.annotations") == []
    errs = validate_annotations({"a": "x" * limit}, "metadata.annotations")
    assert [(e.type, str(e)) for e in errs] == [
        (FieldErrorType.TOO_LONG, "metadata.annotations: Too long: may not be more than 262144 bytes")
    ]


def test_validate_owner_references() -> None:
    good = OwnerReference("apps/v1", "ReplicaSet", "rs", "uid-1", controller=True)
    assert validate_owner_references([good, OwnerReference("v1", "ConfigMap", "c", "uid-2")], "m.ownerReferences") == []
    errs = validate_owner_references(
        [
            OwnerReference(),
            OwnerReference("a/b/c", "K", "n", "u"),
            OwnerReference("apps/", "K", "n", "u"),
            OwnerReference("v1", "Event", "e", "u"),
        ],
        "m.ownerReferences",
    )
    assert rendered(errs) == [
        "m.ownerReferences[0].apiVersion: Required value: must not be empty",
        "m.ownerReferences[0].kind: Required value: must not be empty",
        "m.ownerReferences[0].name: Required value: must not be empty",
        "m.ownerReferences[0].uid: Required value: must not be empty",
        'm.ownerReferences[1].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
        'm.ownerReferences[2].apiVersion: Invalid value: "apps/": must be <group>/<version> or <version>',
        'm.ownerReferences[3]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u"}: '
        "/v1, Kind=Event is disallowed from being an owner",
    ]


def test_only_one_controller_owner() -> None:
    refs = [
        OwnerReference("apps/v1", "ReplicaSet", "a", "1", controller=True),
        OwnerReference("apps/v1", "ReplicaSet", "b", "2", controller=False),
        OwnerReference("apps/v1", "Deployment", "c", "3", controller=True),
    ]
    errs = validate_owner_references(refs, "metadata.ownerReferences")
    assert len(errs) == 1 and errs[0].field == "metadata.ownerReferences"
    assert errs[0].detail == (
        'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and Deployment/c'
    )


def test_validate_finalizers() -> None:
    assert validate_finalizers(["kubernetes", "example.com/cleanup", "orphan"], "metadata.finalizers") == []
    assert rendered(validate_finalizers(["bad name"], "metadata.finalizers")) == [
        f'metadata.finalizers: Invalid value: "bad name": {KEY_NAME_MSG}'
    ]
    assert rendered(validate_finalizers(["orphan", "foregroundDeletion"], "metadata.finalizers")) == [
        'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: '
        "finalizer orphan and foregroundDeletion cannot be both set"
    ]


# ---- ObjectMeta on create ----


def test_valid_object_meta() -> None:
    meta = ObjectMeta(
        name="web-1",
        namespace="default",
        labels={"app": "web"},
        annotations={"note": "x"},
        owner_references=[OwnerReference("apps/v1", "ReplicaSet", "rs", "u", controller=True)],
        finalizers=["example.com/f"],
    )
    assert validate_object_meta(meta, namespaced=True) == []
    assert validate_object_meta(ObjectMeta(name="node-1"), namespaced=False) == []


@pytest.mark.parametrize(
    ("meta", "namespaced", "expected"),
    [
        (ObjectMeta(namespace="default"), True, ["metadata.name: Required value: name or generateName is required"]),
        (
            ObjectMeta(generate_name="web-", namespace="default"),
            True,
            ["metadata.name: Required value: name or generateName is required"],  # generation happens first
        ),
        (ObjectMeta(name="Web", namespace="default"), True, [f'metadata.name: Invalid value: "Web": {SUBDOMAIN_MSG}']),
        (
            ObjectMeta(name="web-abcde", generate_name="Web-", namespace="default"),
            True,
            [f'metadata.generateName: Invalid value: "Web-": {SUBDOMAIN_MSG}'],
        ),
        (ObjectMeta(name="x"), True, ["metadata.namespace: Required value"]),
        (
            ObjectMeta(name="x", namespace="Bad.NS"),
            True,
            [f'metadata.namespace: Invalid value: "Bad.NS": {LABEL_MSG}'],
        ),
        (ObjectMeta(name="x", namespace="a.b"), True, ['metadata.namespace: Invalid value: "a.b": must not contain dots']),
        (ObjectMeta(name="x", namespace="default"), False, ["metadata.namespace: Forbidden: not allowed on this type"]),
        (
            ObjectMeta(name="x", generation=-1),
            False,
            ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            ObjectMeta(name="x", labels={"a": "-"}, annotations={"-": "v"}, finalizers=["a b"],
                       owner_references=[OwnerReference("v1", "K", "n", "")]),
            False,
            [
                f'metadata.labels: Invalid value: "-": {VALUE_MSG}',
                f'metadata.annotations: Invalid value: "-": {KEY_NAME_MSG}',
                "metadata.ownerReferences[0].uid: Required value: must not be empty",
                f'metadata.finalizers: Invalid value: "a b": {KEY_NAME_MSG}',
            ],
        ),
    ],
)
def test_invalid_object_meta(meta: ObjectMeta, namespaced: bool, expected: list[str]) -> None:
    assert rendered(validate_object_meta(meta, namespaced=namespaced)) == expected


def test_generate_name_may_end_with_a_dash() -> None:
    meta = ObjectMeta(name="web-x7k2p", generate_name="web-", namespace="default")
    assert validate_object_meta(meta, namespaced=True) == []


def test_custom_name_validator_and_path() -> None:
    meta = ObjectMeta(name="1svc", namespace="default")
    errs = validate_object_meta(meta, namespaced=True, name_validator=is_dns1035_label, path="meta")
    assert rendered(errs) == [f'meta.name: Invalid value: "1svc": {DNS1035_MSG}']


# ---- ObjectMeta on update ----


def stored(**overrides: object) -> ObjectMeta:
    base = dict(
        name="web",
        namespace="default",
        uid="u-1",
        resource_version="10",
        generation=2,
        creation_timestamp="2024-01-01T00:00:00Z",
        labels={"app": "web"},
        finalizers=["example.com/a"],
    )
    base.update(overrides)
    return ObjectMeta(**base)  # type: ignore[arg-type]


def test_unchanged_update_is_valid() -> None:
    assert validate_object_meta_update(stored(), stored()) == []
    assert validate_object_meta_update(stored(generation=3, labels={"app": "db"}), stored()) == []


def test_identity_fields_are_immutable() -> None:
    new = stored(
        name="other",
        namespace="kube-system",
        uid="u-2",
        creation_timestamp="2025-01-01T00:00:00Z",
        deletion_timestamp="2025-01-02T00:00:00Z",
        deletion_grace_period_seconds=30,
    )
    assert rendered(validate_object_meta_update(new, stored())) == [
        'metadata.name: Invalid value: "other": field is immutable',
        'metadata.namespace: Invalid value: "kube-system": field is immutable',
        'metadata.uid: Invalid value: "u-2": field is immutable',
        'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
        'metadata.deletionTimestamp: Invalid value: "2025-01-02T00:00:00Z": field is immutable',
        "metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable",
    ]


def test_deletion_fields_cannot_be_unset() -> None:
    old = stored(deletion_timestamp="2025-01-02T00:00:00Z", deletion_grace_period_seconds=0)
    new = stored(finalizers=["example.com/a"])
    assert rendered(validate_object_meta_update(new, old)) == [
        "metadata.deletionTimestamp: Invalid value: null: field is immutable",
        "metadata.deletionGracePeriodSeconds: Invalid value: null: field is immutable",
    ]


def test_missing_strings_equal_empty_ones() -> None:
    assert validate_object_meta_update(stored(namespace=""), stored(namespace=None)) == []


def test_no_new_finalizers_while_deleting() -> None:
    old = stored(deletion_timestamp="2025-01-02T00:00:00Z")
    new = stored(deletion_timestamp="2025-01-02T00:00:00Z", finalizers=["example.com/a", "z", "b"])
    errs = validate_object_meta_update(new, old)
    assert [(e.type, str(e)) for e in errs] == [
        (
            FieldErrorType.FORBIDDEN,
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, "
            'found new finalizers []string{"b", "z"}',
        )
    ]
    removing = stored(deletion_timestamp="2025-01-02T00:00:00Z", finalizers=[])
    assert validate_object_meta_update(removing, old) == []
    assert validate_object_meta_update(stored(finalizers=["example.com/a", "z"]), stored()) == []


def test_update_requires_resource_version_and_monotonic_generation() -> None:
    assert rendered(validate_object_meta_update(stored(resource_version=None, generation=1), stored())) == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update',
        "metadata.generation: Invalid value: 1: must not be decremented",
    ]


def test_update_revalidates_labels_annotations_and_owners_on_new_object() -> None:
    new = stored(labels={"a": "-"}, annotations={"-": ""}, owner_references=[OwnerReference("v1", "K", "n", "")])
    assert rendered(validate_object_meta_update(new, stored(), path="meta")) == [
        f'meta.labels: Invalid value: "-": {VALUE_MSG}',
        f'meta.annotations: Invalid value: "-": {KEY_NAME_MSG}',
        "meta.ownerReferences[0].uid: Required value: must not be empty",
    ]
