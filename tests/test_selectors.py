"""Label and field selectors against the behaviour of k8s.io/apimachinery/pkg/{labels,fields}."""

from __future__ import annotations

import pytest

from kplane.core.meta.errors import APIError, FieldErrorType
from kplane.core.meta.selectors import (
    FieldSelectorExpr,
    LabelSelectorExpr,
    exact_name,
    field_values,
    label_selector_from_internal,
    parse_field_selector,
    parse_label_selector,
    validate_label_selector,
)
from kplane.core.meta.types import LabelSelector, LabelSelectorRequirement

LABEL_KEY_REGEX_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_REGEX_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def label_error(text: str) -> APIError:
    with pytest.raises(APIError) as info:
        parse_label_selector(text)
    return info.value


# ---- label selector parsing: the canonical String() of every good string, as upstream's tests ----


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("   ", ""),
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("x = a, y = b", "x=a,y=b"),
        ("\tx\n==\ra", "x==a"),
        ("x!=a,y=b", "x!=a,y=b"),
        ("x=", "x="),
        ("x= ", "x="),
        ("x=,z= ", "x=,z="),
        ("x==", "x=="),  # an empty exact value is legal: it selects "x" set to ""
        ("!x", "!x"),
        ("x", "x"),
        ("x>1", "x>1"),
        ("x>1,z<5", "x>1,z<5"),
        ("x in (b,a)", "x in (a,b)"),
        ("x in (a,a)", "x in (a)"),
        ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),
        ("x in (,)", "x in ()"),
        ("x in (,a)", "x in (,a)"),
        ("x in (a,)", "x in (,a)"),
        ("x notin (a, b)", "x notin (a,b)"),
        ("x=a,a=x", "a=x,x=a"),  # sorted by key: parsing is deterministic
        ("in=notin", "in=notin"),  # keywords are plain identifiers outside operator position
        ("x in (in,notin)", "x in (in,notin)"),
        ("example.com/app=web", "example.com/app=web"),
        ("a.b-c_d=E.f-g_1", "a.b-c_d=E.f-g_1"),
    ],
)
def test_label_selector_parses_to_canonical_string(text: str, canonical: str) -> None:
    assert str(parse_label_selector(text)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("=x", "found '=', expected: !, identifier, or 'end of string'"),
        (",a", "found ',', expected: !, identifier, or 'end of string'"),
        ("!", "unable to parse requirement: found '', expected: identifier"),
        ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"),
        (
            "x=a||y=b",  # '|' is not special: "a||y" is the value, and the next '=' is unexpected
            f'unable to parse requirement: values[0][x]: Invalid value: "a||y": {LABEL_VALUE_REGEX_MSG}',
        ),
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("a=b,", "found '', expected: identifier after ','"),
        ("a=b,,c", "found ',', expected: identifier after ','"),
        ("x=(", "unable to parse requirement: found '(', expected: identifier"),
        (
            "x<a",
            'unable to parse requirement: values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        ("-a=b", f'unable to parse requirement: <nil>: Invalid value: "-a": name part {LABEL_KEY_REGEX_MSG}'),
        (
            "/a",
            'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty',
        ),
        (
            "Example.com/a",
            'unable to parse requirement: <nil>: Invalid value: "Example.com/a": prefix part a lowercase '
            "RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
            "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        (
            "a/",
            f'unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; '
            f"name part {LABEL_KEY_REGEX_MSG}",
        ),
        (
            "k" * 64,
            f'unable to parse requirement: <nil>: Invalid value: "{"k" * 64}": name part must be no more than 63 bytes',
        ),
        (
            "a=" + "v" * 64,
            f'unable to parse requirement: values[0][a]: Invalid value: "{"v" * 64}": must be no more than 63 bytes',
        ),
        ("a=-b", f'unable to parse requirement: values[0][a]: Invalid value: "-b": {LABEL_VALUE_REGEX_MSG}'),
        (
            "a in (-b,_c)",
            f'unable to parse requirement: [values[0][a]: Invalid value: "-b": {LABEL_VALUE_REGEX_MSG}, '
            f'values[1][a]: Invalid value: "_c": {LABEL_VALUE_REGEX_MSG}]',
        ),
    ],
)
def test_invalid_label_selectors_answer_400_with_the_parser_message(text: str, message: str) -> None:
    err = label_error(text)
    assert (err.code, err.reason.value, err.message) == (400, "BadRequest", message)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("", {"x": "y"}, True),
        ("", None, True),
        ("x=y", {"x": "y"}, True),
        ("x==y", {"x": "y"}, True),
        ("x=y,z=w", {"x": "y", "z": "w"}, True),
        ("x!=y,z!=w", {"x": "z", "z": "a"}, True),
        ("notin=in", {"notin": "in"}, True),
        ("x", {"x": "z"}, True),
        ("x", {"x": ""}, True),
        ("!x", {"y": "z"}, True),
        ("!x", None, True),
        ("x>1", {"x": "2"}, True),
        ("x<1", {"x": "0"}, True),
        ("x<1", {"x": "-5"}, True),
        ("x=", {"x": ""}, True),
        ("x in ()", {"x": ""}, True),
        ("x notin (a)", {}, True),
        ("x!=y", {}, True),
        ("x in (a,b)", {"x": "b"}, True),
        ("x=z", {}, False),
        ("x=z", None, False),
        ("x=y", {"x": "z"}, False),
        ("x=y,z=w", {"x": "w", "z": "w"}, False),
        ("x!=y,z!=w", {"x": "z", "z": "w"}, False),
        ("x", {"y": "z"}, False),
        ("!x", {"x": "z"}, False),
        ("x>1", {"x": "0"}, False),
        ("x>1", {"x": "1"}, False),
        ("x>1", {"x": "abc"}, False),  # a non-integer label never satisfies gt/lt
        ("x>1", {}, False),
        ("x<1", {"x": "2"}, False),
        ("x=", {}, False),
        ("x in (a,b)", {"x": "c"}, False),
        ("x in (a,b)", {}, False),
        ("x notin (a)", {"x": "a"}, False),
    ],
)
def test_label_selector_matches(text: str, labels: dict[str, str] | None, expected: bool) -> None:
    assert parse_label_selector(text).matches(labels) is expected


