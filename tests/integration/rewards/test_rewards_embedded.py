"""POST /v1/rewards in the embedded mode: local worker pool, SQLite decision log."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from sqlalchemy import select, update

from service.db.models import Decision, RewardRequest, VerifierVersion
from service.db.session import session_scope
from service.execution.items import decision_id
from service.settings import Settings


def group(group_id: str, completions: list[str], ground_truth: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{group_id}-{i}",
            "group_id": group_id,
            "completion": c,
            "ground_truth": ground_truth,
        }
        for i, c in enumerate(completions)
    ]


def decisions(settings: Settings, request_id: str) -> list[Decision]:
    with session_scope(settings) as session:
        query = select(Decision).where(Decision.request_id == request_id)
        return list(session.scalars(query.order_by(Decision.item_index)))


def post(client: Any, body: dict[str, Any], **headers: str) -> dict[str, Any]:
    response = client.post("/v1/rewards", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_group_gets_rewards_statistics_and_advantages(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    right, wrong = "So the answer is $\\boxed{391}$.", "Thus \\boxed{381}."
    items = group("p1", [right] * 5 + [wrong] * 3, "391")
    body = post(embedded_client, {"verifier": "math", "run_id": "exp-1", "step": 3, "items": items})

    results = body["results"]
    assert [r["id"] for r in results] == [f"p1-{i}" for i in range(8)]
    assert [r["status"] for r in results] == ["correct"] * 5 + ["incorrect"] * 3
    assert [r["reward"] for r in results] == [1.0] * 5 + [0.0] * 3
    assert all(r["verifier"] == "math" and r["version"] == "1.0.0" for r in results)
    assert results[0]["components"] == {"accuracy": 1.0}
    assert results[0]["details"]["extracted"] == "391"

    (stats,) = body["groups"]
    assert stats["group_id"] == "p1" and stats["size"] == 8 and not stats["all_same"]
    assert stats["mean"] == pytest.approx(0.625)
    assert stats["std"] == pytest.approx(0.4841, abs=1e-4)
    assert stats["advantages"][0] == pytest.approx(0.7746, abs=1e-3)

    rows = decisions(embedded_settings, body["request_id"])
    assert len(rows) == 8
    assert {str(row.id) for row in rows} == {r["decision_id"] for r in results}
    assert rows[0].run_id == "exp-1" and rows[0].step == 3 and rows[0].group_id == "p1"
    assert rows[0].completion == right and rows[0].ground_truth == "391"
    assert len(rows[0].completion_hash) == 64 and rows[0].worker_id


def test_duplicates_in_a_group_are_verified_once(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    completion = f"After work, \\boxed{{{uuid.uuid4().int % 1000}}}"
    body = post(embedded_client, {"verifier": "math", "items": group("d", [completion] * 4, "7")})
    assert [r["cached"] for r in body["results"]] == [False, True, True, True]
    assert len({r["status"] for r in body["results"]}) == 1
    # A later request with the same (version, completion, ground truth) hits the stored verdict.
    again = post(embedded_client, {"verifier": "math", "items": group("d", [completion], "7")})
    assert again["results"][0]["cached"] is True
    assert again["results"][0]["status"] == body["results"][0]["status"]
    assert len(decisions(embedded_settings, again["request_id"])) == 1


def test_item_verifier_overrides_the_request(embedded_client: Any) -> None:
    items = [{"completion": "\\boxed{2}", "ground_truth": "2", "verifier": "math@1.0.0"}]
    body = post(embedded_client, {"verifier": "nonexistent-is-not-used", "items": items})
    assert body["results"][0]["version"] == "1.0.0"
    assert body["results"][0]["status"] == "correct"


def test_items_without_ids_use_their_index(embedded_client: Any) -> None:
    items = [{"completion": "\\boxed{1}", "ground_truth": "1"} for _ in range(3)]
    body = post(embedded_client, {"verifier": "math", "items": items})
    assert [r["id"] for r in body["results"]] == ["0", "1", "2"]
    assert body["groups"] == []


@pytest.mark.parametrize("ground_truth", [None, "", {"a": 1}, [1, 2]])
def test_unusable_ground_truth_is_invalid_with_null_reward(
    embedded_client: Any, ground_truth: Any
) -> None:
    items = [
        {"group_id": "g", "completion": "\\boxed{1}", "ground_truth": ground_truth},
        {"group_id": "g", "completion": "\\boxed{1}", "ground_truth": "1"},
    ]
    body = post(embedded_client, {"verifier": "math", "items": items})
    bad, good = body["results"]
    assert bad["status"] == "invalid" and bad["reward"] is None
    assert good["status"] == "correct"
    assert body["groups"][0]["advantages"][0] is None
    assert body["groups"][0]["mean"] == 1.0


def test_no_answer_is_unparseable_with_zero_reward(embedded_client: Any) -> None:
    items = [{"completion": "I am not sure how to proceed here.", "ground_truth": "12"}]
    result = post(embedded_client, {"verifier": "math", "items": items})["results"][0]
    assert result["status"] == "unparseable" and result["reward"] == 0.0


def test_idempotency_key_returns_the_same_results_and_logs_once(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    key = f"retry-{uuid.uuid4()}"
    body = {"verifier": "math", "items": group("g", ["\\boxed{5}", "\\boxed{6}"], "5")}
    first = post(embedded_client, body, **{"Idempotency-Key": key})
    second = post(embedded_client, body, **{"Idempotency-Key": key})
    assert first == second
    assert first["request_id"] == key
    assert len(decisions(embedded_settings, key)) == 2


def test_decision_ids_begin_with_the_time_the_request_was_accepted(
    embedded_client: Any,
) -> None:
    body = {"verifier": "math", "items": group("g", ["\\boxed{5}", "\\boxed{6}"], "5")}
    before = time.time_ns() // 1_000_000
    first = post(embedded_client, body)
    between = time.time_ns() // 1_000_000
    second = post(embedded_client, body)
    ids = [[uuid.UUID(r["decision_id"]) for r in page["results"]] for page in (first, second)]
    for made in ids[0]:
        assert made.version == 8
        assert before <= made.int >> 80 <= between
    # The log's primary key takes a later request's rows after an earlier one's.
    assert max(ids[0]) < min(ids[1])


def test_a_retry_of_a_request_claimed_before_ids_held_a_time_keeps_its_ids(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    """After an upgrade, a retried request from before it finds the name-based ids it logged."""
    key = f"old-{uuid.uuid4()}"
    body = {"verifier": "math", "items": group("g", ["\\boxed{5}", "\\boxed{6}"], "5")}
    post(embedded_client, body, **{"Idempotency-Key": key})
    with session_scope(embedded_settings) as session:
        session.execute(
            update(RewardRequest).where(RewardRequest.request_id == key).values(issued_ms=None)
        )
        for row in session.scalars(select(Decision).where(Decision.request_id == key)):
            row.id = decision_id(row.tenant_id, key, row.item_index, row.version_hash)
    legacy = [str(row.id) for row in decisions(embedded_settings, key)]
    assert all(uuid.UUID(made).version == 5 for made in legacy)

    retried = post(embedded_client, body, **{"Idempotency-Key": key})
    assert [r["decision_id"] for r in retried["results"]] == legacy
    assert [r["status"] for r in retried["results"]] == ["correct", "incorrect"]
    assert len(decisions(embedded_settings, key)) == 2


def test_request_id_in_the_body_is_an_idempotency_key(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    request_id = f"body-{uuid.uuid4()}"
    body = {"verifier": "math", "request_id": request_id, "items": group("g", ["\\boxed{5}"], "5")}
    assert post(embedded_client, body) == post(embedded_client, body)
    assert len(decisions(embedded_settings, request_id)) == 1


def test_reusing_a_key_for_another_body_is_a_conflict(embedded_client: Any) -> None:
    key = f"conflict-{uuid.uuid4()}"
    post(
        embedded_client,
        {"verifier": "math", "items": group("g", ["\\boxed{5}"], "5")},
        **{"Idempotency-Key": key},
    )
    response = embedded_client.post(
        "/v1/rewards",
        json={"verifier": "math", "items": group("g", ["\\boxed{6}"], "5")},
        headers={"Idempotency-Key": key},
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_reused"


PATHOLOGICAL = [
    "\\boxed{9^{9^{9^9}}}",
    "\\boxed{2^{2^{40}}}",
    "\\boxed{(10^{100})!}",
    "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
    "\\boxed{" + "7" * 100_000 + "}",
]


def test_pathological_items_are_bounded_and_do_not_spoil_the_batch(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    items = [{"completion": c, "ground_truth": "3"} for c in PATHOLOGICAL]
    items.append({"completion": "so \\boxed{3}", "ground_truth": "3"})
    started = time.monotonic()
    body = post(embedded_client, {"verifier": "math", "items": items})
    elapsed = time.monotonic() - started
    statuses = [r["status"] for r in body["results"]]
    assert all(s in {"timeout", "incorrect", "unparseable"} for s in statuses[:-1]), statuses
    assert statuses[-1] == "correct"
    # Each item is bounded by the per-item limit; together they stay far below the sum of
    # what the inputs would take unbounded (hours).
    assert elapsed < len(items) * (embedded_settings.verify_timeout_s + 1.5)
    # The pool survives: the next request is served normally.
    follow = post(embedded_client, {"verifier": "math", "items": [items[-1]]})
    assert follow["results"][0]["status"] == "correct"


def test_every_version_that_decided_is_recorded(
    embedded_client: Any, embedded_settings: Settings
) -> None:
    body = post(
        embedded_client,
        {"verifier": "math", "items": [{"completion": "\\boxed{1}", "ground_truth": "1"}]},
    )
    (row,) = decisions(embedded_settings, body["request_id"])
    with session_scope(embedded_settings) as session:
        version = session.scalars(
            select(VerifierVersion).where(VerifierVersion.version_hash == row.version_hash)
        ).one()
    assert (version.name, version.version, version.published) == ("math", "1.0.0", False)
    assert "sympy" in version.library_versions


def test_an_answer_written_in_the_prompt_is_flagged(embedded_client: Any) -> None:
    items = [
        {
            "prompt": "Compute 1234 + 1. (Hint: 1235)",
            "completion": "\\boxed{1235}",
            "ground_truth": "1235",
        },
        {"prompt": "Compute 1234 + 1.", "completion": "\\boxed{1235}", "ground_truth": "1235"},
    ]
    leaked, clean = post(embedded_client, {"verifier": "math", "items": items})["results"]
    assert leaked["details"]["answer_leak"] is True and leaked["status"] == "correct"
    assert "answer_leak" not in clean["details"]


def test_the_leak_flag_is_per_prompt_and_ground_truth_within_a_request(
    embedded_client: Any,
) -> None:
    # One chunk: the scan is remembered per prompt and ground truth, and 12 is not 12.0.
    prompt = "A box holds 12 apples. How many are in two boxes, halved?"
    items = [
        {"prompt": prompt, "completion": "\\boxed{12}", "ground_truth": 12},
        {"prompt": prompt, "completion": "The answer is \\boxed{12}.", "ground_truth": 12},
        {"prompt": prompt, "completion": "\\boxed{12}", "ground_truth": 12.0},
        {"prompt": prompt + " ", "completion": "\\boxed{12}", "ground_truth": "12.0"},
    ]
    results = post(embedded_client, {"verifier": "math", "items": items})["results"]
    assert [r["status"] for r in results] == ["correct"] * 4
    assert [r["details"].get("answer_leak", False) for r in results] == [
        True,
        True,
        False,
        False,
    ]


def test_other_built_in_kinds_answer_through_the_api(embedded_client: Any) -> None:
    r1 = "<think>2+2 is 4</think><answer>\\boxed{4}</answer>"
    items = [
        {"completion": r1, "ground_truth": "4", "verifier": "r1_math"},
        {"completion": r1, "ground_truth": None, "verifier": "format"},
        {
            "completion": "no commas here at all",
            "ground_truth": {"instruction_id": ["punctuation:no_comma"], "kwargs": [None]},
            "verifier": "ifeval",
        },
    ]
    composite, structure, instruction = post(embedded_client, {"items": items})["results"]
    assert composite["reward"] == pytest.approx(1.1)
    assert composite["components"]["accuracy"] == 1.0 and composite["components"]["format"] == 1.0
    assert structure["status"] == "correct" and structure["components"] == {"format": 1.0}
    assert instruction["status"] == "correct" and instruction["verifier"] == "ifeval"
