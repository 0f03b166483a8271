"""Compatibility routes for trainers that already speak a reward protocol (OpenRLHF here,
NeMo-Gym in ``nemo_gym.py``).

They translate into the one reward pipeline, so every item is verified, versioned and logged
exactly as through POST /v1/rewards.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field, JsonValue, ValidationError, model_validator

from service.compat.nemo_gym import router as nemo_gym_router
from service.contract import RewardResult
from service.errors import ERROR_RESPONSES, DependencyUnavailable, InvalidRequest
from service.rewards.endpoints import IdempotencyKey, RateLimitedWriter, RewardServiceDep
from service.rewards.schemas import RewardsRequest
from service.validation import REFERENCE_MAX_CHARS, REFERENCE_PATTERN, unstorable_value

router = APIRouter(prefix="/compat", tags=["compatibility"], responses=ERROR_RESPONSES)

VerifierQuery = Annotated[
    str,
    Query(
        max_length=REFERENCE_MAX_CHARS,
        pattern=REFERENCE_PATTERN,
        description='Verifier reference: "name", "name@1.2.0" or "name@alias".',
    ),
]


def _refuse_unstorable(fields: dict[str, Any]) -> None:
    # A non-finite number or an unpaired surrogate is refused here, named as the trainer sent
    # it, rather than as the reward item it would have become (service/validation.py).
    for name, value in fields.items():
        found = unstorable_value(value, name)
        if found:
            raise ValueError(found)


class OpenRLHFRequest(BaseModel):
    query: list[str] = Field(min_length=1, description="Prompt + response, as OpenRLHF sends it.")
    prompts: list[str] | None = Field(default=None, description="One per query when sent.")
    labels: list[JsonValue] = Field(description="Ground truths, one per query.")

    @model_validator(mode="after")
    def _storable(self) -> OpenRLHFRequest:
        _refuse_unstorable({"query": self.query, "prompts": self.prompts, "labels": self.labels})
        return self


class OpenRLHFResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


def _strip_prompt(query: str, prompt: str | None) -> str:
    # OpenRLHF sends the whole sequence; the verifier judges only what the policy wrote.
    if prompt and query.startswith(prompt):
        return query[len(prompt) :]
    return query


def _rewards_request(verifier: str, items: list[dict[str, Any]]) -> RewardsRequest:
    try:
        return RewardsRequest.model_validate(
            {"verifier": verifier, "advantage": "none", "items": items}
        )
    except ValidationError as exc:
        raise InvalidRequest(f"cannot build a reward request: {exc.errors()[:3]}") from exc


def _rewards_or_raise(results: list[RewardResult]) -> list[float]:
    """OpenRLHF needs a float per item: failures become HTTP errors, never a 0.0."""
    errors = [i for i, r in enumerate(results) if r.status == "error"]
    if errors:
        raise DependencyUnavailable("verifier", f"items {errors[:20]} failed; retry the batch")
    invalid = [i for i, r in enumerate(results) if r.status == "invalid"]
    if invalid:
        reasons = {i: results[i].details.get("reason", "") for i in invalid[:5]}
        raise InvalidRequest(
            f"invalid ground truth for items {invalid[:20]}: {reasons}", code="invalid_ground_truth"
        )
    return [float(r.reward) for r in results]  # type: ignore[arg-type]


@router.post("/openrlhf", response_model=OpenRLHFResponse)
async def openrlhf(
    body: OpenRLHFRequest,
    service: RewardServiceDep,
    caller: RateLimitedWriter,
    http_response: Response,
    idempotency_key: IdempotencyKey = None,
    verifier: VerifierQuery = "math",
) -> OpenRLHFResponse:
    """OpenRLHF's remote reward protocol: {query, prompts, labels} → {rewards, scores,
    extra_logs}, every extra_logs value a list of numbers (one per item)."""
    count = len(body.query)
    for name, values in (("prompts", body.prompts), ("labels", body.labels)):
        if values is not None and len(values) != count:
            raise InvalidRequest(f"{name} has {len(values)} entries; query has {count}")
    prompts: list[str | None] = list(body.prompts) if body.prompts else [None] * count
    request = _rewards_request(
        verifier,
        [
            {"prompt": prompt, "completion": _strip_prompt(query, prompt), "ground_truth": label}
            for query, prompt, label in zip(body.query, prompts, body.labels, strict=True)
        ],
    )
    response = await service.compute(request, idempotency_key, caller.tenant_id)
    results = response.results
    rewards = _rewards_or_raise(results)
    # OpenRLHF turns every extra_logs value into a tensor: numbers only, one per item. What is
    # text (the version, the reason) is in the decision log, found by the request id header.
    extra_logs = {
        "accuracy": rewards,
        "cached": [float(r.cached) for r in results],
        **{
            f"status_{status}": [float(r.status == status) for r in results]
            for status in ("correct", "incorrect", "partial", "unparseable", "timeout")
        },
    }
    http_response.headers["X-RLVR-Request-Id"] = response.request_id
    return OpenRLHFResponse(rewards=rewards, scores=rewards, extra_logs=extra_logs)


# NeMo-Gym's resources-server surface, one server per verifier (service/compat/nemo_gym.py).
router.include_router(nemo_gym_router)
