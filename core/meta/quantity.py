"""``resource.Quantity``: parsing to an exact number and writing it back in canonical form.

Quantities stay as written in objects (``fields.Quantity``); code that compares or adds them
(capacity against a request, quota usage, limit ranges, metrics) parses them here into a
``Fraction`` and formats results as Kubernetes does (``Quantity.String``): the largest suffix
that keeps the number whole, binary (``Ki`` ... ``Ei``) for quantities written in binary,
decimal (``m``, ``k``, ``M`` ...) otherwise, rounded up to nano units.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

#: What a quantity may look like (the number, then a binary or decimal suffix or an exponent).
PATTERN = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?$")
MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
MAX_LENGTH = 64
BINARY_SI, DECIMAL_SI, DECIMAL_EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"

_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of ``value``; ValueError (with Kubernetes' message) when it is no quantity."""
    if isinstance(value, bool):
        raise ValueError(MESSAGE)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(MESSAGE)
        return Fraction(value)
    match = PATTERN.match(value) if isinstance(value, str) and len(value) <= MAX_LENGTH else None
    if match is None:
        raise ValueError(MESSAGE)
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return number * (1 << _BINARY[suffix])
    exponent = int(suffix[1:]) if suffix[:1] in ("e", "E") else _DECIMAL[suffix]
    if abs(exponent) > 30:
        raise ValueError("quantity exponent out of range")
    return number * Fraction(10) ** exponent


def format_of(value: str | int | float) -> str:
    """The format a quantity was written in: binary suffixes give BinarySI, exponents DecimalExponent."""
    text = str(value)
    if text[-2:] in _BINARY:
        return BINARY_SI
    return DECIMAL_EXPONENT if re.search(r"[eE][+-]?\d+$", text) else DECIMAL_SI


def format_quantity(value: Fraction | int, fmt: str = DECIMAL_SI) -> str:
    """``value`` as Kubernetes writes it in ``fmt`` (``Quantity.String``)."""
    value = Fraction(value)
    sign, value = ("-", -value) if value < 0 else ("", value)
    if fmt == BINARY_SI and value.denominator == 1 and value >= 1024:
        for suffix, shift in sorted(_BINARY.items(), key=lambda item: -item[1]):
            if value.numerator % (1 << shift) == 0:
                return f"{sign}{value.numerator >> shift}{suffix}"
    nanos = math.ceil(value * 10**9)
    if nanos == 0:
        return "0"
    for suffix, exponent in sorted(_DECIMAL.items(), key=lambda item: -item[1]):
        unit = 10 ** (exponent + 9)
        if nanos % unit == 0:
            if fmt == DECIMAL_EXPONENT:
                return f"{sign}{nanos // unit}" + (f"e{exponent}" if exponent else "")
            return f"{sign}{nanos // unit}{suffix}"
    raise AssertionError("unreachable: every count of nanos is whole in nanos")


def canonical(value: str | int | float) -> str:
    """A quantity rewritten as Kubernetes prints it (``1024Mi`` -> ``1Gi``, ``1500m`` stays)."""
    return format_quantity(parse_quantity(value), format_of(value))
