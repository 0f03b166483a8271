"""NeMo-Gym's resources-server protocol, one server per verifier.

NeMo-Gym's ``ServerClient`` addresses a resources server by base URL and POSTs
``/seed_session``, ``/verify`` and ``/aggregate_metrics`` below it (with its observability on,
below ``/ng-rollout/<rollout id>``). Each verifier is such a server here, at
``/compat/nemo-gym/<verifier reference>``.

A verify call always answers 200 unless it is misconfigured (no key, a key without
``rewards:write``, an unknown verifier): NeMo-Gym turns any other status into a crash of the
rollout collection. What fails for one sample (the service unavailable past a retry budget, a
verifier error, an unusable ground truth) comes back as NeMo-Gym's own failure fields:
``reward: 0.0``, ``mask_sample: true`` (the sample is dropped from training and metrics),
``failure_kind`` from its shared vocabulary and ``failure_reason``. The request is echoed back
exactly as sent, with the fields NeMo-Gym's math server response model requires.
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import time
from collections import defaultdict
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query
from pydantic import BaseModel, ValidationError

from service.auth.dependencies import RewardsWriter
from service.errors import (
    ERROR_RESPONSES,
    DependencyUnavailable,
    InvalidRequest,
    RateLimited,
    ServiceError,
)
from service.limits.errors import Overloaded
from service.rewards.endpoints import RewardServiceDep
from service.rewards.schemas import RewardsRequest
from service.rewards.service import RewardService
from service.validation import REFERENCE_MAX_CHARS, REFERENCE_PATTERN, unstorable_value

router = APIRouter(prefix="/nemo-gym", tags=["compatibility"], responses=ERROR_RESPONSES)

_REFERENCE_DOC = 'Verifier reference, URL-encoded: "math", "math@1.1.0" or "math@stable".'
VerifierPath = Annotated[
    str, Path(max_length=REFERENCE_MAX_CHARS, pattern=REFERENCE_PATTERN, description=_REFERENCE_DOC)
]
RolloutPath = Annotated[str, Path(max_length=256, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
VerifierQuery = Annotated[
    str,
    Query(max_length=REFERENCE_MAX_CHARS, pattern=REFERENCE_PATTERN, description=_REFERENCE_DOC),
]
TaskRow = Annotated[
    dict[str, Any],
    Body(
        description="NeMo-Gym's verify request: `responses_create_params`, `response` (an OpenAI "
        "Responses object) and `expected_answer` (or `ground_truth`), plus any task fields."
    ),
]

# NeMo-Gym's shared failure vocabulary (nemo_gym.failure_kinds), and this service's own kinds
# in its "<server>:<kind>" form.
VERIFIER_ERROR = "verifier_error"
PROVIDER_UNAVAILABLE = "provider_unavailable"
PROVIDER_QUOTA_EXHAUSTED = "provider_quota_exhausted"
INVALID_REQUEST = "rlvr:invalid_request"
INVALID_GROUND_TRUTH = "rlvr:invalid_ground_truth"

# How long a verify call keeps retrying a busy or restarting service before it gives the
# sample up as masked: a rollout is expensive, a few seconds of waiting is not.
RETRY_BUDGET_S = 30.0
# How deep a row's fields may nest: the row is echoed back, and a deeper value (JSON allows it)
# made serialising the answer fail with a 500. NeMo-Gym's own rows nest a few levels.
MAX_FIELD_DEPTH = 128
TASK_INDEX = "_ng_task_index"
ROLLOUT_INDEX = "_ng_rollout_index"
MASK_SAMPLE = "mask_sample"


class MetricsRequest(BaseModel):
    """``/aggregate_metrics``'s body as NeMo-Gym sends it: the verify responses of a run."""

    verify_responses: list[dict[str, Any]]


