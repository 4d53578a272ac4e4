"""wardle.example.com/v1alpha1 defaulting (``pkg/apis/wardle/v1alpha1/defaults.go``).

Defaulters run on the decoded, Python-named data of a request body, before conversion.
"""

from __future__ import annotations

from typing import Any

from kplane.plugins.sample_api.types import FLUNDER_REFERENCE_TYPE


def set_defaults_flunder(flunder: dict[str, Any]) -> None:
    """A ``reference`` without a ``referenceType`` refers to a Flunder (``SetDefaults_FlunderSpec``)."""
    spec = flunder.get("spec")
    if spec and spec.get("reference") and not spec.get("reference_type"):
        spec["reference_type"] = FLUNDER_REFERENCE_TYPE
