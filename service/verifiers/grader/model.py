"""Calls to an OpenAI-compatible server (vLLM, llama.cpp, a gateway): chat completions for
``score_model`` and ``label_model`` graders, embeddings for the ``cosine`` metric.

The server's base URL is part of the version's config (``model_url``, ``embedding_url``).
Answers are asked for as structured output, as OpenAI's graders do: ``{"result": <number>}``
for a score (a bare number is accepted too), ``{"result": "<label>"}`` for a label. A server
that cannot be reached, answers an HTTP error or something that is not a chat completion is
a ``ModelServerError`` (the service's failure); a refusal or an answer that does not parse is
the grader's result (OpenAI's ``model_grader_refusal_error`` / ``model_grader_parse_error``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

# One call's bound: connecting, sending and reading the whole answer.
TIMEOUT_S = 60.0
_BODY_HEAD = 300


class ModelServerError(RuntimeError):
    """The server failed (not the grader): nothing was decided."""


@dataclass(frozen=True, slots=True)
class ChatAnswer:
    content: str | None
    refusal: str | None
    model: str | None
    usage: dict[str, int] = field(default_factory=dict)


def http_client() -> httpx.Client:
    """The HTTP client of one grader call (tests replace it with a mock transport)."""
    return httpx.Client(timeout=TIMEOUT_S)


def _post(url: str, body: Mapping[str, Any]) -> Any:
    try:
        with http_client() as client:
            response = client.post(url, json=body)
    except httpx.HTTPError as exc:
        raise ModelServerError(f"{url}: {type(exc).__name__}: {exc}"[:500]) from exc
    if response.status_code >= 400:
        head = response.text[:_BODY_HEAD]
        raise ModelServerError(f"{url} answered HTTP {response.status_code}: {head}")
    try:
        return response.json()
    except ValueError as exc:
        raise ModelServerError(f"{url} answered something that is not JSON") from exc


def _usage(data: Mapping[str, Any]) -> dict[str, int]:
    usage = data.get("usage")
    if not isinstance(usage, Mapping):
        return {}
    counts = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            counts[key] = value
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    counts["cached_tokens"] = cached if isinstance(cached, int) else 0
    return counts


def chat(
    base_url: str,
    model: str,
    messages: Sequence[Mapping[str, Any]],
    response_format: Mapping[str, Any],
    sampling: Mapping[str, Any],
) -> ChatAnswer:
    """One chat completion; ModelServerError when the server fails."""
    body: dict[str, Any] = {
        "model": model,
        "messages": list(messages),
        "response_format": dict(response_format),
    }
    for key, value in sampling.items():
        # OpenAI's grader field is max_completions_tokens; the chat API's is without the "s".
        body["max_completion_tokens" if key == "max_completions_tokens" else key] = value
    data = _post(f"{base_url}/chat/completions", body)
    try:
        message = data["choices"][0]["message"]
        content, refusal = message.get("content"), message.get("refusal")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ModelServerError(f"{base_url}: the answer is not a chat completion") from exc
    reported_model = data.get("model") if isinstance(data, Mapping) else None
    return ChatAnswer(
        content=content if isinstance(content, str) else None,
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        model=reported_model if isinstance(reported_model, str) else None,
        usage=_usage(data),
    )


def score_format(low: float, high: float) -> dict[str, Any]:
    return _json_schema(
        "score",
        {
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "description": {"type": "string"},
                        "conclusion": {"type": "string"},
                    },
                    "required": ["description", "conclusion"],
                    "additionalProperties": False,
                },
            },
            "result": {"type": "number", "minimum": low, "maximum": high},
        },
    )


def label_format(labels: Sequence[str]) -> dict[str, Any]:
    return _json_schema("label", {"result": {"type": "string", "enum": list(labels)}})


def _json_schema(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {
            "name": name,
            "strict": True,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
                "additionalProperties": False,
            },
        },
    }


def _result_field(content: str) -> Any:
    text = content.strip()
    if text.startswith("```"):  # a fenced JSON answer from a server without structured output
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data.get("result") if isinstance(data, Mapping) else data


def parse_score(content: str) -> float | None:
    """The score in the answer: ``{"result": x}`` or a bare number; None if there is none."""
    value = _result_field(content)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def parse_label(content: str, labels: Sequence[str]) -> str | None:
    """The label in the answer (``{"result": label}`` or the bare label), if it is one."""
    value = _result_field(content)
    if value is None:
        value = content.strip()
    return value if isinstance(value, str) and value in labels else None


def embed(base_url: str, model: str, texts: Sequence[str]) -> list[list[float]]:
    """One embedding per text; ModelServerError when the server fails."""
    data = _post(f"{base_url}/embeddings", {"model": model, "input": list(texts)})
    try:
        rows = sorted(data["data"], key=lambda row: row.get("index", 0))
        vectors = [[float(x) for x in row["embedding"]] for row in rows]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelServerError(f"{base_url}: the answer is not a list of embeddings") from exc
    if len(vectors) != len(texts):
        raise ModelServerError(f"{base_url}: {len(vectors)} embeddings for {len(texts)} texts")
    return vectors