class SampleFailure(Exception):
    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def _deeper_than(value: Any, limit: int) -> bool:
    # Iterative: a recursive walk of a value nested a thousand levels deep would overflow.
    pending = [(value, 0)]
    while pending:
        current, depth = pending.pop()
        if isinstance(current, dict):
            current = list(current.values())
        if isinstance(current, list):
            if depth >= limit:
                return True
            pending.extend((inner, depth + 1) for inner in current)
    return False


def _unechoable(value: Any, name: str) -> str | None:
    """Why a row's field cannot be verified and echoed back as JSON; None if it can."""
    if _deeper_than(value, MAX_FIELD_DEPTH):
        return f"{name} is nested deeper than {MAX_FIELD_DEPTH} levels"
    return unstorable_value(value, name)


def _response_text(response: Any) -> str:
    """The assistant's text from an OpenAI Responses object (output → message → text parts)."""
    if not isinstance(response, dict):
        return ""
    texts: list[str] = []
    for output in response.get("output") or []:
        if not isinstance(output, dict) or output.get("type", "message") != "message":
            continue
        for part in output.get("content") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
    if not texts and isinstance(response.get("output_text"), str):
        texts.append(response["output_text"])
    return "".join(texts)


def _prompt_text(params: Any) -> str | None:
    prompt = params.get("input") if isinstance(params, dict) else None
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        parts = [m.get("content") for m in prompt if isinstance(m, dict)]
        return "\n".join(p for p in parts if isinstance(p, str)) or None
    return None


def _group_of(row: dict[str, Any], rollout_id: str | None) -> str | None:
    # The rollouts of one task form a GRPO group: NeMo-Gym numbers the task in the row.
    task = row.get(TASK_INDEX)
    if isinstance(task, int) and not isinstance(task, bool):
        return f"task-{task}"
    if rollout_id:
        return f"rollout-{rollout_id.split('-', 1)[0]}"
    return None


