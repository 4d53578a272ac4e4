"""wardle.example.com conversions: property round trips through every version, and golden files.

The counterpart of sample-apiserver's ``pkg/apis/wardle/install/roundtrip_test.go``: objects go
through the scheme exactly as the server moves them (``decode`` for a client's body, with
defaulting; ``encode`` for an answer or the stored form; ``convert`` for reads of stored data).
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kplane.plugins.sample_api as sample_api
from kplane.core.runtime.scheme import ResourceType, Scheme
from kplane.plugins.sample_api.validation import validate_flunder

GROUP = "wardle.example.com"
GOLDEN = Path(__file__).parent / "fixtures" / "wardle"


def wardle_scheme() -> Scheme:
    """A scheme with just this plugin, registered by its own hooks as the server calls them."""
    scheme = Scheme()
    sample_api.kplane_register_types(scheme, "sample_api")
    sample_api.kplane_register_conversions(scheme)
    assert scheme.check() == []
    return scheme


SCHEME = wardle_scheme()
FLUNDERS: ResourceType = SCHEME.get(GROUP, "flunders")  # type: ignore[assignment]
FISCHERS: ResourceType = SCHEME.get(GROUP, "fischers")  # type: ignore[assignment]


# -- generated objects ------------------------------------------------------------------------

names = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
label_values = st.from_regex(r"([a-z0-9]([a-z0-9._-]{0,10}[a-z0-9])?)?", fullmatch=True)


@st.composite
def metadata(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": draw(names), "namespace": draw(names)}
    if draw(st.booleans()):
        meta["resourceVersion"] = str(draw(st.integers(1, 10**9)))
    meta["creationTimestamp"] = None  # a metav1.Time value: Go writes it, null when unset
    labels = draw(st.dictionaries(names, label_values, max_size=3))
    if labels:
        meta["labels"] = labels
    annotations = draw(st.dictionaries(names, st.text(max_size=20), max_size=2))
    if annotations:
        meta["annotations"] = annotations
    return meta


def flunder(version: str, meta: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Flunder", "metadata": meta, "spec": spec, "status": {}}


@st.composite
def valid_v1alpha1_flunders(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A valid v1alpha1 Flunder as a client may write it, and the same after defaulting."""
    reference = draw(names)
    written, defaulted = draw(st.sampled_from([
        ({}, {}),
        ({"reference": reference}, {"reference": reference, "referenceType": "Flunder"}),
        ({"reference": reference, "referenceType": ""}, {"reference": reference, "referenceType": "Flunder"}),
        ({"reference": reference, "referenceType": "Flunder"}, {"reference": reference, "referenceType": "Flunder"}),
        ({"reference": reference, "referenceType": "Fischer"}, {"reference": reference, "referenceType": "Fischer"}),
    ]))
    meta = draw(metadata())
    return flunder("v1alpha1", meta, written), flunder("v1alpha1", meta, defaulted)


# -- properties -------------------------------------------------------------------------------

