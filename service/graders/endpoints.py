"""HTTP routes of OpenAI's grader API; the rules live in GraderService."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from starlette.concurrency import run_in_threadpool

from service.auth.dependencies import Caller
from service.errors import ERROR_RESPONSES
from service.graders.schemas import (
    GraderRunRequest,
    GraderRunResponse,
    GraderValidateRequest,
    GraderValidateResponse,
)
from service.graders.service import GraderService
from service.rewards.endpoints import (
    IdempotencyKey,
    RateLimitedWriter,
    RewardServiceDep,
)

router = APIRouter(
    prefix="/v1/fine_tuning/alpha/graders",
    tags=["graders"],
    responses=ERROR_RESPONSES,
)

# Which decision a run was logged as, and the grader's verifier version (name@version).
DECISION_HEADER = "X-RLVR-Decision-Id"
VERIFIER_HEADER = "X-RLVR-Verifier"


def get_grader_service(request: Request, rewards: RewardServiceDep) -> GraderService:
    service: GraderService | None = getattr(request.app.state, "grader_service", None)
    if service is None:
        service = GraderService(rewards, request.app.state.settings)
        request.app.state.grader_service = service
    return service


GraderServiceDep = Annotated[GraderService, Depends(get_grader_service)]


@router.post("/run", response_model=GraderRunResponse)
async def run_grader(
    body: GraderRunRequest,
    response: Response,
    service: GraderServiceDep,
    caller: RateLimitedWriter,
    idempotency_key: IdempotencyKey = None,
) -> GraderRunResponse:
    """Run an OpenAI grader on a model sample and an item; the run is a logged decision."""
    answer, result = await service.run(body, caller.tenant_id, idempotency_key)
    response.headers[DECISION_HEADER] = result.decision_id
    response.headers[VERIFIER_HEADER] = f"{result.verifier}@{result.version}"
    return answer


@router.post("/validate", response_model=GraderValidateResponse)
async def validate_grader(
    body: GraderValidateRequest, service: GraderServiceDep, _: Caller
) -> GraderValidateResponse:
    """Check an OpenAI grader without running it: the grader back, or a 422 saying why."""
    grader = await run_in_threadpool(service.validate, body.grader)
    return GraderValidateResponse(grader=grader)
