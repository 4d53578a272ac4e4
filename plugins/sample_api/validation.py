"""Validation of Flunders (``pkg/apis/wardle/validation/validation.go``).

Works on the internal type, so the rules read the same whichever version a client wrote. The
first four rules are one if/else chain: only the first that fails is reported. The last one is
checked on its own, so a spec can fail it and one of the others at the same time. Fischers have
no validation beyond their metadata.
"""

from __future__ import annotations

from kplane.api import FieldError, invalid
from kplane.plugins.sample_api.types import FISCHER_REFERENCE_TYPE, FLUNDER_REFERENCE_TYPE, Flunder, FlunderSpec


def validate_flunder(flunder: Flunder) -> list[FieldError]:
    """``ValidateFlunder``: the spec's rules, reported under ``spec.``."""
    return validate_flunder_spec(flunder.spec, "spec")


def validate_flunder_spec(spec: FlunderSpec, path: str) -> list[FieldError]:
    """``ValidateFlunderSpec``."""
    flunder_ref = spec.flunder_reference or ""  # Go strings: unset is ""
    fischer_ref = spec.fischer_reference or ""
    ref_type = spec.reference_type or ""
    errs: list[FieldError] = []

    if flunder_ref and fischer_ref:
        errs.append(invalid(f"{path}.fischerReference", fischer_ref, "cannot be set with flunderReference at the same time"))
    elif flunder_ref and ref_type != FLUNDER_REFERENCE_TYPE:
        errs.append(invalid(f"{path}.flunderReference", flunder_ref, "cannot be set if referenceType is not Flunder"))
    elif fischer_ref and ref_type != FISCHER_REFERENCE_TYPE:
        errs.append(invalid(f"{path}.fischerReference", fischer_ref, "cannot be set if referenceType is not Fischer"))
    elif not fischer_ref and ref_type == FISCHER_REFERENCE_TYPE:
        errs.append(invalid(f"{path}.fischerReference", fischer_ref, "cannot be empty if referenceType is Fischer"))
    elif not flunder_ref and ref_type == FLUNDER_REFERENCE_TYPE:
        errs.append(invalid(f"{path}.flunderReference", flunder_ref, "cannot be empty if referenceType is Flunder"))

    if ref_type and ref_type not in (FLUNDER_REFERENCE_TYPE, FISCHER_REFERENCE_TYPE):
        errs.append(invalid(f"{path}.referenceType", ref_type, "must be Flunder or Fischer"))
    return errs
