"""Decision ids: name-based, and led by the request's acceptance time when it has one."""

from __future__ import annotations

import uuid

from service.execution.items import DECISION_NAMESPACE, decision_id

ISSUED_MS = 1_795_000_000_123  # 2026-11-18, in milliseconds


def test_an_id_with_a_time_is_version_8_and_begins_with_that_time() -> None:
    made = decision_id("team", "request", 3, "f" * 64, ISSUED_MS)
    assert made.version == 8
    assert made.variant == uuid.RFC_4122
    assert made.int >> 80 == ISSUED_MS


def test_the_same_inputs_give_the_same_id() -> None:
    assert decision_id("team", "request", 3, "v", ISSUED_MS) == decision_id(
        "team", "request", 3, "v", ISSUED_MS
    )


def test_every_part_of_the_name_changes_the_id() -> None:
    base = decision_id("team", "request", 3, "v", ISSUED_MS)
    others = {
        decision_id("other", "request", 3, "v", ISSUED_MS),
        decision_id("team", "other", 3, "v", ISSUED_MS),
        decision_id("team", "request", 4, "v", ISSUED_MS),
        decision_id("team", "request", 3, "w", ISSUED_MS),
    }
    assert base not in others
    assert len(others) == 4


def test_ids_grow_with_the_time_their_requests_were_accepted() -> None:
    earlier = [decision_id("team", f"r{i}", i, "v", ISSUED_MS) for i in range(200)]
    later = [decision_id("team", f"r{i}", i, "v", ISSUED_MS + 1) for i in range(200)]
    assert max(earlier) < min(later)


def test_without_a_time_the_id_is_the_name_based_one_of_older_requests() -> None:
    name = "team\x00request\x003\x00v"
    assert decision_id("team", "request", 3, "v") == uuid.uuid5(DECISION_NAMESPACE, name)
    assert decision_id("team", "request", 3, "v").version == 5


def test_the_hash_part_is_the_name_based_ids_low_bits() -> None:
    # Two requests accepted in the same millisecond still get distinct ids from their names.
    legacy = decision_id("team", "request", 3, "v")
    timed = decision_id("team", "request", 3, "v", ISSUED_MS)
    kept = ~((0xF << 76) | (0b11 << 62)) & ((1 << 80) - 1)
    assert timed.int & kept == legacy.int & kept
