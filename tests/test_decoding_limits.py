"""What a hostile request body or query can make decoding do: every case is a 4xx Status (never a
500, never a stall of the server) and stores nothing; see core/server/decoding.py for the bounds."""

from __future__ import annotations

import asyncio
import base64
import json

import aiohttp
import orjson
import pytest

from kplane.core.server.decoding import MAX_DEPTH
from tests.builders import DEPLOYMENTS, configmap, deployment

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
YAML = "application/yaml"
PATCH_TYPES = ["application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"]


def assert_status(reply, code: int, reason: str, message: str | None = None) -> None:
    assert reply.status == code, reply
    body = reply.body
    assert body["kind"] == "Status" and body["status"] == "Failure", body
    assert body["code"] == code and body["reason"] == reason, body
    if message is not None:
        assert body["message"] == message, body
    assert "Error(" not in body["message"] and "Traceback" not in body["message"], body


@pytest.fixture
async def no_configmaps(api):
    """Asserts after the test that no ConfigMap was stored."""
    yield
    listed = await api.get(CONFIGMAPS)
    assert listed.body["items"] == [], listed


def _yaml_cm(rest: str, name: str = "cm") -> bytes:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\n{rest}\n".encode()


# -- YAML aliases, size, depth ---------------------------------------------------------------------
LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]" for p, x in zip("abcdefgh", "bcdefghi")]
)


async def test_nested_aliases_are_excessive_aliasing(api, no_configmaps):
    """The 562-byte body that stored 16 MB: refused at once, as go-yaml refuses it."""
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm(LAUGHS), content_type=YAML)
    assert_status(reply, 400, "BadRequest", "error converting YAML to JSON: yaml: document contains excessive aliasing")


async def test_ordinary_aliases_and_merge_keys_are_decoded(api):
    body = (
        "apiVersion: v1\nkind: ConfigMap\n"
        "base: &labels {app: web, tier: front}\n"
        "metadata:\n  name: cm\n  labels:\n    <<: *labels\n    tier: back\n"
        "data: {a: &v shared, b: *v}\n"
    )
    reply = await api.post(CONFIGMAPS, raw=body.encode(), content_type=YAML)
    assert reply.status == 201, reply
    assert reply.body["metadata"]["labels"] == {"app": "web", "tier": "back"}  # explicit keys win over <<
    assert reply.body["data"] == {"a": "shared", "b": "shared"}


async def test_an_alias_repeating_a_large_value_is_bounded(api, no_configmaps):
    """Few aliases of one big string stay under go-yaml's ratio, but not under the expanded-size bound."""
    big = "x" * (1024 * 1024)
    rest = f'data:\n  a: &big "{big}"\n' + "".join(f"  k{i}: *big\n" for i in range(8))
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm(rest), content_type=YAML)
    assert_status(reply, 400, "BadRequest")
    assert "expands to more than" in reply.body["message"]


async def test_recursive_and_undefined_aliases(api, no_configmaps):
    itself = await api.post(CONFIGMAPS, raw=_yaml_cm("x: &a [*a]"), content_type=YAML)
    assert_status(itself, 400, "BadRequest", "error converting YAML to JSON: yaml: line 4: anchor 'a' contains itself")
    undefined = await api.post(CONFIGMAPS, raw=_yaml_cm("x: *nowhere"), content_type=YAML)
    assert_status(undefined, 400, "BadRequest", "error converting YAML to JSON: yaml: line 4: anchor 'nowhere' is not defined")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 900])
async def test_deep_yaml_is_refused(api, no_configmaps, depth):
    flow = _yaml_cm("x: " + "[" * depth + "]" * depth)
    reply = await api.post(CONFIGMAPS, raw=flow, content_type=YAML)
    assert_status(reply, 400, "BadRequest", f"error converting YAML to JSON: yaml: exceeded max depth of {MAX_DEPTH}")


async def test_very_deep_flow_yaml_is_refused_by_the_parser(api, no_configmaps):
    """libyaml stops flow nesting on its own past 1000 levels, before any value is built."""
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm("x: " + "[" * 100_000), content_type=YAML)
    assert_status(reply, 400, "BadRequest")
    assert reply.body["message"].startswith("error converting YAML to JSON: while increasing flow level exceeded maximum nesting depth")