def _reward_request(verifier: str, row: dict[str, Any], rollout_id: str | None) -> RewardsRequest:
    for name in ("responses_create_params", "response"):
        if name in row and not isinstance(row[name], dict):
            raise SampleFailure(INVALID_REQUEST, f"{name} must be a JSON object")
    if not isinstance(row.get("response"), dict):
        raise SampleFailure(INVALID_REQUEST, "response is required: the policy's Responses object")
    ground_truth = row.get("expected_answer")
    if ground_truth is None:
        ground_truth = row.get("ground_truth")
    if ground_truth is None:
        raise SampleFailure(INVALID_REQUEST, "expected_answer (or ground_truth) is required")
    for name, value in row.items():
        found = _unechoable(value, name)
        if found:
            raise SampleFailure(INVALID_REQUEST, found)
    item = {
        "prompt": _prompt_text(row.get("responses_create_params")),
        "completion": _response_text(row["response"]),
        "ground_truth": ground_truth,
        "group_id": _group_of(row, rollout_id),
    }
    try:
        return RewardsRequest.model_validate(
            {"verifier": verifier, "advantage": "none", "items": [item]}
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"][2:]) or "request"
        raise SampleFailure(INVALID_REQUEST, f"{where}: {first['msg']}") from exc


async def _compute(
    service: RewardService, request: RewardsRequest, key_id: str, tenant_id: str
) -> Any:
    """The reward, retrying a busy or unavailable service within the budget, honouring its
    Retry-After; a sample failure once the budget is spent."""
    deadline = time.monotonic() + RETRY_BUDGET_S
    while True:
        try:
            async with service.limits.per_key(key_id):
                return await service.compute(request, None, tenant_id)
        except (DependencyUnavailable, Overloaded, RateLimited) as exc:
            wait = float(exc.headers().get("Retry-After", "1"))
            if time.monotonic() + wait > deadline:
                limited = isinstance(exc, RateLimited)
                kind = PROVIDER_QUOTA_EXHAUSTED if limited else PROVIDER_UNAVAILABLE
                reason = f"{exc.message} (retried for {RETRY_BUDGET_S:g} s)"
                raise SampleFailure(kind, reason) from exc
            await asyncio.sleep(wait)
        except InvalidRequest as exc:
            if exc.code == "unknown_verifier":
                raise  # a misconfigured server: loud, not a run of silently masked samples
            raise SampleFailure(INVALID_REQUEST, exc.message) from exc
        except ServiceError as exc:
            if exc.status_code in (401, 403):
                raise
            raise SampleFailure(INVALID_REQUEST, exc.message) from exc


def _failure(row: dict[str, Any], expected: Any, failure: SampleFailure) -> dict[str, Any]:
    # The row as sent, but for a field no JSON answer can carry (an unpaired surrogate, a
    # non-finite number, nesting past MAX_FIELD_DEPTH), which failure_reason names instead.
    echo = {name: value for name, value in row.items() if not _unechoable(value, name)}
    return {
        **echo,
        "reward": 0.0,
        MASK_SAMPLE: True,
        "failure_kind": failure.kind,
        "failure_reason": failure.reason,
        "extracted_answer": None,
        "library_reward": 0.0,
        "judge_evaluations": None,
        **({"expected_answer": expected} if "expected_answer" not in row else {}),
    }


def _expected_text(row: dict[str, Any]) -> str:
    # NeMo-Gym's math response model requires expected_answer as text.
    value = row.get("expected_answer", row.get("ground_truth"))
    if _unechoable(value, "expected_answer"):
        return ""
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


async def verify_row(
    row: dict[str, Any],
    verifier: str,
    service: RewardService,
    caller: Any,
    rollout_id: str | None = None,
) -> dict[str, Any]:
    """One task row verified: the row as sent, plus the reward and the audit fields."""
    expected = _expected_text(row)
    try:
        request = _reward_request(verifier, row, rollout_id)
        response = await _compute(service, request, caller.key_id, caller.tenant_id)
        result = response.results[0]
        if result.status == "error":
            raise SampleFailure(VERIFIER_ERROR, str(result.details.get("reason", "verifier error")))
        if result.status == "invalid":
            reason = str(result.details.get("reason", "the ground truth cannot be used"))
            raise SampleFailure(INVALID_GROUND_TRUTH, reason)
    except SampleFailure as failure:
        return _failure(row, expected, failure)
    reward = float(result.reward) if result.reward is not None else 0.0
    extracted = result.details.get("extracted")
    return {
        **row,
        "reward": reward,
        MASK_SAMPLE: False,
        "failure_kind": None,
        "failure_reason": None,
        "extracted_answer": extracted if isinstance(extracted, str) else None,
        "library_reward": reward,
        "judge_evaluations": None,
        **({"expected_answer": expected} if "expected_answer" not in row else {}),
        "status": result.status,
        "verifier": result.verifier,
        "version": result.version,
        "decision_id": result.decision_id,
        "request_id": response.request_id,
        "details": result.details,
    }


def _row(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise InvalidRequest("body: a JSON object (the task row) is required")
    return body


@router.post("/{verifier}/seed_session")
@router.post("/{verifier}/ng-rollout/{rollout_id}/seed_session", include_in_schema=False)
async def seed_session(verifier: VerifierPath, caller: RewardsWriter) -> dict[str, Any]:
    """Nothing to set up per session: verifiers are stateless. Answers {} as NeMo-Gym expects."""
    return {}


@router.post("/{verifier}/verify")
async def verify(
    verifier: VerifierPath,
    body: TaskRow,
    service: RewardServiceDep,
    caller: RewardsWriter,
) -> dict[str, Any]:
    """Verify one rollout; per-sample failures are 200 with ``mask_sample: true``."""
    return await verify_row(_row(body), verifier, service, caller)


@router.post("/{verifier}/ng-rollout/{rollout_id}/verify", include_in_schema=False)
async def verify_in_rollout(
    verifier: VerifierPath,
    rollout_id: RolloutPath,
    body: TaskRow,
    service: RewardServiceDep,
    caller: RewardsWriter,
) -> dict[str, Any]:
    return await verify_row(_row(body), verifier, service, caller, rollout_id)


def _describe(values: list[float]) -> dict[str, float]:
    """The column's statistics; none when they overflow a float (two rewards of 1e308 made
    ``fmean`` raise OverflowError: a 500), since JSON has no infinity to answer with."""
    try:
        stats = {
            "mean": statistics.fmean(values),
            "max": max(values),
            "min": min(values),
            "median": statistics.median(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
        }
    except OverflowError:
        return {}
    return stats if all(math.isfinite(value) for value in stats.values()) else {}


def _task_of(response: dict[str, Any], index: int) -> Any:
    # A task index groups responses, so it must be a value that can be compared: NeMo-Gym
    # sends an integer; a list or an object here was a TypeError (a 500).
    task = response.get(TASK_INDEX, 0)
    if task is None or isinstance(task, str | int | float):
        return None if isinstance(task, float) and not math.isfinite(task) else task
    raise InvalidRequest(
        f"verify_responses[{index}].{TASK_INDEX} must be a number or a string, "
        f"not {type(task).__name__}"
    )


def _numeric_fields(response: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in response.items():
        if name in (TASK_INDEX, ROLLOUT_INDEX) or name.startswith("_ng_"):
            continue
        # JSON true counts as 1 (NeMo-Gym's profiler does the same); text is left out.
        if isinstance(value, (bool, int, float)) and math.isfinite(value):
            out[name] = float(value)
    return out


def _profile(responses: list[dict[str, Any]]) -> dict[str, Any]:
    columns: dict[str, list[float]] = defaultdict(list)
    for response in responses:
        for name, value in _numeric_fields(response).items():
            columns[name].append(value)
    metrics: dict[str, Any] = {}
    for name, values in sorted(columns.items()):
        for stat, value in _describe(values).items():
            metrics[f"{stat}/{name}"] = value
    return metrics


@router.post("/{verifier}/aggregate_metrics")
@router.post("/{verifier}/ng-rollout/{rollout_id}/aggregate_metrics", include_in_schema=False)
async def aggregate_metrics(
    verifier: VerifierPath, body: MetricsRequest, caller: RewardsWriter
) -> dict[str, Any]:
    """Mean, max, min, median and std of every numeric field, per task and overall, as
    NeMo-Gym's reward profiler names them; masked samples are counted, never averaged."""
    responses = body.verify_responses
    tasks = [_task_of(response, index) for index, response in enumerate(responses)]
    kept = [r for r in responses if not r.get(MASK_SAMPLE)]
    by_task: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for response, task in zip(responses, tasks, strict=True):
        if not response.get(MASK_SAMPLE):
            by_task[task].append(response)
    group_level = []
    for task, members in sorted(by_task.items(), key=lambda pair: str(pair[0])):
        group_level.append({TASK_INDEX: task, "num_rollouts": len(members), **_profile(members)})
    agent_metrics = {
        **_profile(kept),
        "num_rollouts": len(responses),
        "num_masked": len(responses) - len(kept),
    }
    key_metrics = {
        name: agent_metrics[name] for name in ("mean/reward", "num_masked") if name in agent_metrics
    }
    return {
        "group_level_metrics": group_level,
        "agent_metrics": agent_metrics,
        "key_metrics": key_metrics,
    }


@router.post("/verify", deprecated=True)
async def verify_by_query(
    body: TaskRow,
    service: RewardServiceDep,
    caller: RewardsWriter,
    verifier: VerifierQuery = "math",
) -> dict[str, Any]:
    """The first NeMo-Gym route (verifier in the query string), kept for existing configs; it
    answers as ``/compat/nemo-gym/{verifier}/verify`` does."""
    return await verify_row(_row(body), verifier, service, caller)
