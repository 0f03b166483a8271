"""What the experiment tests share: a team of their own, the version with a changed behaviour,
mixed traffic, and counts taken straight from the database."""

from __future__ import annotations

import statistics
import uuid
from collections import Counter, defaultdict
from typing import Any

import httpx
from sqlalchemy import select

from service.auth.service import AuthService
from service.db.models import Decision, ExperimentAssignment, ShadowDecision
from service.db.session import session_scope
from service.experiments.stats import advantage_sign
from service.settings import Settings
from tests.support import AUTH

TEAM_SCOPES = ["rewards:write", "audit:read", "verifiers:admin"]
# math@1.1.0 accepts a number within 1% of the ground truth; 1.0.0 wants it exact.
TOLERANT = {"version": "1.1.0", "kind": "math", "config": {"rel_tol": 0.01}}
# Group patterns over the ground truth 200 (1.0.0's rewards → 1.1.0's):
GROUP_ANSWERS = (
    ("200", "201", "250", "250"),  # [1,0,0,0] → [1,1,0,0]: an advantage changes sign
    ("201", "202", "250", "260"),  # all incorrect → mixed: the group gains a signal
    ("200", "200", "201", "201"),  # mixed → all correct: the group loses its signal
    ("200", "250", "260", "270"),  # the same for both
)


def team_client(base_url: str, settings: Settings, scopes: list[str] = TEAM_SCOPES) -> httpx.Client:
    """A client with a key of a new tenant: its experiments and decisions are its own."""
    tenant = f"team-{uuid.uuid4().hex[:10]}"
    with session_scope(settings) as session:
        _, key = AuthService(session).create_key(tenant, scopes)
    return httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def publish_tolerant(base_url: str) -> None:
    """The operator (who owns math) publishes 1.1.0; publishing it again is the same version."""
    response = httpx.post(f"{base_url}/v1/verifiers/math/versions", json=TOLERANT, headers=AUTH)
    assert response.status_code == 201, response.text


def mixed_items(tag: str, groups: int) -> list[dict[str, Any]]:
    """``groups`` groups of four, cycling through GROUP_ANSWERS, every completion distinct."""
    items = []
    for group in range(groups):
        for position, answer in enumerate(GROUP_ANSWERS[group % len(GROUP_ANSWERS)]):
            items.append(
                {
                    "id": f"{tag}-{group}-{position}",
                    "group_id": f"{tag}-g{group}",
                    "completion": f"Case {tag}/{group}/{position}: so \\boxed{{{answer}}}",
                    "ground_truth": "200",
                }
            )
    return items


def post_rewards(client: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/v1/rewards", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def shadow_pairs(settings: Settings, experiment_id: str) -> list[tuple[Decision, ShadowDecision]]:
    """Every shadow decision of an experiment with the control decision it is linked to."""
    with session_scope(settings) as session:
        query = (
            select(Decision, ShadowDecision)
            .join(ShadowDecision, ShadowDecision.control_decision_id == Decision.id)
            .where(ShadowDecision.experiment_id == uuid.UUID(experiment_id))
        )
        return [(decision, shadow) for decision, shadow in session.execute(query)]


def assigned(settings: Settings, experiment_id: str) -> list[tuple[str, Decision]]:
    with session_scope(settings) as session:
        query = (
            select(ExperimentAssignment.arm, Decision)
            .join(Decision, Decision.id == ExperimentAssignment.decision_id)
            .where(ExperimentAssignment.experiment_id == uuid.UUID(experiment_id))
        )
        return [(arm, decision) for arm, decision in session.execute(query)]


def expected_paired_report(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    """What a paired report must say, computed here from the rows themselves (control first,
    treatment second; each with .status, .reward, and the control with its group)."""
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    deltas = []
    groups: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for control, treatment in pairs:
        confusion[control.status][treatment.status] += 1
        if control.reward is not None and treatment.reward is not None:
            deltas.append(treatment.reward - control.reward)
            if control.group_id is not None:
                groups[(control.request_id, control.group_id)].append(
                    (control.reward, treatment.reward)
                )
    sign_changed = gains = loses = 0
    for rewards in groups.values():
        if len(rewards) < 2:
            continue
        c = [r[0] for r in rewards]
        t = [r[1] for r in rewards]
        mc, mt = statistics.fmean(c), statistics.fmean(t)
        sign_changed += any(
            advantage_sign(a, mc) != advantage_sign(b, mt) for a, b in zip(c, t, strict=True)
        )
        gains += len(set(c)) == 1 and len(set(t)) > 1
        loses += len(set(c)) > 1 and len(set(t)) == 1
    return {
        "items": len(pairs),
        "agreement": sum(c.status == t.status for c, t in pairs) / len(pairs),
        "confusion": {c: dict(row) for c, row in confusion.items()},
        "mean_delta": statistics.fmean(deltas),
        "groups": sum(len(r) > 1 for r in groups.values()),
        "sign_changed": sign_changed,
        "gains_signal": gains,
        "loses_signal": loses,
        "disagreements": sum(c.status != t.status for c, t in pairs),
    }
