"""OpenRLHF 0.11.2 loads the README's reward file and scores rollouts with it.

OpenRLHF's ``SingleTurnAgentExecutor`` loads the file named by ``--reward.remote_url`` and calls
its ``reward_func`` per sample from worker threads; its ``SamplesGenerator`` turns the answer
into an ``Experience``. vLLM cannot be installed here (it needs CUDA), so the generation engine
is a stand-in that returns fixed completions and ``vllm`` is a stub module with the three names
OpenRLHF imports; the reward path is OpenRLHF's own.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import shlex
import subprocess
import sys
import types
import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from tests.frameworks.support import README_URL, char_tokenizer, list_decisions, readme_block

pytest.importorskip("openrlhf", reason="OpenRLHF is installed only in .venv-frameworks")

from openrlhf.utils.agent import SingleTurnAgentExecutor

MAX_LEN = 96
SAMPLES_PER_PROMPT = 4
# (prompt, label, the samples' completions, expected rewards)
ROLLOUTS = [
    ("Q: 2+2? A:", "4", [" \\boxed{4}", " \\boxed{5}", " so 4", " \\boxed{4}"], [1, 0, 1, 1]),
    ("Q: 3*3? A:", "9", [" \\boxed{6}", " \\boxed{9}", " #### 9", " eight"], [0, 1, 1, 0]),
]


@pytest.fixture
def vllm_stub(monkeypatch: pytest.MonkeyPatch) -> None:
    """``vllm`` as far as OpenRLHF's imports go: it needs CUDA and cannot install here."""
    vllm = types.ModuleType("vllm")
    vllm.__version__ = "0.29.0"  # type: ignore[attr-defined]
    vllm.SamplingParams = SimpleNamespace  # type: ignore[attr-defined]
    inputs = types.ModuleType("vllm.inputs")
    inputs.TokensPrompt = dict  # type: ignore[attr-defined]
    utils = types.ModuleType("vllm.utils")
    utils.random_uuid = lambda: uuid.uuid4().hex  # type: ignore[attr-defined]
    for name, module in (("vllm", vllm), ("vllm.inputs", inputs), ("vllm.utils", utils)):
        monkeypatch.setitem(sys.modules, name, module)


class FixedEngine:
    """Stands in for OpenRLHF's vLLM actor: each prompt's samples, in turn, as token ids."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.queues = {prompt: list(completions) for prompt, _, completions, _ in ROLLOUTS}

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, **_: Any) -> Any:
        prompt = self.tokenizer.decode(prompt_token_ids)
        text = self.queues[prompt].pop(0)
        await asyncio.sleep(0)  # other samples generate meanwhile
        return SimpleNamespace(
            outputs=[
                SimpleNamespace(
                    token_ids=self.tokenizer.encode(text),
                    text=text,
                    finish_reason="stop",
                    logprobs=None,
                )
            ]
        )


def readme_setup(rlvr_url: str, run_id: str) -> tuple[dict[str, str], str]:
    """The README's environment and the path its command substitution prints."""
    block = readme_block("openrlhf")
    env: dict[str, str] = {}
    for line in block.splitlines():
        if line.startswith("export "):
            for assignment in shlex.split(line.removeprefix("export ")):
                name, _, value = assignment.partition("=")
                env[name] = value.replace(README_URL, rlvr_url).replace("exp-42", run_id)
    (command,) = re.findall(r'--reward\.remote_url "\$\((.*?)\)"', block)
    argv = shlex.split(command)
    assert argv[0] == "python"
    path = subprocess.run(
        [sys.executable, *argv[1:]], capture_output=True, text=True, check=True
    ).stdout.strip()
    return env, path


def run_rollouts(reward_file: str) -> list[dict[str, Any]]:
    """Every sample of every prompt at once, as OpenRLHF's rollout actors run them."""
    executor = SingleTurnAgentExecutor(remote_rm_url=reward_file)
    tokenizer = char_tokenizer()
    engine = FixedEngine(tokenizer)

    async def main() -> list[dict[str, Any]]:
        return list(
            await asyncio.gather(
                *(
                    executor.execute(
                        prompt=prompt,
                        label=label,
                        sampling_params=SimpleNamespace(max_tokens=None, logprobs=None),
                        max_length=MAX_LEN,
                        hf_tokenizer=tokenizer,
                        llm_engine=engine,
                    )
                    for prompt, label, _, _ in ROLLOUTS
                    for _ in range(SAMPLES_PER_PROMPT)
                )
            )
        )

    return asyncio.run(main())


@pytest.fixture
def readme_env(rlvr_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    run_id = f"openrlhf-{uuid.uuid4().hex[:8]}"
    env, path = readme_setup(rlvr_url, run_id)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    yield run_id, path


def test_the_reward_file_scores_every_sample_in_batched_requests(
    rlvr_url: str, readme_env: tuple[str, str], vllm_stub: None
) -> None:
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator

    run_id, reward_file = readme_env
    responses = run_rollouts(reward_file)

    expected = [float(r) for _, _, _, rewards in ROLLOUTS for r in rewards]
    assert [response["reward"] for response in responses] == expected
    assert [response["scores"] for response in responses] == expected
    # Into OpenRLHF's experience: a one-value reward tensor and numeric logs per sample.
    generator = SamplesGenerator.__new__(SamplesGenerator)
    for response, want in zip(responses, expected, strict=True):
        experience = generator._process_response_into_experience(response, max_len=MAX_LEN)
        assert experience.rewards.tolist() == [want]
        assert experience.info["rlvr_correct"].tolist() == [want]
        assert experience.info["rlvr_cached"].shape == (1,)

    rows = list_decisions(rlvr_url, run_id=run_id)
    assert len(rows) == len(expected)
    # The samples' completions, without their prompts, grouped by prompt.
    assert {row["completion"] for row in rows} == {c for _, _, cs, _ in ROLLOUTS for c in cs}
    assert len({row["group_id"] for row in rows}) == len(ROLLOUTS)
    # OpenRLHF calls once per sample, from its default thread pool: the calls that pool runs
    # at once reached the service together.
    threads = min(32, (os.cpu_count() or 1) + 4)
    assert len({row["request_id"] for row in rows}) <= math.ceil(len(expected) / threads)


def test_a_service_failure_leaves_the_sample_without_a_reward_not_zero(
    readme_env: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, reward_file = readme_env
    monkeypatch.setenv("RLVR_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    monkeypatch.setenv("RLVR_RETRY_BUDGET_S", "0")
    responses = run_rollouts(reward_file)
    # OpenRLHF logs the RewardServiceError and keeps the sample's reward empty.
    assert {response["reward"] for response in responses} == {None}
