"""resource.Quantity arithmetic: exact parsing and Kubernetes' canonical form."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kplane.api import quantity


@pytest.mark.parametrize(("written", "canonical"), [
    ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("0.5Gi", "512Mi"), ("1.5Gi", "1536Mi"), ("1500m", "1500m"), ("1.5", "1500m"),
    ("2000", "2k"), ("100", "100"), ("0", "0"), ("-2Ki", "-2Ki"), ("0.1", "100m"), ("12e6", "12e6"), ("1e3", "1e3"),
    ("128974848", "128974848"), ("0.0000000001", "1n"),  # rounded up to nano units
])
def test_canonical_form(written: str, canonical: str) -> None:
    assert str(quantity.parse(written)) == canonical


def test_parse_add_compare() -> None:
    assert quantity.parse("1Ki").value == 1024 and quantity.parse("250m").value == Fraction(1, 4) and quantity.parse(3).value == 3
    assert str(quantity.parse("1Gi") + quantity.parse("512Mi")) == "1536Mi"
    assert quantity.parse("1Gi") > quantity.parse("1000Mi") and quantity.parse("1k") == quantity.parse("1000")
    assert quantity.canonical(Fraction(3, 2)) == "1500m"
    for bad in ("", "1x", "Gi", "1e99", True, float("inf"), "1" * 65):
        with pytest.raises(ValueError):
            quantity.parse(bad)  # type: ignore[arg-type]
