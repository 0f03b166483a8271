"""Which comparison decided a match, reported in a verdict's ``details["method"]``.

Leaf comparisons are memoised and nested deep inside structural ones (a tuple of closed forms),
so instead of threading a result type through every layer, a comparison that matched by a
method worth naming notes it here, and ``judge`` collects the notes of one comparison.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

NUMERIC = "numeric-mp"
SIGNIFICANT_DIGITS = "significant-digits"
# Not a method: two leaves that were equal but for their units (5 g against 5 kg), noted so
# that the verdict can say why it is wrong.
UNITS_DIFFER = "units-differ"
# The most telling method wins when several were used: a numeric acceptance is the one a
# reader of the details must know about.
PRIORITY = (NUMERIC, SIGNIFICANT_DIGITS)

_NOTES: ContextVar[set[str] | None] = ContextVar("math_match_methods", default=None)


def note(method: str | None) -> None:
    """Record that a match (in the comparison being judged) used ``method``."""
    notes = _NOTES.get()
    if method is not None and notes is not None:
        notes.add(method)


@contextmanager
def collect() -> Iterator[set[str]]:
    """Collect the methods noted while the block runs."""
    notes: set[str] = set()
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


def deciding(notes: set[str]) -> str | None:
    """The method to report among those noted, if any deserves it."""
    return next((m for m in PRIORITY if m in notes), None)
