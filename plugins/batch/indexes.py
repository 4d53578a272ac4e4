"""Completion indexes of Indexed Jobs written as kube writes them: ``"0-2,5,7-9"`` (sorted
intervals, ``status.completedIndexes`` and ``successPolicy`` rules)."""

from __future__ import annotations

import bisect
import re

_INTERVAL = re.compile(r"^(\d{1,10})(?:-(\d{1,10}))?$")  # an index is an int32
_END = 10**10  # past every index: a bisect key that sorts after (index, anything)


class Indexes:
    """A set of completion indexes held as sorted, disjoint, non-adjacent inclusive intervals
    (kube's ``orderedIntervals``): "every index below three million" is one pair, so nothing
    here costs more than the intervals written down or the indexes asked for."""

    __slots__ = ("intervals",)

    def __init__(self, intervals: list[tuple[int, int]] | None = None) -> None:
        self.intervals: list[tuple[int, int]] = intervals or []

    @classmethod
    def parse(cls, text: str | None, completions: int) -> Indexes:
        """The indexes below ``completions`` that ``text`` names; what does not parse is left out."""
        found: list[tuple[int, int]] = []
        for part in (text or "").split(","):
            match = _INTERVAL.match(part.strip())
            if match is None:
                continue
            first = int(match.group(1))
            last = min(int(match.group(2)) if match.group(2) else first, completions - 1)
            if first <= last:
                found.append((first, last))
        found.sort()
        merged: list[tuple[int, int]] = []
        for first, last in found:
            if merged and first <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], last))
            else:
                merged.append((first, last))
        return cls(merged)

    def _at(self, index: int) -> int:
        """The position of the last interval starting at or before ``index`` (-1 if none)."""
        return bisect.bisect_right(self.intervals, (index, _END)) - 1

    def __contains__(self, index: object) -> bool:
        if not isinstance(index, int):
            return False
        at = self._at(index)
        return at >= 0 and self.intervals[at][1] >= index

    def __len__(self) -> int:
        return sum(last - first + 1 for first, last in self.intervals)

    def add(self, index: int) -> None:
        if index in self:
            return
        at = self._at(index)
        joins_left = at >= 0 and self.intervals[at][1] == index - 1
        joins_right = at + 1 < len(self.intervals) and self.intervals[at + 1][0] == index + 1
        if joins_left and joins_right:
            self.intervals[at:at + 2] = [(self.intervals[at][0], self.intervals[at + 1][1])]
        elif joins_left:
            self.intervals[at] = (self.intervals[at][0], index)
        elif joins_right:
            self.intervals[at + 1] = (index, self.intervals[at + 1][1])
        else:
            self.intervals.insert(at + 1, (index, index))

    def first_missing(self, count: int, below: int, skip: set[int]) -> list[int]:
        """The lowest ``count`` indexes below ``below`` in neither this set nor ``skip`` (kube's
        ``firstPendingIndexes``): the walk jumps over intervals, so it is as long as the answer."""
        found: list[int] = []
        index, at = 0, 0
        while len(found) < count and index < below:
            if at < len(self.intervals) and self.intervals[at][0] <= index:
                index = max(index, self.intervals[at][1] + 1)
                at += 1
                continue
            if index not in skip:
                found.append(index)
            index += 1
        return found

    def __str__(self) -> str:
        return ",".join(str(first) if first == last else f"{first}-{last}" for first, last in self.intervals)


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