@given(valid_v1alpha1_flunders())
def test_v1alpha1_to_v1beta1_and_back(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """v1alpha1 -> internal -> v1beta1 -> internal -> v1alpha1 gives back the defaulted object."""
    written, defaulted = case
    internal, _ = FLUNDERS.decode(copy.deepcopy(written), "v1alpha1")
    assert validate_flunder(internal) == []
    beta = FLUNDERS.encode(internal, "v1beta1")
    internal_again, _ = FLUNDERS.decode(copy.deepcopy(beta), "v1beta1")
    assert internal_again == internal
    assert FLUNDERS.encode(internal_again, "v1alpha1") == defaulted
    # the read path (stored v1alpha1 bytes served in another version) agrees
    assert FLUNDERS.convert(defaulted, "v1alpha1", "v1beta1") == beta
    assert FLUNDERS.convert(beta, "v1beta1", "v1alpha1") == defaulted


@given(metadata(), names, st.sampled_from(["none", "Flunder", "Fischer"]))
def test_v1beta1_to_v1alpha1_and_back(meta: dict[str, Any], reference: str, kind: str) -> None:
    """v1beta1 -> internal -> v1alpha1 -> internal -> v1beta1 gives back the same object."""
    spec = {} if kind == "none" else {f"{kind.lower()}Reference": reference, "referenceType": kind}
    beta = flunder("v1beta1", meta, spec)
    internal, _ = FLUNDERS.decode(copy.deepcopy(beta), "v1beta1")
    assert validate_flunder(internal) == []
    alpha = FLUNDERS.encode(internal, "v1alpha1")
    internal_again, _ = FLUNDERS.decode(copy.deepcopy(alpha), "v1alpha1")
    assert internal_again == internal
    assert FLUNDERS.encode(internal_again, "v1beta1") == beta
    assert FLUNDERS.convert(beta, "v1beta1", "v1alpha1") == alpha


# -- every small spec ------------------------------------------------------------------------
# A handful of values per field covers every branch of validation and conversion, so these go
# through all combinations rather than samples.

REFERENCES = [None, "", "a", "my-first-fischer"]
REFERENCE_TYPES = [None, "", "Flunder", "Fischer", "Other", "flunder"]


def spec_of(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def without_empty(spec: dict[str, Any]) -> dict[str, Any]:
    """Go's ``omitempty``: an empty string is the same as no value."""
    return {k: v for k, v in spec.items() if v != ""}


def test_every_valid_v1beta1_spec_survives_the_storage_version() -> None:
    """Any spec that passes validation keeps its meaning through v1alpha1, the version it is
    stored in (which is why updates are validated too: see plugins/sample_api/strategy.py)."""
    valid = 0
    for flunder_ref, fischer_ref, ref_type in itertools.product(REFERENCES, REFERENCES, REFERENCE_TYPES):
        spec = spec_of(flunderReference=flunder_ref, fischerReference=fischer_ref, referenceType=ref_type)
        internal, _ = FLUNDERS.decode(flunder("v1beta1", {"name": "f"}, spec), "v1beta1")
        if validate_flunder(internal):
            continue
        valid += 1
        stored = FLUNDERS.encode(internal, "v1alpha1")
        read = FLUNDERS.convert(stored, "v1alpha1", "v1beta1")
        assert without_empty(read["spec"]) == without_empty(spec), spec
    assert valid == 8 + 4 + 4  # no reference at all; a Flunder reference; a Fischer reference


def test_an_invalid_spec_would_not_survive_the_storage_version() -> None:
    """Why: v1alpha1 has one reference, so the second one of an invalid spec would be lost."""
    spec = {"flunderReference": "a", "fischerReference": "b", "referenceType": "Flunder"}
    internal, _ = FLUNDERS.decode(flunder("v1beta1", {"name": "f"}, spec), "v1beta1")
    assert [e.field for e in validate_flunder(internal)] == ["spec.fischerReference"]
    stored = FLUNDERS.encode(internal, "v1alpha1")
    assert FLUNDERS.convert(stored, "v1alpha1", "v1beta1")["spec"] == {"flunderReference": "a", "referenceType": "Flunder"}


def test_any_accepted_v1alpha1_spec_is_stored_as_a_fixed_point() -> None:
    """Whatever v1alpha1 spec is accepted (including the original's quirk of dropping an unknown
    referenceType), what is stored decodes back to the same internal object, in both versions."""
    accepted = 0
    for reference, ref_type in itertools.product(REFERENCES, REFERENCE_TYPES):
        spec = spec_of(reference=reference, referenceType=ref_type)
        internal, _ = FLUNDERS.decode(flunder("v1alpha1", {"name": "f"}, spec), "v1alpha1")
        if validate_flunder(internal):
            continue
        accepted += 1
        stored = FLUNDERS.encode(internal, "v1alpha1")
        assert FLUNDERS.decode(copy.deepcopy(stored), "v1alpha1")[0] == internal, spec
        beta = FLUNDERS.convert(stored, "v1alpha1", "v1beta1")
        assert FLUNDERS.decode(beta, "v1beta1")[0] == internal, spec
    # refused: a Flunder or Fischer type without a name to refer to (2 x 2)
    assert accepted == len(REFERENCES) * len(REFERENCE_TYPES) - 4


# -- golden files -----------------------------------------------------------------------------

def dump(wire: dict[str, Any]) -> bytes:
    return orjson.dumps(wire, option=orjson.OPT_INDENT_2) + b"\n"


@pytest.mark.parametrize(("resource", "version", "file"), [
    (FLUNDERS, "v1alpha1", "flunder-v1alpha1.json"),
    (FLUNDERS, "v1beta1", "flunder-v1beta1.json"),
    (FISCHERS, "v1alpha1", "fischer-v1alpha1.json"),
])
def test_golden_files_decode_and_encode_byte_stable(resource: ResourceType, version: str, file: str) -> None:
    golden = (GOLDEN / file).read_bytes()
    obj, warnings = resource.decode(orjson.loads(golden), version)
    assert warnings == []
    assert dump(resource.encode(obj, version)) == golden
    # what the server sends is the same document, compact
    assert orjson.dumps(resource.encode(obj, version)) == orjson.dumps(orjson.loads(golden))


def test_golden_flunder_is_the_same_object_in_both_versions() -> None:
    alpha, beta = (GOLDEN / "flunder-v1alpha1.json").read_bytes(), (GOLDEN / "flunder-v1beta1.json").read_bytes()
    assert dump(FLUNDERS.convert(orjson.loads(alpha), "v1alpha1", "v1beta1")) == beta
    assert dump(FLUNDERS.convert(orjson.loads(beta), "v1beta1", "v1alpha1")) == alpha
    internal, _ = FLUNDERS.decode(orjson.loads(alpha), "v1alpha1")
    assert dump(FLUNDERS.encode(internal, "v1beta1")) == beta
