"""Times of day. ``2:30 PM`` is not ``1:15 PM``, though the ratios 2:30 and 1:15 are equal:
clock times compare as minutes since midnight.

A clock time is ``H:MM`` with exactly two minute digits (below 60), maybe followed by AM or
PM (any case, with or without dots and spaces, in or out of ``\\text{}``). Two sides compare
as times when either has AM/PM or both are clock times; 12-hour times read as 24-hour ones
(``3:00 PM`` is ``15:00``, ``12:00 AM`` is ``0:00``). A bare ``H:MM`` with ``1 <= H <= 12``
answers either reading of a side with AM/PM (``2:30`` is ``2:30 PM``, and ``2:30 AM``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .normalize import unwrap_text_commands

_CLOCK = re.compile(
    r"^(?P<hours>\d{1,2})\s*:\s*(?P<minutes>[0-5]\d)\s*(?:(?P<half>[AaPp])\.?\s*[Mm]\.?)?$"
)
_HALF_DAY = 12 * 60


@dataclass(frozen=True, slots=True)
class Clock:
    """A time of day: the minutes since midnight it may mean, and how it was written."""

    readings: frozenset[int]
    written: int
    meridiem: bool


def read_clock(text: str) -> Clock | None:
    """The time of day ``text`` writes, or None when it is not one."""
    if ":" not in text:
        return None
    m = _CLOCK.match(unwrap_text_commands(text).strip() if "\\text{" in text else text.strip())
    if m is None:
        return None
    hours, minutes = int(m.group("hours")), int(m.group("minutes"))
    half = m.group("half")
    if half:
        if not 1 <= hours <= 12:
            return None
        value = (hours % 12) * 60 + minutes + (_HALF_DAY if half in "Pp" else 0)
        return Clock(frozenset({value}), value, True)
    if hours > 23:
        return None
    written = hours * 60 + minutes
    readings = {written}
    if 1 <= hours <= 12:
        morning = (hours % 12) * 60 + minutes
        readings |= {morning, morning + _HALF_DAY}
    return Clock(frozenset(readings), written, False)


def clocks_same(g_text: str, a_text: str) -> bool | None:
    """Whether two leaves write the same time of day; None when they are not compared as
    times (then they are compared as numbers or ratios)."""
    g, a = read_clock(g_text), read_clock(a_text)
    if g is None or a is None:
        # A time written with AM/PM is answered by a time only (never by the ratio 1/15).
        other = g or a
        return False if other is not None and other.meridiem else None
    if not (g.meridiem or a.meridiem):
        return g.written == a.written
    return bool(g.readings & a.readings)