def test_label_selector_empty_means_everything() -> None:
    assert parse_label_selector("").empty
    assert parse_label_selector(" ").empty
    assert not parse_label_selector("a").empty
    assert parse_label_selector("b=1,a=2") == parse_label_selector("a=2, b=1")


# ---- metav1.LabelSelector -> selector ----


def test_none_selector_matches_nothing_and_empty_matches_everything() -> None:
    nothing = label_selector_from_internal(None)
    assert not nothing.matches({"a": "b"}) and not nothing.matches({})
    assert not nothing.empty and str(nothing) == ""
    everything = label_selector_from_internal(LabelSelector())
    assert everything.empty and everything.matches({}) and everything.matches({"a": "b"})
    assert label_selector_from_internal(LabelSelector(match_labels={}, match_expressions=[])).empty


def test_internal_selector_combines_match_labels_and_expressions() -> None:
    sel = label_selector_from_internal(
        LabelSelector(
            match_labels={"app": "web", "tier": "front"},
            match_expressions=[
                LabelSelectorRequirement("env", "In", ["prod", "staging"]),
                LabelSelectorRequirement("canary", "DoesNotExist"),
                LabelSelectorRequirement("team", "Exists"),
                LabelSelectorRequirement("zone", "NotIn", ["b"]),
            ],
        )
    )
    assert str(sel) == "app=web,!canary,env in (prod,staging),team,tier=front,zone notin (b)"
    base = {"app": "web", "tier": "front", "env": "prod", "team": "x"}
    assert sel.matches(base)
    assert sel.matches({**base, "zone": "a"})
    assert not sel.matches({**base, "zone": "b"})
    assert not sel.matches({**base, "canary": "true"})
    assert not sel.matches({**base, "env": "dev"})
    assert not sel.matches({k: v for k, v in base.items() if k != "team"})
    assert not sel.matches({**base, "app": "db"})


