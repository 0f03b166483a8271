"""Liveness and readiness."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

from service.db.session import get_engine

router = APIRouter(tags=["health"])

# /readyz answers within about this long whatever hangs: a check that takes longer fails.
CHECK_TIMEOUT_S = 0.8
# The database check runs on a thread of its own, never on the threads requests use: six
# stuck requests once held all of those and /readyz hung behind them.
_checker = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rlvr-readyz")


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """200 when the process is up."""
    return {"status": "ok"}


def _database_answers(settings: Any) -> bool:
    try:
        with get_engine(settings).connect() as connection:
            connection.execute(text("SELECT 1"))
        return True
    except Exception:
        return False


async def _database_problem(request: Request) -> str | None:
    # One check at a time per app: while the database hangs, later calls wait on the same
    # check instead of queueing more of them behind it.
    state = request.app.state
    check: Future[bool] | None = getattr(state, "readyz_database_check", None)
    if check is None or check.done():
        check = state.readyz_database_check = _checker.submit(_database_answers, state.settings)
    try:
        answered = await asyncio.wait_for(
            asyncio.shield(asyncio.wrap_future(check)), CHECK_TIMEOUT_S
        )
    except TimeoutError:
        return f"the database did not answer within {CHECK_TIMEOUT_S} s"
    return None if answered else "the database does not answer"


async def _executor_checks(request: Request) -> dict[str, str | None]:
    try:
        checks: dict[str, str | None] = await asyncio.wait_for(
            request.app.state.executor.ready(), CHECK_TIMEOUT_S
        )
    except TimeoutError:
        return {"executor": f"the executor did not answer within {CHECK_TIMEOUT_S} s"}
    return checks


class Readiness(BaseModel):
    status: str
    checks: dict[str, bool]
    problems: list[str]


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={
        503: {
            "model": Readiness,
            "description": "Not ready (a dependency does not answer, a queue has no live "
            "worker, or the embedded pools are warming up); Retry-After says when to ask again.",
            "headers": {"Retry-After": {"schema": {"type": "integer"}}},
        }
    },
)
async def readyz(request: Request) -> JSONResponse:
    """200 when the database answers and a worker (or the local pool) serves each queue, else
    503 naming what is missing; answers within about a second whatever hangs."""
    database, executor = await asyncio.gather(_database_problem(request), _executor_checks(request))
    problems = {"database": database, **executor}
    ready = all(problem is None for problem in problems.values())
    body = {
        "status": "ready" if ready else "unavailable",
        "checks": {name: problem is None for name, problem in problems.items()},
        "problems": [problem for problem in problems.values() if problem is not None],
    }
    headers = {} if ready else {"Retry-After": "2"}
    return JSONResponse(body, status_code=200 if ready else 503, headers=headers)