async def test_deep_block_yaml_is_refused(api, no_configmaps):
    block = "".join("  " * i + f"k{i}:\n" for i in range(1000))
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm("x:\n" + "\n".join("  " + line for line in block.splitlines())), content_type=YAML)
    assert_status(reply, 400, "BadRequest", f"error converting YAML to JSON: yaml: exceeded max depth of {MAX_DEPTH}")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 300, 2000])
async def test_deep_json_is_refused(api, no_configmaps, depth):
    body = b'{"metadata": {"name": "cm"}, "x": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"
    reply = await api.post(CONFIGMAPS, raw=body)
    assert_status(reply, 400, "BadRequest", f"error decoding JSON: exceeded max depth of {MAX_DEPTH}")


async def test_a_deep_unknown_field_reaches_neither_managed_fields_nor_storage(api):
    """Within the depth bound an unknown field is only a warning, and is dropped everywhere."""
    depth = MAX_DEPTH - 3
    body = b'{"metadata": {"name": "cm"}, "data": {"a": "b"}, "unknownField": ' + b'{"a": ' * depth + b"1" + b"}" * depth + b"}"
    reply = await api.post(CONFIGMAPS, raw=body)
    assert reply.status == 201, reply
    assert reply.headers.getall("Warning") == ['299 - "unknown field \\"unknownField\\""']
    stored = (await api.get(f"{CONFIGMAPS}/cm")).body
    assert "unknownField" not in stored
    assert json.dumps(stored["metadata"]["managedFields"][0]["fieldsV1"]) == '{"f:data": {".": {}, "f:a": {}}}'


# -- values JSON (or Go) cannot hold ----------------------------------------------------------------
@pytest.mark.parametrize("number", ["123456789012345678901234567890", "18446744073709551615", "-9223372036854775809"])
async def test_integers_beyond_64_bits_in_a_typed_field(api, number):
    for raw, content_type in (
        (json.dumps(deployment()).replace('"replicas": 2', f'"replicas": {number}').encode(), "application/json"),
        (f"apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec: {{replicas: {number}}}\n".encode(), YAML),
    ):
        reply = await api.post(DEPLOYMENTS, raw=raw, content_type=content_type)
        assert_status(reply, 400, "BadRequest")
        assert [c["field"] for c in reply.body["details"]["causes"]] == ["spec.replicas"], reply
    assert (await api.get(DEPLOYMENTS)).body["items"] == []


async def test_integers_beyond_64_bits_in_an_unknown_field_are_dropped(api):
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm("x: 123456789012345678901234567890\ny: 0x1ffffffffffffffffffff"), content_type=YAML)
    assert reply.status == 201, reply
    assert reply.headers.getall("Warning") == ['299 - "unknown field \\"x\\""', '299 - "unknown field \\"y\\""']


async def test_yaml_keys_that_are_not_strings(api):
    """Numbers and booleans become JSON member names, as sigs.k8s.io/yaml converts them."""
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm('data: {1: one, true: "yes", 2.5: half}'), content_type=YAML)
    assert reply.status == 201, reply
    assert reply.body["data"] == {"1": "one", "true": "yes", "2.5": "half"}
    labels = await api.post(CONFIGMAPS, raw=_yaml_cm("", name="labelled").replace(b"{name: labelled}", b"{name: labelled, labels: {7: x}}"), content_type=YAML)
    assert labels.status == 201 and labels.body["metadata"]["labels"] == {"7": "x"}, labels


@pytest.mark.parametrize(("key", "what"), [("null", "null"), ("~", "null"), ("[1]", "a list"), ("{a: 1}", "a map")])
async def test_yaml_keys_that_cannot_be_json(api, no_configmaps, key, what):
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm(f"data: {{{key}: v}}"), content_type=YAML)
    assert_status(reply, 400, "BadRequest", f"error converting YAML to JSON: yaml: line 4: a map key must be a string, number or boolean, not {what}")


async def test_yaml_timestamps_stay_strings(api):
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm("data: {day: 2020-01-01, at: 2020-01-01T10:00:00Z}"), content_type=YAML)
    assert reply.status == 201, reply
    assert reply.body["data"] == {"day": "2020-01-01", "at": "2020-01-01T10:00:00Z"}