@pytest.mark.parametrize(
    ("requirement", "message"),
    [
        (LabelSelectorRequirement("a", "Gt", ["1"]), '"Gt" is not a valid label selector operator'),
        (
            LabelSelectorRequirement("a", "In", []),
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            LabelSelectorRequirement("a", "Exists", ["x"]),
            'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
        ),
        (LabelSelectorRequirement("-a", "Exists"), f'key: Invalid value: "-a": name part {LABEL_KEY_REGEX_MSG}'),
    ],
)
def test_internal_selector_errors_are_400(requirement: LabelSelectorRequirement, message: str) -> None:
    with pytest.raises(APIError) as info:
        label_selector_from_internal(LabelSelector(match_expressions=[requirement]))
    assert (info.value.code, info.value.message) == (400, message)


def test_validate_label_selector_messages() -> None:
    sel = LabelSelector(
        match_labels={"ok": "fine", "bad key": "v", "k": "-v"},
        match_expressions=[
            LabelSelectorRequirement("a", "In", []),
            LabelSelectorRequirement("b", "Exists", ["x"]),
            LabelSelectorRequirement("c", "Gt", ["1"]),
            LabelSelectorRequirement("-d", "DoesNotExist"),
            LabelSelectorRequirement("e", "NotIn", ["ok", "-no"]),
        ],
    )
    got = [(e.type, e.field, str(e)) for e in validate_label_selector(sel, "spec.selector")]
    assert got == [
        (
            FieldErrorType.INVALID,
            "spec.selector.matchLabels",
            f'spec.selector.matchLabels: Invalid value: "bad key": name part {LABEL_KEY_REGEX_MSG}',
        ),
        (
            FieldErrorType.INVALID,
            "spec.selector.matchLabels",
            f'spec.selector.matchLabels: Invalid value: "-v": {LABEL_VALUE_REGEX_MSG}',
        ),
        (
            FieldErrorType.REQUIRED,
            "spec.selector.matchExpressions[0].values",
            "spec.selector.matchExpressions[0].values: Required value: "
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            FieldErrorType.FORBIDDEN,
            "spec.selector.matchExpressions[1].values",
            "spec.selector.matchExpressions[1].values: Forbidden: "
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            FieldErrorType.INVALID,
            "spec.selector.matchExpressions[2].operator",
            'spec.selector.matchExpressions[2].operator: Invalid value: "Gt": not a valid selector operator',
        ),
        (
            FieldErrorType.INVALID,
            "spec.selector.matchExpressions[3].key",
            f'spec.selector.matchExpressions[3].key: Invalid value: "-d": name part {LABEL_KEY_REGEX_MSG}',
        ),
        (
            FieldErrorType.INVALID,
            "spec.selector.matchExpressions[4].values[1]",
            f'spec.selector.matchExpressions[4].values[1]: Invalid value: "-no": {LABEL_VALUE_REGEX_MSG}',
        ),
    ]


def test_validate_label_selector_accepts_good_and_none() -> None:
    good = LabelSelector(
        match_labels={"app": "web"},
        match_expressions=[
            LabelSelectorRequirement("env", "In", ["prod"]),
            LabelSelectorRequirement("x", "Exists"),
            LabelSelectorRequirement("y", "DoesNotExist", []),
        ],
    )
    assert validate_label_selector(good, "spec.selector") == []
    assert validate_label_selector(None, "spec.selector") == []


# ---- field selectors ----


