"""JSON patch (RFC 6902, as kube-apiserver applies it) and JSON merge patch (RFC 7386)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kplane.core.meta.errors import StatusReason
from kplane.core.patching.errors import PatchError
from kplane.core.patching.jsonpatch import MAX_JSON_PATCH_OPERATIONS, apply_json_patch
from kplane.core.patching.mergepatch import apply_merge_patch

# RFC 6902 appendix A: (section, document, patch, expected result or None when it must fail).
RFC6902_APPENDIX_A: list[tuple[str, Any, list[dict[str, Any]], Any]] = [
    ("A.1", {"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),
    (
        "A.2",
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
    ),
    ("A.3", {"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ("A.4", {"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    (
        "A.5",
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
    ),
    (
        "A.6",
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        "A.7",
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        "A.8",
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    ("A.9", {"baz": "qux"}, [{"op": "test", "path": "/baz", "value": "bar"}], None),
    (
        "A.10",
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    (
        "A.11",
        {"foo": "bar"},
        [{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}],
        {"foo": "bar", "baz": "qux"},
    ),
    ("A.12", {"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}], None),
    # A.13 (duplicate "op" members) cannot be expressed once the patch is decoded to a dict.
    ("A.14", {"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    ("A.15", {"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": "10"}], None),
    (
        "A.16",
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
    ),
]


@pytest.mark.parametrize(("section", "doc", "patch", "expected"), RFC6902_APPENDIX_A, ids=[c[0] for c in RFC6902_APPENDIX_A])
def test_rfc6902_appendix_a(section: str, doc: Any, patch: list[dict[str, Any]], expected: Any) -> None:
    before = copy.deepcopy(doc)
    if expected is None:
        with pytest.raises(PatchError) as info:
            apply_json_patch(doc, patch)
        assert info.value.code == 422
    else:
        assert apply_json_patch(doc, patch) == expected
    assert doc == before


@pytest.mark.parametrize(
    ("doc", "patch", "expected"),
    [
        # Pointer escapes: "~1" is "/", "~0" is "~", decoded in that order.
        ({}, [{"op": "add", "path": "/a~1b", "value": 1}], {"a/b": 1}),
        ({}, [{"op": "add", "path": "/m~0n", "value": 1}], {"m~n": 1}),
        ({"~1": 0}, [{"op": "replace", "path": "/~01", "value": 2}], {"~1": 2}),
        ({}, [{"op": "add", "path": "/", "value": 1}], {"": 1}),
        # Array insertion at every legal position, including the end by index.
        ({"a": [1, 2]}, [{"op": "add", "path": "/a/0", "value": 0}], {"a": [0, 1, 2]}),
        ({"a": [1, 2]}, [{"op": "add", "path": "/a/2", "value": 3}], {"a": [1, 2, 3]}),
        ({"a": []}, [{"op": "add", "path": "/a/-", "value": 1}], {"a": [1]}),
        # kube-apiserver (json-patch v4) reads indices with strconv.Atoi: negatives count from the end.
        ({"a": [1, 2, 3]}, [{"op": "remove", "path": "/a/-1"}], {"a": [1, 2]}),
        ({"a": [1, 2, 3]}, [{"op": "replace", "path": "/a/-3", "value": 0}], {"a": [0, 2, 3]}),
        ({"a": [1, 2]}, [{"op": "add", "path": "/a/-1", "value": 9}], {"a": [1, 2, 9]}),
        ({"a": [1, 2]}, [{"op": "remove", "path": "/a/01"}], {"a": [1]}),
        # ...and "replace" of a missing object member simply adds it.
        ({"metadata": {}}, [{"op": "replace", "path": "/metadata/labels", "value": {"a": "b"}}],
         {"metadata": {"labels": {"a": "b"}}}),
        # Whole-document replace and test.
        ({"a": 1}, [{"op": "replace", "path": "", "value": {"b": 2}}], {"b": 2}),
        ({"a": 1}, [{"op": "test", "path": "", "value": {"a": 1}}], {"a": 1}),
        # Values are JSON: numbers compare numerically, null is a value, nested structures deeply.
        ({"a": 1}, [{"op": "test", "path": "/a", "value": 1.0}], {"a": 1}),
        ({"a": None}, [{"op": "test", "path": "/a", "value": None}], {"a": None}),
        ({"a": {"b": [1, {"c": True}]}}, [{"op": "test", "path": "/a", "value": {"b": [1, {"c": True}]}}],
         {"a": {"b": [1, {"c": True}]}}),
        ({}, [{"op": "add", "path": "/a", "value": None}], {"a": None}),
        # copy duplicates, move relocates; later operations see earlier ones.
        ({"a": {"x": 1}}, [{"op": "copy", "from": "/a", "path": "/b"}], {"a": {"x": 1}, "b": {"x": 1}}),
        ({"a": [1, 2]}, [{"op": "copy", "from": "/a/0", "path": "/a/-"}], {"a": [1, 2, 1]}),
        ({"a": 1}, [{"op": "move", "from": "/a", "path": "/a"}], {"a": 1}),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/c"}], {"a": {}, "c": 1}),
        (
            {"spec": {"replicas": 1}},
            [
                {"op": "test", "path": "/spec/replicas", "value": 1},
                {"op": "replace", "path": "/spec/replicas", "value": 3},
                {"op": "add", "path": "/spec/paused", "value": True},
                {"op": "test", "path": "/spec", "value": {"replicas": 3, "paused": True}},
            ],
            {"spec": {"replicas": 3, "paused": True}},
        ),
        # A null patch decodes to an empty one in Go, and an empty patch changes nothing.
        ({"a": 1}, None, {"a": 1}),
        ({"a": 1}, [], {"a": 1}),
    ],
)
def test_json_patch_applies(doc: Any, patch: Any, expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_json_patch(doc, patch) == expected
    assert doc == before


@pytest.mark.parametrize(
    ("doc", "patch", "message"),
    [
        ({"a": 1}, [{"op": "test", "path": "/a", "value": 2}], "testing value /a failed: test failed"),
        ({"a": True}, [{"op": "test", "path": "/a", "value": 1}], "testing value /a failed: test failed"),
        ({"a": 1}, [{"op": "test", "path": "/a", "value": True}], "testing value /a failed: test failed"),
        ({"a": [1]}, [{"op": "test", "path": "/a", "value": [1, 2]}], "testing value /a failed: test failed"),
        ({"a": {"x": 1}}, [{"op": "test", "path": "/a", "value": {"x": 1, "y": None}}], "testing value /a failed: test failed"),
        ({}, [{"op": "test", "path": "/a", "value": None}], 'test operation does not apply: doc is missing path: "/a": missing value'),
        ({"a": 1}, [{"op": "test", "path": "", "value": {}}], "testing value  failed: test failed"),
        ({}, [{"op": "remove", "path": "/a"}], "error in remove for path: '/a': Unable to remove nonexistent key: a: missing value"),
        ({}, [{"op": "remove", "path": "/a/b"}], 'remove operation does not apply: doc is missing path: "/a/b": missing value'),
        ({"a": 1}, [{"op": "add", "path": "/a/b", "value": 1}], 'add operation does not apply: doc is missing path: "/a/b": missing value'),
        ({"a": None}, [{"op": "add", "path": "/a/b", "value": 1}], 'add operation does not apply: doc is missing path: "/a/b": missing value'),
        ({}, [{"op": "add", "path": "", "value": 1}], 'add operation does not apply: doc is missing path: "": missing value'),
        ({}, [{"op": "add", "path": "a", "value": 1}], 'add operation does not apply: doc is missing path: "a": missing value'),
        ({"a": [1]}, [{"op": "add", "path": "/a/2", "value": 1}], "Unable to access invalid index: 2: invalid index referenced"),
        ({"a": [1]}, [{"op": "add", "path": "/a/-3", "value": 1}], "Unable to access invalid index: -3: invalid index referenced"),
        ({"a": [1]}, [{"op": "add", "path": "/a/x", "value": 1}], "value was not a proper array index: 'x'"),
        ({"a": [1]}, [{"op": "add", "path": "/a/1e0", "value": 1}], "value was not a proper array index: '1e0'"),
        ({"a": [1]}, [{"op": "remove", "path": "/a/1"}], "Unable to access invalid index: 1: invalid index referenced"),
        ({"a": [1]}, [{"op": "remove", "path": "/a/-"}], "value was not a proper array index: '-'"),
        ({"a": [1]}, [{"op": "replace", "path": "/a/1", "value": 0}], "Unable to access invalid index: 1: invalid index referenced"),
        ({"a": [[1]]}, [{"op": "add", "path": "/a/5/0", "value": 1}], "Unable to access invalid index: 5: invalid index referenced"),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/c"}], 'move operation does not apply: doc is missing path: "/a/c": missing value'),
        ({}, [{"op": "move", "from": "/x", "path": "/y"}], "error in move for path: '/x': Unable to remove nonexistent key: x: missing value"),
        ({"a": 1}, [{"op": "copy", "from": "/a", "path": "/b/c"}], 'copy operation does not apply: doc is missing path: "/b/c": missing value'),
        ({}, [{"op": "copy", "from": "/x", "path": "/y"}], 'copy operation does not apply: doc is missing path: "/x": missing value'),
        ({}, [{"op": "add", "path": "/a"}], 'add operation is missing the "value" member'),
        ({}, [{"op": "replace", "path": "/a"}], 'replace operation is missing the "value" member'),
        ({}, [{"op": "test", "path": "/a"}], 'test operation is missing the "value" member'),
        ({}, [{"op": "add", "value": 1}], 'add operation failed to decode path: the "path" member is missing'),
        ({}, [{"op": "remove", "path": 5}], 'remove operation failed to decode path: the "path" member is not a string'),
        ({}, [{"op": "move", "path": "/a"}], 'move operation failed to decode from: the "from" member is missing'),
        ({}, [{"op": "bogus", "path": "/a"}], "Unexpected kind: bogus"),
        ({}, [{"path": "/a"}], "Unexpected kind: unknown"),
        ({}, [{"op": 1, "path": "/a"}], "Unexpected kind: unknown"),
        ({}, [None], "Unexpected kind: unknown"),
        # The whole patch fails even when earlier operations applied.
        ({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}, {"op": "test", "path": "/a", "value": 1}],
         "testing value /a failed: test failed"),
    ],
)
def test_json_patch_failures_are_422(doc: Any, patch: Any, message: str) -> None:
    before = copy.deepcopy(doc)
    with pytest.raises(PatchError) as info:
        apply_json_patch(doc, patch)
    assert (info.value.code, str(info.value)) == (422, message)
    assert doc == before
    status = info.value.api_error()
    # kube-apiserver answers apply failures with a generic 422 that hides the cause.
    assert (status.code, status.reason, status.message) == (
        422,
        StatusReason.INVALID,
        "the server rejected our request due to an error in our request",
    )


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"op": "add", "path": "/a", "value": 1}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
        ("x", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
        (1, "json: cannot unmarshal number into Go value of type jsonpatch.Patch"),
        (True, "json: cannot unmarshal bool into Go value of type jsonpatch.Patch"),
        ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
        ([[]], "json: cannot unmarshal array into Go value of type jsonpatch.Operation"),
        ([{"op": "add", "path": "/a", "value": 1}, "remove"], "json: cannot unmarshal string into Go value of type jsonpatch.Operation"),
    ],
)
def test_undecodable_json_patch_is_400(patch: Any, message: str) -> None:
    with pytest.raises(PatchError) as info:
        apply_json_patch({}, patch)
    assert (info.value.code, str(info.value)) == (400, message)
    status = info.value.api_error()
    assert (status.code, status.reason, status.message) == (400, StatusReason.BAD_REQUEST, message)


def test_too_many_operations_is_413() -> None:
    ops = [{"op": "test", "path": "", "value": {}}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    with pytest.raises(PatchError) as info:
        apply_json_patch({}, ops)
    assert info.value.code == 413
    status = info.value.api_error()
    assert (status.code, status.reason, status.message) == (
        413,
        StatusReason.REQUEST_ENTITY_TOO_LARGE,
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    )
    assert apply_json_patch({}, ops[:MAX_JSON_PATCH_OPERATIONS]) == {}


def test_copy_growth_is_capped() -> None:
    """Repeated self-copies double the document; kube-apiserver stops them at 3 MiB."""
    doc = {"a": ["x" * 1000]}
    ops = [{"op": "copy", "from": "/a", "path": "/a/-"} for _ in range(40)]
    with pytest.raises(PatchError) as info:
        apply_json_patch(doc, ops)
    assert info.value.code == 422
    assert str(info.value).startswith("Unable to complete the copy, the accumulated size increase of copy is ")
    assert str(info.value).endswith(", exceeding the limit 3145728")


def test_json_patch_never_mutates_inputs_and_copies_only_touched_paths() -> None:
    doc = {"metadata": {"labels": {"a": "1"}, "annotations": {"x": "y"}}, "spec": {"big": list(range(1000))}}
    value = {"nested": {"k": "v"}}
    patch = [
        {"op": "add", "path": "/metadata/labels/b", "value": value},
        {"op": "add", "path": "/metadata/labels/b/nested/k2", "value": "v2"},
        {"op": "copy", "from": "/metadata/labels/b", "path": "/metadata/c"},
        {"op": "add", "path": "/metadata/c/nested/k3", "value": "v3"},
    ]
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    result = apply_json_patch(doc, patch)
    assert doc == doc_before and patch == patch_before
    assert result["metadata"]["labels"]["b"] == {"nested": {"k": "v", "k2": "v2"}}
    # The copy is independent of its source: changing it did not leak back.
    assert result["metadata"]["c"] == {"nested": {"k": "v", "k2": "v2", "k3": "v3"}}
    assert result["spec"] is doc["spec"]
    assert result["metadata"]["annotations"] is doc["metadata"]["annotations"]
    assert result["metadata"] is not doc["metadata"]


def test_moved_value_can_be_edited_at_its_new_place() -> None:
    doc = {"a": {"x": {"y": 1}}, "b": {}}
    patch = [
        {"op": "move", "from": "/a/x", "path": "/b/x"},
        {"op": "replace", "path": "/b/x/y", "value": 2},
    ]
    assert apply_json_patch(doc, patch) == {"a": {}, "b": {"x": {"y": 2}}}
    assert doc == {"a": {"x": {"y": 1}}, "b": {}}


# RFC 7386 appendix A: (original, patch, result).
RFC7386_APPENDIX_A: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("doc", "patch", "expected"), RFC7386_APPENDIX_A)
def test_rfc7386_appendix_a(doc: Any, patch: Any, expected: Any) -> None:
    before = copy.deepcopy(doc)
    assert apply_merge_patch(doc, patch) == expected
    assert doc == before


@pytest.mark.parametrize("patch", [None, "bar", 1, True])
def test_merge_patch_that_is_null_or_a_scalar_is_refused(patch: Any) -> None:
    """The RFC's appendix replaces the document with these; kube-apiserver answers 400 instead."""
    with pytest.raises(PatchError) as raised:
        apply_merge_patch({"a": "foo"}, patch)
    assert (raised.value.code, raised.value.message) == (400, "Invalid JSON Patch")


def test_merge_patch_shares_untouched_subtrees_and_keeps_inputs() -> None:
    doc = {"metadata": {"labels": {"a": "1", "b": "2"}, "name": "x"}, "spec": {"big": list(range(100))}}
    patch = {"metadata": {"labels": {"a": None, "c": "3"}}, "status": {"phase": "Running", "x": None}}
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    result = apply_merge_patch(doc, patch)
    assert result == {
        "metadata": {"labels": {"b": "2", "c": "3"}, "name": "x"},
        "spec": {"big": list(range(100))},
        "status": {"phase": "Running"},
    }
    assert doc == doc_before and patch == patch_before
    assert result["spec"] is doc["spec"]


def test_merge_patch_of_a_scalar_member_with_an_object() -> None:
    assert apply_merge_patch({"a": 1}, {"a": {"b": None, "c": 2}}) == {"a": {"c": 2}}
    assert apply_merge_patch({"a": 1}, {}) == {"a": 1}