@pytest.mark.parametrize(("value", "shown"), [(".nan", "NaN"), (".inf", "+Inf"), ("-.inf", "-Inf")])
async def test_yaml_floats_json_cannot_hold(api, no_configmaps, value, shown):
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm(f"x: {value}"), content_type=YAML)
    assert_status(reply, 400, "BadRequest", f"error converting YAML to JSON: json: unsupported value: {shown}")


async def test_yaml_scalar_with_a_wrong_explicit_tag(api, no_configmaps):
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm("x: !!int twelve"), content_type=YAML)
    assert_status(reply, 400, "BadRequest", "error converting YAML to JSON: yaml: line 4: cannot decode !!str `twelve` as a !!int")


# -- duplicate keys and fieldValidation -----------------------------------------------------------
DUPLICATED = b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1", "a": "2"}}'


async def test_duplicate_json_keys_under_strict(api, no_configmaps):
    reply = await api.post(CONFIGMAPS, raw=DUPLICATED, params={"fieldValidation": "Strict"})
    assert_status(reply, 400, "BadRequest",
                  'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a"')


async def test_duplicate_and_unknown_fields_are_listed_together(api, no_configmaps):
    body = b'{"metadata": {"name": "cm", "name": "cm"}, "items": [{"x": 1, "x": 2}], "extra": 1}'
    reply = await api.post(CONFIGMAPS, raw=body, params={"fieldValidation": "Strict"})
    assert_status(reply, 400, "BadRequest",
                  'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
                  'duplicate field "metadata.name", duplicate field "items[0].x", unknown field "items", unknown field "extra"')


async def test_duplicate_json_keys_under_warn_and_ignore(api):
    warned = await api.post(CONFIGMAPS, raw=DUPLICATED)  # Warn by default
    assert warned.status == 201, warned
    assert warned.headers.getall("Warning") == ['299 - "duplicate field \\"data.a\\""']
    assert warned.body["data"] == {"a": "2"}  # the last one wins, as in Go
    ignored = await api.post(CONFIGMAPS, raw=DUPLICATED.replace(b'"cm"', b'"quiet"'), params={"fieldValidation": "Ignore"})
    assert ignored.status == 201 and "Warning" not in ignored.headers, ignored


async def test_duplicate_yaml_keys(api, no_configmaps):
    body = _yaml_cm('data:\n  a: "1"\n  a: "2"')
    strict = await api.post(CONFIGMAPS, raw=body, content_type=YAML, params={"fieldValidation": "Strict"})
    assert_status(strict, 400, "BadRequest",
                  'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: line 6: key "a" already set in map')


async def test_duplicate_yaml_keys_warn(api):
    reply = await api.post(CONFIGMAPS, raw=_yaml_cm('data:\n  a: "1"\n  a: "2"'), content_type=YAML)
    assert reply.status == 201, reply
    assert reply.headers.getall("Warning") == ['299 - "line 6: key \\"a\\" already set in map"']


async def test_duplicate_keys_in_a_patch_under_strict(api):
    await api.post(CONFIGMAPS, configmap("cm"))
    for content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        reply = await api.patch(f"{CONFIGMAPS}/cm", None, raw=b'{"data": {"a": "x", "a": "y"}}', content_type=content_type,
                                params={"fieldValidation": "Strict"})
        # kube-apiserver's patchers: NewInvalid on field "patch" with the strict decoding errors
        assert_status(reply, 422, "Invalid")
        assert reply.body["message"].endswith('strict decoding error: duplicate field "data.a"'), reply
    assert (await api.get(f"{CONFIGMAPS}/cm")).body["data"] == {"a": "b"}


# -- patch documents that cannot patch an object -------------------------------------------------
@pytest.mark.parametrize("document", [b'"str"', b"null", b"1", b"true"])
async def test_merge_patch_that_is_null_or_a_scalar(api, document):
    await api.post(CONFIGMAPS, configmap("cm"))
    reply = await api.patch(f"{CONFIGMAPS}/cm", None, raw=document)
    assert_status(reply, 400, "BadRequest", "Invalid JSON Patch")
    assert (await api.get(f"{CONFIGMAPS}/cm")).body["data"] == {"a": "b"}


