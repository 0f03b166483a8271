"""NeMo-Gym 0.7.0 calls the service as one of its resources servers.

NeMo-Gym declares Python >= 3.13.14 while CI runs 3.11; its wheel is installed anyway
(scripts/framework-env.sh: --ignore-requires-python, --no-deps) and everything below is its own
code: the README's server config read by OmegaConf, ``ServerClient`` building the URL and
sending the calls (as its simple agent does: /seed_session, then /verify with the run request
plus the policy's response and the seed's cookies), its ``raise_for_status``, and its response
models — the math server's ``LibraryJudgeMathVerifyResponse``, ``BaseVerifyResponse`` with its
failure fields, and ``AggregateMetrics``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.frameworks.support import ADMIN_KEY, list_decisions, readme_block

server_utils = pytest.importorskip(
    "nemo_gym.server_utils", reason="nemo-gym is installed only in .venv-frameworks"
)
from aiohttp import ClientResponseError  # noqa: E402
from nemo_gym.base_resources_server import (  # noqa: E402
    AggregateMetrics,
    BaseVerifyResponse,
)
from nemo_gym.config_types import BaseServerConfig  # noqa: E402
from nemo_gym.global_config import (  # noqa: E402
    NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME,
    OBSERVABILITY_ENABLED_KEY_NAME,
)
from nemo_gym.openai_utils import NeMoGymResponse  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from resources_servers.math_with_judge.app import (  # noqa: E402
    LibraryJudgeMathRunRequest,
    LibraryJudgeMathVerifyResponse,
)
from responses_api_agents.simple_agent.app import SimpleAgentRunRequest  # noqa: E402

SERVER = "rlvr_math"  # the README's server
PINNED = "rlvr_math_pinned"  # the same verifier, a version in its URL
UNKNOWN = "rlvr_unknown"  # a verifier the service does not have


def server_entry(base_url: str, name: str, reference: str) -> str:
    port = urlsplit(base_url).port
    block = readme_block("nemo-gym").replace("port: 8000/", f"port: {port}/")
    block = block.replace("/compat/nemo-gym/math", f"/compat/nemo-gym/{quote(reference)}")
    return block.replace(f"{SERVER}:", f"{name}:", 1)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    # NeMo-Gym keeps one aiohttp session per process, bound to the loop that made it.
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def client(rlvr_url: str) -> Iterator[Any]:
    """NeMo-Gym's client, configured as NeMo-Gym configures the servers it starts (the global
    config in NEMO_GYM_CONFIG_DICT), over the README's server entry, with observability on."""
    global_config = OmegaConf.merge(
        *(
            OmegaConf.create(server_entry(rlvr_url, name, reference))
            for name, reference in [
                (SERVER, "math"),
                (PINNED, "math@1.0.0"),
                (UNKNOWN, "no-such-verifier"),
            ]
        ),
        OmegaConf.create({OBSERVABILITY_ENABLED_KEY_NAME: True}),
    )
    assert os.environ["RLVR_API_KEY"] == ADMIN_KEY  # what ${oc.env:RLVR_API_KEY} reads
    os.environ[NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME] = OmegaConf.to_yaml(global_config)
    try:
        yield server_utils.ServerClient.load_from_global_config(
            BaseServerConfig(host="127.0.0.1", port=1)
        )
    finally:
        os.environ.pop(NEMO_GYM_CONFIG_DICT_ENV_VAR_NAME, None)


