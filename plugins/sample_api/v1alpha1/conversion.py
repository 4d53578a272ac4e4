"""Hand-written conversion of the v1alpha1 Flunder (``pkg/apis/wardle/v1alpha1/conversion.go``).

v1alpha1 names one ``reference`` and says with ``reference_type`` what it is; the internal type
(and v1beta1) keeps one field per type::

    v1alpha1 {reference: "x", reference_type: "Fischer"}  <->  internal {fischer_reference: "x",
                                                                         reference_type: "Fischer"}

Both functions take and return Python-named dicts of the whole object; only ``spec`` differs.
As in the original, a type other than Flunder or Fischer converts to no reference at all (so a
v1alpha1 ``referenceType: Other`` is dropped rather than rejected), and an internal spec without
a type has no v1alpha1 form.
"""

from __future__ import annotations

from typing import Any

from kplane.plugins.sample_api.types import FISCHER_REFERENCE_TYPE, FLUNDER_REFERENCE_TYPE


def flunder_to_internal(flunder: dict[str, Any]) -> dict[str, Any]:
    """``Convert_v1alpha1_FlunderSpec_To_wardle_FlunderSpec``: relies on defaulting having run."""
    spec = flunder.get("spec") or {}
    internal: dict[str, Any] = {}
    if spec.get("reference_type") == FLUNDER_REFERENCE_TYPE:
        internal = {"reference_type": FLUNDER_REFERENCE_TYPE, "flunder_reference": spec.get("reference")}
    elif spec.get("reference_type") == FISCHER_REFERENCE_TYPE:
        internal = {"reference_type": FISCHER_REFERENCE_TYPE, "fischer_reference": spec.get("reference")}
    return {**flunder, "spec": internal}


def flunder_from_internal(flunder: dict[str, Any]) -> dict[str, Any]:
    """``Convert_wardle_FlunderSpec_To_v1alpha1_FlunderSpec``: the reference the type points at."""
    spec = flunder.get("spec") or {}
    versioned: dict[str, Any] = {}
    if spec.get("reference_type") == FLUNDER_REFERENCE_TYPE:
        versioned = {"reference": spec.get("flunder_reference"), "reference_type": FLUNDER_REFERENCE_TYPE}
    elif spec.get("reference_type") == FISCHER_REFERENCE_TYPE:
        versioned = {"reference": spec.get("fischer_reference"), "reference_type": FISCHER_REFERENCE_TYPE}
    return {**flunder, "spec": versioned}