@pytest.mark.parametrize(("content_type", "document", "shown"), [
    ("application/merge-patch+json", b"[1, 2]", "[1,2]"),
    ("application/json-patch+json", b'[{"op": "replace", "path": "", "value": 1}]', "1"),
    ("application/json-patch+json", b'[{"op": "replace", "path": "", "value": ["x"]}]', '["x"]'),
])
async def test_patch_whose_result_is_not_an_object(api, content_type, document, shown):
    await api.post(CONFIGMAPS, configmap("cm"))
    reply = await api.patch(f"{CONFIGMAPS}/cm", None, raw=document, content_type=content_type)
    assert_status(reply, 422, "Invalid")
    assert reply.body["details"]["causes"][0]["field"] == "patch"
    assert f'Invalid value: {json.dumps(shown)}' in reply.body["message"], reply
    assert (await api.get(f"{CONFIGMAPS}/cm")).body["data"] == {"a": "b"}


@pytest.mark.parametrize("document", [b'{"metadata": [1]}', b'{"metadata": "x"}'])
async def test_patch_that_makes_metadata_not_an_object(api, document):
    await api.post(CONFIGMAPS, configmap("cm"))
    for content_type in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        reply = await api.patch(f"{CONFIGMAPS}/cm", None, raw=document, content_type=content_type)
        assert_status(reply, 400, "BadRequest", 'ConfigMap in version "v1" cannot be handled as a ConfigMap: metadata must be an object')
    assert (await api.get(f"{CONFIGMAPS}/cm")).body["data"] == {"a": "b"}


# -- PATCH of a missing object ------------------------------------------------------------------------
@pytest.mark.parametrize("content_type", PATCH_TYPES)
@pytest.mark.parametrize(("path", "qualified"), [(LEASES, "leases.coordination.k8s.io"), (CONFIGMAPS, "configmaps")])
async def test_patch_of_a_missing_object_is_not_found(api, content_type, path, qualified):
    """Leases allow create on update (PUT), which led a PATCH into the patcher with nothing to patch."""
    document = b"[]" if content_type == "application/json-patch+json" else b"{}"
    reply = await api.patch(f"{path}/nope", None, raw=document, content_type=content_type)
    assert_status(reply, 404, "NotFound", f'{qualified} "nope" not found')
    assert (await api.get(path)).body["items"] == []


async def test_apply_still_creates_a_missing_lease(api):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "held"}, "spec": {"holderIdentity": "me"}}
    reply = await api.patch(f"{LEASES}/held", lease, content_type="application/apply-patch+yaml", params={"fieldManager": "test"})
    assert reply.status == 201, reply


# -- integer query parameters ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["9223372036854775808", "99999999999999999999999", "-9223372036854775809"])
async def test_integer_query_parameters_beyond_int64(api, value):
    limit = await api.get(CONFIGMAPS, params={"limit": value})
    assert_status(limit, 400, "BadRequest", f'invalid value for limit: "{value}" is out of range for a 64-bit integer')
    timeout = await api.get(CONFIGMAPS, params={"watch": "1", "timeoutSeconds": value})
    assert_status(timeout, 400, "BadRequest", f'invalid value for timeoutSeconds: "{value}" is out of range for a 64-bit integer')
    await api.post(CONFIGMAPS, configmap("kept"))
    grace = await api.delete(f"{CONFIGMAPS}/kept", params={"gracePeriodSeconds": value})
    assert_status(grace, 400, "BadRequest")
    assert (await api.get(f"{CONFIGMAPS}/kept")).status == 200


@pytest.mark.parametrize("value", ["1_0", " 5", "5 ", "١٢", "0x10", "1e3"])
async def test_integer_query_parameters_go_would_not_parse(api, value):
    reply = await api.get(CONFIGMAPS, params={"limit": value})
    assert_status(reply, 400, "BadRequest", f'invalid value for limit: "{value}" is not an integer')


async def test_the_largest_int64_limit_lists_everything(api):
    await api.post(CONFIGMAPS, configmap("one"))
    reply = await api.get(CONFIGMAPS, params={"limit": "9223372036854775807"})
    assert reply.status == 200 and [i["metadata"]["name"] for i in reply.body["items"]] == ["one"], reply
    assert "continue" not in reply.body["metadata"]