@pytest.mark.parametrize(
    ("text", "requirements", "canonical"),
    [
        ("", [], ""),
        ("a=b", [("a", "=", "b")], "a=b"),
        ("a==b", [("a", "=", "b")], "a=b"),
        ("a!=b", [("a", "!=", "b")], "a!=b"),
        ("b=1,a=2", [("a", "=", "2"), ("b", "=", "1")], "a=2,b=1"),  # terms are sorted
        ("a=", [("a", "=", "")], "a="),
        ("=", [], ""),  # an empty field with an empty value is dropped
        ("=x", [("", "=", "x")], "=x"),
        (",,a=b,", [("a", "=", "b")], "a=b"),
        ("a = b", [("a ", "=", " b")], "a = b"),  # whitespace is part of field and value
        ("a=b\\,c", [("a", "=", "b,c")], "a=b\\,c"),
        ("a=b\\=c\\\\", [("a", "=", "b=c\\")], "a=b\\=c\\\\"),
        ("a=!b", [("a", "=", "!b")], "a=!b"),
        (
            "metadata.name=foo,status.phase!=Running",
            [("metadata.name", "=", "foo"), ("status.phase", "!=", "Running")],
            "metadata.name=foo,status.phase!=Running",
        ),
    ],
)
def test_field_selector_parse(text: str, requirements: list[tuple[str, str, str]], canonical: str) -> None:
    expr = parse_field_selector(text)
    assert expr.requirements == requirements
    assert str(expr) == canonical
    assert expr.empty is (not requirements)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a", "invalid selector: 'a'; can't understand 'a'"),
        ("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"),
        ("a=b=c", "invalid field selector: unescaped character in value: 61"),
        ("a=b\\x", "invalid field selector: invalid escape sequence: \\x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_invalid_field_selectors(text: str, message: str) -> None:
    with pytest.raises(APIError) as info:
        parse_field_selector(text)
    assert (info.value.code, info.value.reason.value, info.value.message) == (400, "BadRequest", message)


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        ("", {}, True),
        ("a=b", {"a": "b"}, True),
        ("a=b", {"a": "c"}, False),
        ("a=b", {}, False),
        ("a=", {}, True),  # a missing field reads as ""
        ("a!=b", {}, True),
        ("a!=b", {"a": "b"}, False),
        ("a=b,c!=d", {"a": "b", "c": "e"}, True),
        ("a=b,c!=d", {"a": "b", "c": "d"}, False),
    ],
)
def test_field_selector_matches(text: str, fields: dict[str, str], expected: bool) -> None:
    assert parse_field_selector(text).matches(fields) is expected


def test_field_selector_validate_and_fields() -> None:
    expr = parse_field_selector("status.phase=Running,metadata.name=x,spec.nodeName!=n1")
    assert expr.fields() == {"status.phase", "metadata.name", "spec.nodeName"}
    expr.validate({"status.phase", "metadata.name", "spec.nodeName"})
    with pytest.raises(APIError) as info:
        expr.validate({"metadata.name", "metadata.namespace"})
    # Terms are checked in sorted order, so the first unsupported one is reported.
    assert (info.value.code, info.value.message) == (400, "field label not supported: spec.nodeName")
    with pytest.raises(APIError) as default:
        parse_field_selector('a"b=1').validate({"metadata.name", "metadata.namespace"}, own_labels=False)
    assert default.value.message == '"a\\"b" is not a known field selector: only "metadata.name", "metadata.namespace"'
    FieldSelectorExpr().validate(set())


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("metadata.name=foo", "foo"),
        ("metadata.name==foo,status.phase=Running", "foo"),
        ("metadata.name!=foo", None),
        ("metadata.namespace=foo", None),
        ("", None),
    ],
)
def test_exact_name(text: str, name: str | None) -> None:
    assert exact_name(parse_field_selector(text)) == name


def test_exact_name_of_no_selector() -> None:
    assert exact_name(None) is None


def test_field_values_reads_wire_objects() -> None:
    event = {
        "metadata": {"name": "e1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p"},
        "source": {"component": "kubelet"},
        "count": 3,
        "spec": {"unschedulable": False},
        "status": {"phase": None, "conditions": [{"type": "Ready"}]},
    }
    got = field_values(
        event,
        {
            "metadata.name": "metadata.name",
            "source": "source.component",
            "involvedObject.kind": "involvedObject.kind",
            "count": "count",
            "spec.unschedulable": "spec.unschedulable",
            "status.phase": "status.phase",
            "status.conditions": "status.conditions",
            "missing": "nope.deeper",
            "through.scalar": "count.x",
        },
    )
    assert got == {
        "metadata.name": "e1",
        "source": "kubelet",
        "involvedObject.kind": "Pod",
        "count": "3",
        "spec.unschedulable": "false",
        "status.phase": "",
        "status.conditions": "",
        "missing": "",
        "through.scalar": "",
    }
    assert parse_field_selector("spec.unschedulable=false,source=kubelet").matches(got)


def test_label_selector_expr_is_usable_as_a_value() -> None:
    a, b = parse_label_selector("a=1,b in (x)"), parse_label_selector("b in (x), a=1")
    assert a == b and hash(a) == hash(b)
    assert LabelSelectorExpr.nothing() != LabelSelectorExpr()
