"""``resource.Quantity`` arithmetic the autoscaler and the metrics API need: a quantity's exact
value, and the canonical forms Kubernetes writes (``250m``, ``2478325n``, ``41628Ki``)."""

from __future__ import annotations

import math
import re
from fractions import Fraction

_FORM = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|([KMGTPE]i|[numkMGTPE]))?$")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
#: Exponents far beyond any real quantity (Go's Quantity saturates; here they are refused).
_MAX_EXPONENT = 40


def parse(value: str | int | float) -> Fraction:
    """The exact value of a quantity; ValueError for one that is not (as validation refuses it)."""
    if isinstance(value, bool):
        raise ValueError(f"quantity {value!r}")
    if isinstance(value, (int, float)):
        return Fraction(value)
    found = _FORM.match(value.strip()) if isinstance(value, str) and len(value) <= 64 else None
    if found is None:
        raise ValueError(f"quantity {value!r}")
    number, exponent, suffix = found.groups()
    if exponent is not None:
        power = int(exponent[1:])
        if abs(power) > _MAX_EXPONENT:
            raise ValueError(f"quantity {value!r}")
        return Fraction(number) * Fraction(10) ** power
    if suffix in _BINARY:
        return Fraction(number) * 2 ** _BINARY[suffix]
    return Fraction(number) * Fraction(10) ** _DECIMAL[suffix or ""]


def milli(value: str | int | float) -> int:
    """``Quantity.MilliValue``: thousandths, rounded up."""
    return math.ceil(parse(value) * 1000)


def decimal(value: Fraction) -> str:
    """A value in the canonical DecimalSI form, at nano precision (rounded up): ``1500m``, ``2k``."""
    nanos = math.ceil(value * 10**9)
    if nanos == 0:
        return "0"
    for suffix, exponent in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        scale = 10 ** (exponent + 9)
        if nanos % scale == 0:
            return f"{nanos // scale}{suffix}"
    raise AssertionError("n divides every nano count")


def binary(value: Fraction) -> str:
    """A byte count in the canonical BinarySI form: ``41628Ki``, ``64Mi``, ``1000``."""
    count = math.ceil(value)
    for suffix, bits in sorted(_BINARY.items(), key=lambda item: -item[1]):
        if count and count % (1 << bits) == 0:
            return f"{count >> bits}{suffix}"
    return str(count)


def formatted(resource: str, value: Fraction) -> str:
    """``value`` written as Kubernetes writes that resource: memory in BinarySI, the rest DecimalSI."""
    return binary(value) if resource == "memory" else decimal(value)


def canonical(value: str | int | float) -> str:
    """``Quantity.String()``: the canonical form in the format it was written in (binary
    suffixes stay binary), as kubectl's columns print quantities; a value that does not parse
    is shown as it is."""
    try:
        exact = parse(value)
    except ValueError:
        return str(value)
    binary_form = isinstance(value, str) and value.endswith("i") and exact.denominator == 1
    return binary(exact) if binary_form else decimal(exact)