# -- base64 []byte fields ---------------------------------------------------------------------------------
PEM = b"-----BEGIN CERTIFICATE-----\n" + b"MIIB" * 60 + b"\n-----END CERTIFICATE-----\n"


async def test_base64_wrapped_at_76_columns_is_accepted(api):
    """As the Kubernetes docs' TLS Secret writes it; Go's decoder skips the line breaks."""
    encoded = base64.encodebytes(PEM).decode()  # 76 columns, "\n" after each line
    assert "\n" in encoded.rstrip("\n")
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
              "data": {"tls.crt": encoded, "tls.key": encoded.replace("\n", "\r\n")}}
    reply = await api.post(SECRETS, secret)
    assert reply.status == 201, reply
    canonical = base64.b64encode(PEM).decode()
    assert reply.body["data"] == {"tls.crt": canonical, "tls.key": canonical}  # read back unwrapped, as Go writes it
    wrapped_yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bin}\nbinaryData:\n  blob: |\n" + "".join(
        f"    {line}\n" for line in encoded.splitlines())
    reply = await api.post(CONFIGMAPS, raw=wrapped_yaml.encode(), content_type=YAML)
    assert reply.status == 201 and reply.body["binaryData"] == {"blob": canonical}, reply


@pytest.mark.parametrize("value", ["not base64!", "YQ", "YQ==\tYQ==", "Y Q==", "YQ==YQ=="])
async def test_other_invalid_base64_is_refused(api, value):
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "bad"}, "data": {"k": value}}
    reply = await api.post(SECRETS, secret)
    assert_status(reply, 400, "BadRequest")
    assert [c["message"] for c in reply.body["details"]["causes"]] == ["Invalid value: illegal base64 data"], reply
    assert (await api.get(SECRETS)).body["items"] == []


# -- large bodies do not stall the server ----------------------------------------------------------
async def test_a_large_yaml_body_is_decoded_without_blocking_the_server(api, server):
    """While a 2 MiB YAML body is decoded, other requests are answered.

    The body ends with a syntax error, so its 400 leaves as soon as decoding ends: decoded on the
    event loop, it would be answered before any request sent after its upload."""
    lines = b"".join(b"  k%d: v\n" % i for i in range(200_000))
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n" + lines + b"  broken: [\n"
    assert 2 * 1024 * 1024 <= len(body) < 3 * 1024 * 1024
    uploaded = asyncio.Event()

    async def chunks():
        for at in range(0, len(body), 65536):
            yield body[at:at + 65536]
        uploaded.set()

    async def post() -> int:
        async with aiohttp.ClientSession(base_url=server.url) as session:
            async with session.post(CONFIGMAPS, data=chunks(), headers={"Content-Type": YAML}) as reply:
                assert (await reply.json())["message"].startswith("error converting YAML to JSON: while parsing")
                return reply.status

    posting = asyncio.create_task(post())
    await uploaded.wait()
    answered = 0
    while not posting.done():
        health = await api.get("/healthz")
        assert health.status == 200
        answered += 0 if posting.done() else 1
    assert await posting == 400
    # Decoded on the loop, at most the one or two sent before decoding began are answered (2 seen);
    # decoded in a thread, dozens to thousands, as the GIL is shared (30 to 2000 seen on 2 cores).
    assert answered >= 10, answered
    assert (await api.get(CONFIGMAPS)).body["items"] == []


async def test_a_large_json_body_is_decoded_as_a_small_one(api):
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
            "data": {f"k{i}": "v" * 16 for i in range(60_000)}}
    reply = await api.post(CONFIGMAPS, raw=orjson.dumps(body))
    assert reply.status == 201, reply
    assert len(reply.body["data"]) == 60_000


@pytest.mark.parametrize("metadata", ['"x"', "[1]", "7"])
async def test_apply_whose_metadata_is_not_an_object(api, no_configmaps, metadata):
    reply = await api.patch(f"{CONFIGMAPS}/cm", None, raw=f'{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {metadata}}}'.encode(),
                            content_type="application/apply-patch+yaml", params={"fieldManager": "test"})
    assert_status(reply, 400, "BadRequest", 'ConfigMap in version "v1" cannot be handled as a ConfigMap: metadata must be an object')
