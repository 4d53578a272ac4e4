"""resource.Quantity arithmetic: exact parsing and Kubernetes' canonical form."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kplane.api import canonical_quantity, format_quantity, parse_quantity


@pytest.mark.parametrize(("written", "canonical"), [
    ("1Gi", "1Gi"), ("1024Mi", "1Gi"), ("0.5Gi", "512Mi"), ("1.5Gi", "1536Mi"), ("1500m", "1500m"), ("1.5", "1500m"),
    ("2000", "2k"), ("100", "100"), ("0", "0"), ("-2Ki", "-2Ki"), ("0.1", "100m"), ("12e6", "12e6"), ("1e3", "1e3"),
    ("128974848", "128974848"), ("0.0000000001", "1n"),  # rounded up to nano units
])
def test_canonical_form(written: str, canonical: str) -> None:
    assert canonical_quantity(written) == canonical


def test_parse_and_format() -> None:
    assert parse_quantity("1Ki") == 1024 and parse_quantity("250m") == Fraction(1, 4) and parse_quantity(3) == 3
    assert format_quantity(parse_quantity("1Gi") + parse_quantity("512Mi"), "BinarySI") == "1536Mi"
    assert format_quantity(Fraction(3, 2)) == "1500m"
    for bad in ("", "1x", "Gi", "1e99", True, float("inf"), "1" * 65):
        with pytest.raises(ValueError):
            parse_quantity(bad)  # type: ignore[arg-type]
