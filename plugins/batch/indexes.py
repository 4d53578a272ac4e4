"""Completion indexes of Indexed Jobs written as kube writes them: ``"0-2,5,7-9"`` (sorted
intervals, ``status.completedIndexes`` and ``successPolicy`` rules)."""

from __future__ import annotations

import re

_INTERVAL = re.compile(r"^(\d{1,9})(?:-(\d{1,9}))?$")


def format_indexes(indexes: set[int] | list[int]) -> str:
    out: list[str] = []
    ordered = sorted(set(indexes))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


def parse_indexes(text: str | None, completions: int) -> set[int]:
    """The indexes below ``completions`` that ``text`` names; what does not parse is left out."""
    found: set[int] = set()
    for part in (text or "").split(","):
        match = _INTERVAL.match(part.strip())
        if match is None:
            continue
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        found.update(range(first, min(last, completions - 1) + 1))
    return found


def interval_error(text: str, completions: int) -> str | None:
    """Why ``text`` is not sorted, non-overlapping intervals below ``completions``; None if it is."""
    previous = -1
    for part in text.split(","):
        match = _INTERVAL.match(part)
        if match is None:
            return f"error parsing index \"{part}\""
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        if first > last or first <= previous:
            return "non-increasing order, previous: %d, current: %d" % (previous, first)
        if last >= completions:
            return f"too large: {last}"
        previous = last
    return None
