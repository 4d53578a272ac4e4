"""``resource.Quantity`` arithmetic: parse ``500m``/``1Gi``/``2e3``, add, compare, and print in
Kubernetes' canonical form, for what sums or compares resource amounts (quota usage, limit
ranges, pod overhead).

Values are exact fractions, so ``0.1 + 0.2`` is ``300m``. The canonical form is Go's
``Quantity.String()``: the format of the written value (binary suffixes stay binary, exponents
stay exponents, the rest decimal SI), the largest suffix that leaves an integer mantissa, and a
value finer than a nano rounded up to one, as Go rounds. A written value is bounded (64
characters, exponents of ±30) so hostile input cannot build huge numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
MAX_LENGTH = 64
MAX_EXPONENT = 30

#: What a written quantity may look like, and what a value that does not is told.
PATTERN = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIXES = [(suffix, 1 << bits) for suffix, bits in sorted(_BINARY.items(), key=lambda s: -s[1])]
NANO = Fraction(1, 10**9)


@dataclass(frozen=True, slots=True)
class Quantity:
    """An amount and the format it prints in."""

    value: Fraction
    format: str = DECIMAL_SI

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.format)

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(self.value - other.value, self.format)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def __gt__(self, other: Quantity) -> bool:
        return self.value > other.value

    def __ge__(self, other: Quantity) -> bool:
        return self.value >= other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def milli_value(self) -> int:
        """``MilliValue``: thousandths, rounded up."""
        return math.ceil(self.value * 1000)

    def int_value(self) -> int:
        """``Value``: the whole amount, rounded up."""
        return math.ceil(self.value)

    def __str__(self) -> str:
        return canonical(self.value, self.format)


def parse(text: Any) -> Quantity:
    """A quantity from its wire form (a string, or a JSON number); ValueError when it is none."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ValueError(f"quantities must be strings or numbers, not {type(text).__name__}")
    written = text if isinstance(text, str) else repr(text)
    match = PATTERN.match(written) if len(written) <= MAX_LENGTH else None
    if match is None:
        raise ValueError(MESSAGE)
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix in _BINARY:
        return Quantity(number * (1 << _BINARY[suffix]), BINARY_SI)
    if suffix[:1] in ("e", "E"):
        exponent = int(suffix[1:])
        if abs(exponent) > MAX_EXPONENT:
            raise ValueError("quantity exponent out of range")
        return Quantity(number * Fraction(10) ** exponent, DECIMAL_EXPONENT)
    return Quantity(number * Fraction(10) ** _DECIMAL[suffix], DECIMAL_SI)


def canonical(value: Fraction, format: str = DECIMAL_SI) -> str:
    """Go's ``Quantity.String()`` of ``value`` in ``format``."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if magnitude.denominator != 1 and (magnitude / NANO).denominator != 1:
        magnitude = Fraction(math.ceil(magnitude / NANO)) * NANO  # Go keeps nano precision, rounding up
    if format == BINARY_SI and magnitude.denominator == 1:
        whole = magnitude.numerator
        for suffix, unit in _BINARY_SUFFIXES:
            if whole >= unit and whole % unit == 0:
                return f"{sign}{whole // unit}{suffix}"
        if whole < 1024:
            return f"{sign}{whole}"
    mantissa, exponent = _decimal(magnitude)
    if format == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{mantissa}{_DECIMAL_SUFFIXES[exponent]}"


def _decimal(magnitude: Fraction) -> tuple[int, int]:
    """The integer mantissa and the largest exponent, a multiple of 3 from -9 to 18, that give it."""
    for exponent in range(18, -10, -3):
        scaled = magnitude / Fraction(10) ** exponent
        if scaled.denominator == 1:
            return scaled.numerator, exponent
    return math.ceil(magnitude / NANO), -9



def display(value: Any) -> str:
    """A written quantity as kubectl's columns print it (``Quantity.String()``); one that does not
    parse, as it is."""
    try:
        return str(parse(value))
    except ValueError:
        return str(value)