def policy_response(text: str) -> dict[str, Any]:
    """What NeMo-Gym's model server answers: an OpenAI Responses object, as its model reads it."""
    response = {
        "id": "resp_1",
        "created_at": 0.0,
        "model": "policy",
        "object": "response",
        "output": [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
    }
    return NeMoGymResponse.model_validate(response).model_dump()


def run_request(question: str, expected: str, **extra: Any) -> Any:
    """A math task row as NeMo-Gym's simple agent receives it (its run request keeps every
    field of the row, NeMo-Gym's own _ng_ indices included) and forwards it to /verify."""
    row = {
        "responses_create_params": {"input": [{"role": "user", "content": question}]},
        "question": question,
        "expected_answer": expected,
    }
    LibraryJudgeMathRunRequest.model_validate(row)  # a row of NeMo-Gym's math environment
    return SimpleAgentRunRequest.model_validate({**row, **extra})


async def rollout(client: Any, body: Any, reply: str, server: str = SERVER) -> dict[str, Any]:
    """The calls NeMo-Gym's simple agent makes around one model call."""
    seed = await client.post(server_name=server, url_path="/seed_session", json=body.model_dump())
    await server_utils.raise_for_status(seed)
    payload = body.model_dump() | {"response": policy_response(reply)}
    verified = await client.post(
        server_name=server, url_path="/verify", json=payload, cookies=seed.cookies
    )
    await server_utils.raise_for_status(verified)
    result: dict[str, Any] = await server_utils.get_response_json(verified)
    # The row comes back exactly as sent, nothing added to it under its own names.
    for name, value in payload.items():
        assert result[name] == value, name
    assert "ground_truth" not in result
    return result


async def gather(*calls: Any) -> list[Any]:
    return list(await asyncio.gather(*calls))


def test_math_rollouts_are_scored_and_parse_as_the_math_server_answer(
    rlvr_url: str, client: Any, loop: asyncio.AbstractEventLoop
) -> None:
    results = loop.run_until_complete(
        gather(
            rollout(client, run_request("What is 2+2?", "4"), "So the answer is \\boxed{4}."),
            rollout(client, run_request("What is 3*3?", "9"), "I get \\boxed{6}."),
            rollout(client, run_request("Half of one?", "\\frac{1}{2}"), "It is \\boxed{0.5}"),
        )
    )
    parsed = [LibraryJudgeMathVerifyResponse.model_validate(result) for result in results]
    assert [p.reward for p in parsed] == [1.0, 0.0, 1.0]
    assert [p.library_reward for p in parsed] == [1.0, 0.0, 1.0]
    assert [p.extracted_answer for p in parsed] == ["4", "6", "0.5"]
    assert all(p.mask_sample is False and p.failure_kind is None for p in parsed)
    assert all(p.judge_evaluations is None for p in parsed)
    # Each reward is a logged decision of the verifier the URL names.
    decisions = {d["id"]: d for d in list_decisions(rlvr_url, verifier="math")}
    for result in results:
        decision = decisions[result["decision_id"]]
        assert decision["status"] == result["status"]
        assert decision["reward"] == result["reward"]


def test_a_sample_that_cannot_be_scored_is_masked_not_a_crash(
    client: Any, loop: asyncio.AbstractEventLoop
) -> None:
    # An empty expected answer is no ground truth: the verifier refuses it.
    result = loop.run_until_complete(rollout(client, run_request("What?", ""), "\\boxed{1}"))
    parsed = BaseVerifyResponse.model_validate(result)
    assert parsed.reward == 0.0
    assert parsed.mask_sample is True
    assert parsed.failure_kind == "rlvr:invalid_ground_truth"
    assert parsed.failure_reason


def test_a_version_in_the_url_and_rollout_ids_under_observability(
    rlvr_url: str, client: Any, loop: asyncio.AbstractEventLoop
) -> None:
    # With observability on, NeMo-Gym puts /ng-rollout/<task>-<rollout> before /verify.
    results = [
        loop.run_until_complete(
            rollout(
                client,
                run_request("2+2?", "4", _ng_task_index=7, _ng_rollout_index=index),
                reply,
                PINNED,
            )
        )
        for index, reply in enumerate(["\\boxed{4}", "\\boxed{5}"])
    ]
    assert [r["reward"] for r in results] == [1.0, 0.0]
    assert {r["version"] for r in results} == {"1.0.0"}
    decisions = {d["id"]: d for d in list_decisions(rlvr_url, group_id="task-7")}
    assert {r["decision_id"] for r in results} <= set(decisions)


def test_an_unknown_verifier_fails_loudly(client: Any, loop: asyncio.AbstractEventLoop) -> None:
    with pytest.raises(ClientResponseError) as raised:
        loop.run_until_complete(rollout(client, run_request("?", "1"), "1", UNKNOWN))
    assert raised.value.status == 422


def test_aggregate_metrics_parse_as_nemo_gyms_and_leave_masked_samples_out(
    client: Any, loop: asyncio.AbstractEventLoop
) -> None:
    async def main() -> Any:
        responses = [
            await rollout(client, run_request("2+2?", "4", _ng_task_index=task), reply)
            for task, reply in [(0, "\\boxed{4}"), (0, "\\boxed{3}"), (1, "\\boxed{4}")]
        ]
        responses.append(await rollout(client, run_request("?", "", _ng_task_index=1), "1"))
        aggregated = await client.post(
            server_name=SERVER, url_path="/aggregate_metrics", json={"verify_responses": responses}
        )
        await server_utils.raise_for_status(aggregated)
        return AggregateMetrics.model_validate(await server_utils.get_response_json(aggregated))

    metrics = loop.run_until_complete(main())
    assert metrics.agent_metrics["mean/reward"] == pytest.approx(2 / 3)
    assert metrics.agent_metrics["num_masked"] == 1
    assert metrics.key_metrics["mean/reward"] == pytest.approx(2 / 3)
    by_task = {group["_ng_task_index"]: group for group in metrics.group_level_metrics}
    assert by_task[0]["mean/reward"] == pytest.approx(0.5)
    assert by_task[1]["mean/reward"] == pytest.approx(1.0)
