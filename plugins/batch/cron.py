"""Cron schedules as CronJobs use them (the ``robfig/cron`` v3 standard parser kube relies on):
five fields (minute, hour, day of month, month, day of week) with ``*``, ``?``, lists, ranges,
steps and month/day names, the descriptors ``@yearly`` ... ``@hourly`` and ``@every <duration>``,
and an optional ``TZ=``/``CRON_TZ=`` prefix. Errors carry robfig's messages, which kube-apiserver
returns for an invalid ``spec.schedule``.

Written here because no maintained cron library is installed, and the parser is small; times are
searched field by field (month, day, hour, minute), in the schedule's local time, at most five
years ahead, as robfig's ``SpecSchedule.Next``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from kplane.api import parse_duration

DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
MONTHS = {name: n for n, name in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
DAYS = {name: n for n, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_BOUNDS = ((0, 59, {}), (0, 23, {}), (1, 31, {}), (1, 12, MONTHS), (0, 6, DAYS))
_TZ_NAME = re.compile(r"^[A-Za-z.\-_0-9+]{1,14}$")
MAX_SPEC = 1024


class ScheduleError(ValueError):
    """A schedule that does not parse; its text is robfig's message."""


def load_zone(name: str) -> tzinfo:
    """An IANA time zone, as Go's ``time.LoadLocation`` (``UTC`` and ``""`` are UTC)."""
    if name in ("", "UTC"):
        return UTC
    if any(part in (".", "..") or part.startswith("-") or not _TZ_NAME.match(part) for part in name.split("/")):
        raise ScheduleError(f"unknown time zone {name}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name}") from None


@dataclass(frozen=True, slots=True)
class Schedule:
    """A parsed schedule: the allowed values of each field, or a constant delay (``@every``)."""

    minutes: frozenset[int] = frozenset()
    hours: frozenset[int] = frozenset()
    days: frozenset[int] = frozenset()
    months: frozenset[int] = frozenset()
    weekdays: frozenset[int] = frozenset()
    any_day: bool = False  # day of month or day of week was * or ?: both must match; else either
    every: float = 0.0
    zone: tzinfo | None = None

    def next(self, after: datetime, zone: tzinfo = UTC) -> datetime | None:
        """The first scheduled time strictly after ``after`` (aware), in ``zone`` unless the
        schedule names its own; None if there is none within five years."""
        if self.every:
            return after.replace(microsecond=0) + timedelta(seconds=self.every)
        zone = self.zone or zone
        local = after.astimezone(zone).replace(tzinfo=None, second=0, microsecond=0) + timedelta(minutes=1)
        limit = local.year + 5
        while local.year <= limit:
            if local.month not in self.months:
                local = (local.replace(day=1, hour=0, minute=0) + timedelta(days=32)).replace(day=1)
                continue
            if not self._day_matches(local):
                local = local.replace(hour=0, minute=0) + timedelta(days=1)
                continue
            if local.hour not in self.hours:
                local = local.replace(minute=0) + timedelta(hours=1)
                continue
            if local.minute not in self.minutes:
                local += timedelta(minutes=1)
                continue
            moment = local.replace(tzinfo=zone)
            if moment.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == local:  # not in a DST gap
                return moment.astimezone(UTC)
            local += timedelta(minutes=1)
        return None

    def _day_matches(self, day: datetime) -> bool:
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        return (dom and dow) if self.any_day else (dom or dow)


def parse(spec: str) -> Schedule:
    """``cron.ParseStandard``: the schedule, or a :class:`ScheduleError` with robfig's message."""
    if len(spec) > MAX_SPEC:
        raise ScheduleError(f"schedule longer than {MAX_SPEC} characters")
    spec = spec.strip()
    if not spec:
        raise ScheduleError("empty spec string")
    zone: tzinfo | None = None
    if spec.startswith(("TZ=", "CRON_TZ=")):
        head, _, spec = spec.partition(" ")
        name = head.partition("=")[2]
        try:
            zone = load_zone(name)
        except ScheduleError as err:
            raise ScheduleError(f"provided bad location {name}: {err}") from None
        spec = spec.strip()
    if spec.startswith("@"):
        if spec.startswith("@every "):
            text = spec[len("@every "):].strip()
            try:
                delay = parse_duration(text)
            except ValueError:
                raise ScheduleError(f"failed to parse duration {spec}: time: invalid duration \"{text}\"") from None
            return Schedule(every=max(float(int(delay)), 1.0), zone=zone)
        if spec not in DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = DESCRIPTORS[spec]
    parts = spec.split()
    if len(parts) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(parts)}: [{' '.join(parts)}]")
    values = [_field(part, low, high, names) for part, (low, high, names) in zip(parts, _BOUNDS)]
    starred = parts[2][:1] in ("*", "?") or parts[4][:1] in ("*", "?")
    return Schedule(*(frozenset(v) for v in values), any_day=starred, zone=zone)


def _field(text: str, low: int, high: int, names: dict[str, int]) -> set[int]:
    allowed: set[int] = set()
    for expr in text.split(","):
        allowed |= _range(expr, low, high, names)
    return allowed


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> set[int]:
    range_and_step = expr.split("/")
    bounds = range_and_step[0].split("-")
    if bounds[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(bounds[0], names)
        if len(bounds) == 1:
            end = start
        elif len(bounds) == 2:
            end = _int_or_name(bounds[1], names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(bounds) == 1 and bounds[0] not in ("*", "?"):
            end = high  # "N/step" is "N-max/step"
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return set(range(start, end + 1, step))


def _int_or_name(text: str, names: dict[str, int]) -> int:
    return names[text.lower()] if text.lower() in names else _int(text)


def _int(text: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]{1,9}", text):
        raise ScheduleError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    value = int(text)
    if value < 0:
        raise ScheduleError(f"negative number ({value}) not allowed: {text}")
    return value
