"""The FastAPI application: routers, error mapping, and the executor chosen by the settings."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from service.auth.dependencies import Authenticator, presented_key, require_operator
from service.catalog.case_endpoints import router as cases_router
from service.catalog.endpoints import router as catalog_router
from service.compat.endpoints import router as compat_router
from service.decisions.endpoints import router as decisions_router
from service.decisions.endpoints import stats_router
from service.decisions.label_endpoints import router as labels_router
from service.decisions.run_endpoints import router as runs_router
from service.errors import ServiceError
from service.execution.background import Background, supervise_replays
from service.execution.executors import make_executor
from service.execution.sandbox_setup import configure_sandbox_from
from service.execution.warmup import check_verifiers_import
from service.experiments.endpoints import router as experiments_router
from service.experiments.replay_endpoints import router as replays_router
from service.graders.endpoints import router as graders_router
from service.health.endpoints import router as health_router
from service.json_depth import NAMED_DEPTH, too_deep_at
from service.limits.admission import AdmissionGate
from service.limits.policy import Limits
from service.promotion.endpoints import router as promotion_router
from service.rewards.endpoints import router as rewards_router
from service.rewards.service import RewardService
from service.settings import Settings, get_settings
from service.ui.endpoints import install_dashboard
from service.validation import BodySizeLimit, Scope

log = logging.getLogger(__name__)


def _error(
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    details: dict[str, Any] | None = None,
) -> JSONResponse:
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    body = {"error": error}
    return JSONResponse(body, status_code=status, headers=headers)


# A body that is not JSON at all (syntax, encoding, nesting, numbers Python cannot hold) is a
# 400 bad_request on every route; JSON of the wrong shape is a 422 invalid_request.
_HTTP_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


def _location(parts: Iterable[object]) -> str:
    """The keys and indexes of a place in a body, dotted; JSON nested hundreds of levels deep
    (past pydantic's or the parser's depth) is cut to its start, which says where."""
    location = ".".join(str(part) for part in parts)
    return location[:200] + "…" if len(location) > 200 else location


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:10]:
        location = _location(part for part in error.get("loc", ()) if part != "body")
        parts.append(f"{location or 'body'}: {error.get('msg', 'invalid')}")
    return "; ".join(parts)


async def _too_deep_message(request: Request) -> str:
    """Where a body FastAPI's JSON parser gave up on (a RecursionError, which FastAPI answers
    with a 400 naming nothing) is nested too deep. Walked only for such a body, off the event
    loop: the walk takes time in proportion to the body before that place."""
    path = await run_in_threadpool(too_deep_at, await request.body(), NAMED_DEPTH)
    message = "the body is nested too deep to parse"
    if path is None:
        return message
    return f"{message}: more than {NAMED_DEPTH} levels at {_location(path)}"


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def _allowed_methods(request: Request) -> str:
    # Starlette's Allow names the methods of the first route on the path only; GET and POST of
    # one path are often two routes. Ask every route about every method instead.
    routes = request.app.router.routes
    allowed = [
        method
        for method in _METHODS
        if any(
            route.matches({**request.scope, "method": method})[0] is Match.FULL for route in routes
        )
    ]
    return ", ".join(allowed)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(_: Request, exc: ServiceError) -> JSONResponse:
        return _error(exc.status_code, exc.code, exc.message, exc.headers(), exc.extra)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        malformed = [e for e in exc.errors() if e.get("type") == "json_invalid"]
        if malformed:
            reason = malformed[0].get("ctx", {}).get("error", "JSON decode error")
            return _error(400, "bad_request", f"the body is not valid JSON: {reason}")
        return _error(422, "invalid_request", _validation_message(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # FastAPI raises its "error parsing the body" 400 from what json.loads raised.
        if isinstance(exc.__cause__, RecursionError):
            return _error(400, "bad_request", await _too_deep_message(request))
        if isinstance(exc.__cause__, ValueError):  # bytes not UTF-8, an integer of 5000 digits
            return _error(400, "bad_request", f"the body is not valid JSON: {exc.__cause__}")
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = _allowed_methods(request)
        return _error(exc.status_code, code, str(exc.detail), headers)

    @app.exception_handler(OperationalError)
    async def database_down(_: Request, exc: OperationalError) -> JSONResponse:
        log.warning("database unavailable: %s", type(exc).__name__)
        return _error(503, "dependency_unavailable", "database unavailable", {"Retry-After": "2"})

    @app.exception_handler(PoolTimeout)
    async def database_busy(_: Request, exc: PoolTimeout) -> JSONResponse:
        # Every connection of this process's pool stayed in use past the pool's wait: the
        # database is there but this process has more requests than connections right now.
        log.warning("no database connection free: %s", exc)
        return _error(
            503, "overloaded", "no database connection free: retry shortly", {"Retry-After": "1"}
        )

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return _error(500, "internal_error", f"internal error: {type(exc).__name__}")


def _limits_of(app: FastAPI) -> Limits | None:
    service: RewardService | None = getattr(app.state, "reward_service", None)
    return service.limits if service is not None else None


def _known_key_of(app: FastAPI) -> Callable[[Scope], str | None]:
    """For the admission gate: the id of the key a request presents, if verified before."""

    def key_of(scope: Scope) -> str | None:
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                presented = presented_key(value.decode("latin-1"))
                authenticator: Authenticator = app.state.authenticator
                return authenticator.known_key_id(presented) if presented else None
        return None

    return key_of


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # No sandbox runs here, but the code kind's versions depend on its config.
        configure_sandbox_from(settings)
        check_verifiers_import()
        try:
            await run_in_threadpool(app.state.authenticator.bootstrap)
        except OperationalError:
            log.warning("database unavailable at start: API keys are set up at the first check")
        executor = make_executor(settings)
        await executor.start()
        app.state.executor = executor
        # Shadow work and replays: off the hot path, on queues (or a process) of their own.
        background = Background(settings)
        app.state.background = background
        app.state.reward_service = RewardService(settings, executor, background)
        # The treatment of a shadow experiment decides in the gaps between reward requests.
        background.yield_to(app.state.reward_service.limits.wait_quiet)
        app.state.forget_experiments = app.state.reward_service.experiments.forget
        supervisor = asyncio.create_task(supervise_replays(background))
        # How late this loop runs what is due: past RLVR_MAX_LOOP_LAG_S work is shed at once.
        loop_watch = asyncio.create_task(app.state.reward_service.limits.watch_loop())
        # What start-up made (modules, routes, schemas, verifier tables) lives as long as the
        # process, and every full collection walked it: a pause of 70-150 ms every few seconds
        # under load, 1-8 ms once it is frozen. Garbage is collected first, or it would be kept
        # for good. Undone at shutdown: tests start many apps in one process.
        frozen_here = gc.get_freeze_count() == 0
        if frozen_here:
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            for task in (supervisor, loop_watch):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await app.state.reward_service.aclose()
            await run_in_threadpool(background.close)
            await executor.aclose()
            if frozen_here:
                gc.unfreeze()

    docs = (
        {} if settings.docs_public else {"docs_url": None, "redoc_url": None, "openapi_url": None}
    )
    app = FastAPI(
        title="RLVR verifier service",
        version="0.1.0",
        description="Versioned, sandboxed, audited rewards for RL with verifiable rewards. "
        "Every /v1 and /compat route takes `Authorization: Bearer <API key>`.",
        lifespan=lifespan,
        **docs,  # type: ignore[arg-type]
    )
    app.state.settings = settings
    app.add_middleware(BodySizeLimit, max_body_bytes=settings.max_body_bytes)
    # Outermost: a work request the service would shed is answered before its body is read.
    app.add_middleware(AdmissionGate, limits=lambda: _limits_of(app), key_of=_known_key_of(app))
    app.state.authenticator = Authenticator(settings)
    install_error_handlers(app)
    app.include_router(health_router)
    app.include_router(rewards_router)
    app.include_router(decisions_router)
    app.include_router(stats_router)
    app.include_router(runs_router)
    app.include_router(labels_router)
    app.include_router(promotion_router)
    app.include_router(cases_router)
    app.include_router(catalog_router)
    app.include_router(experiments_router)
    app.include_router(replays_router)
    app.include_router(compat_router)
    app.include_router(graders_router)
    install_dashboard(app)

    # Its gauges name tenants and runs: when not public, only the operator's keys read it.
    metrics_guard = [] if settings.metrics_public else [Depends(require_operator("audit:read"))]

    @app.get("/metrics", include_in_schema=False, dependencies=metrics_guard)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    return app
