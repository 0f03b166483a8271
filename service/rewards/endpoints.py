"""HTTP routes of the reward API; the rules live in RewardService."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import Response

from service.auth.dependencies import RewardsWriter
from service.auth.service import Principal
from service.errors import ERROR_RESPONSES
from service.rewards.schemas import RewardsRequest, RewardsResponse
from service.rewards.service import RewardService

router = APIRouter(prefix="/v1", tags=["rewards"])


async def get_reward_service(request: Request) -> RewardService:
    service: RewardService = request.app.state.reward_service
    return service


RewardServiceDep = Annotated[RewardService, Depends(get_reward_service)]
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=128)]


async def rate_limited_writer(
    caller: RewardsWriter, service: RewardServiceDep
) -> AsyncIterator[Principal]:
    """The caller, with rewards:write, holding one of its key's requests in flight: 429 with
    Retry-After past the key's requests per second or requests in flight."""
    async with service.limits.per_key(caller.key_id):
        yield caller


# For every route that computes rewards (POST /v1/rewards, the compatibility routes).
RateLimitedWriter = Annotated[Principal, Depends(rate_limited_writer)]


@router.post(
    "/rewards",
    responses={200: {"model": RewardsResponse}, **ERROR_RESPONSES},
)
async def post_rewards(
    body: RewardsRequest,
    service: RewardServiceDep,
    caller: RateLimitedWriter,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Verify a batch of completions and return one reward per item, plus group advantages."""
    # Serialised as built: re-validating 4096 results through the response model costs more
    # than the verification of a cached batch.
    response = await service.compute(body, idempotency_key, caller.tenant_id)
    return Response(content=response.model_dump_json(), media_type="application/json")
