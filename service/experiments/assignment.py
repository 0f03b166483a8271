"""Which traffic an experiment takes and which arm decides it: pure functions of identifiers.

A split experiment hashes the group id (with the experiment's id, so two experiments split
independently): the same group goes to the same arm in every request, and a group is never
split across arms. An item without a group is a unit of its own, hashed from its request id
and its index in the request.
"""

from __future__ import annotations

import hashlib
from typing import Literal

Arm = Literal["control", "treatment"]
ARMS: tuple[Arm, ...] = ("control", "treatment")
_SCALE = float(2**64)


def unit_key(request_id: str, group_id: str | None, index: int) -> str:
    """What a split hashes: the group, or an item of its own (request id and index)."""
    if group_id is not None:
        return f"group\x00{group_id}"
    return f"item\x00{request_id}\x00{index}"


def arm_for(experiment_id: str, unit: str, split: float) -> Arm:
    """The arm of a unit: treatment for a ``split`` share of units, stably."""
    digest = hashlib.sha256(f"{experiment_id}\x00{unit}".encode("utf-8", "surrogatepass"))
    position = int.from_bytes(digest.digest()[:8], "big") / _SCALE
    return "treatment" if position < split else "control"


def filter_matches(run_id_filter: str | None, run_id: str | None) -> bool:
    """An experiment's filter takes a request: every request, or the requests of one run."""
    return run_id_filter is None or run_id_filter == run_id


def filters_overlap(first: str | None, second: str | None) -> bool:
    """Whether two experiments' filters could take the same request."""
    return first is None or second is None or first == second
