"""The ``ifeval`` pipeline: answer text -> response variants -> one check per instruction."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from service.verifiers.base import Status, Verdict

from .config import DEFAULT_CONFIG, validate_config
from .ground_truth import parse_ground_truth
from .instruction import Outcome
from .known_instructions import Prepared
from .text import warm_up

CODE_VERSION = "1.1.0"

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_MAX_ARG_CHARS = 200


def answer_text(completion: str, after_think: bool) -> tuple[str, str]:
    """The text to check and what was done about a reasoning block."""
    if not after_think:
        return completion, "not removed"
    if _THINK_CLOSE in completion:
        return completion.rsplit(_THINK_CLOSE, 1)[1].strip(), "removed"
    if _THINK_OPEN in completion:
        # Cut off while still thinking: there is no answer, and the reasoning must not count.
        return "", "unterminated <think>: no answer"
    return completion, "none"


def loose_variants(text: str) -> list[tuple[str, str]]:
    """The reference's loose-mode responses, in its order, without repeats."""
    lines = text.split("\n")
    without_first = "\n".join(lines[1:]).strip()
    without_last = "\n".join(lines[:-1]).strip()
    without_both = "\n".join(lines[1:-1]).strip()
    candidates = [
        ("as is", text),
        ("without *", text.replace("*", "")),
        ("without first line", without_first),
        ("without last line", without_last),
        ("without first and last lines", without_both),
        ("without first line and *", without_first.replace("*", "")),
        ("without last line and *", without_last.replace("*", "")),
        ("without first and last lines and *", without_both.replace("*", "")),
    ]
    seen: set[str] = set()
    unique = []
    for name, variant in candidates:
        if variant not in seen:  # same text, same verdict: check it once
            seen.add(variant)
            unique.append((name, variant))
    return unique


def _check(prepared: Prepared, variants: list[tuple[str, str]]) -> tuple[Outcome, str | None]:
    first: Outcome | None = None
    for name, variant in variants:
        # The reference never passes a blank response to a checker: it is simply not followed.
        if not variant.strip():
            outcome = Outcome(False, "empty response")
        else:
            outcome = prepared.instruction.check(variant, prepared.args)
        if outcome.followed:
            return outcome, name
        first = first or outcome
    assert first is not None  # variants always holds the response itself
    return first, None


def _shown(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_ARG_CHARS:
        return value[: _MAX_ARG_CHARS - 3] + "..."
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return value


def _component_names(instructions: tuple[Prepared, ...]) -> list[str]:
    names: list[str] = []
    for prepared in instructions:
        name, n = prepared.instruction.id, 1
        while name in names or name == "instruction":
            n += 1
            name = f"{prepared.instruction.id}#{n}"
        names.append(name)
    return names


def run(completion: Any, instructions: tuple[Prepared, ...], config: Mapping[str, Any]) -> Verdict:
    """Check validated instructions under a validated config."""
    text, think = answer_text(
        completion if isinstance(completion, str) else "", config["after_think"]
    )
    variants = loose_variants(text) if config["mode"] == "loose" else [("as is", text)]
    results: list[dict[str, Any]] = []
    for prepared in instructions:
        outcome, variant = _check(prepared, variants)
        result: dict[str, Any] = {
            "id": prepared.instruction.id,
            "kwargs": {k: _shown(v) for k, v in prepared.args.items()},
            "followed": outcome.followed,
            "measure": outcome.measure,
        }
        if config["mode"] == "loose" and variant is not None:
            result["variant"] = variant
        results.append(result)

    followed = sum(1 for r in results if r["followed"])
    total = len(results)
    status: Status
    if followed == total:
        reward, status = 1.0, "correct"
    elif config["reward"] == "fraction" and followed:
        reward, status = followed / total, "partial"
    else:
        reward, status = 0.0, "incorrect"
    if not text.strip():
        status = "unparseable"  # nothing to check: no response after the reasoning
    components = {"instruction": reward}
    for name, result in zip(_component_names(instructions), results, strict=True):
        components[name] = 1.0 if result["followed"] else 0.0
    details = {
        "mode": config["mode"],
        "reward": config["reward"],
        "followed": followed,
        "total": total,
        "checked_chars": len(text),
        "think": think,
        "instructions": results,
    }
    return Verdict(reward=reward, status=status, components=components, details=details)


@cache
def _warmed_up() -> bool:
    # Loading NLTK and the language profiles takes seconds: do it once, before workers fork.
    warm_up()
    return True


def verify(
    completion: str,
    ground_truth: Any,
    config: Mapping[str, Any],
    prompt: str | None = None,
) -> Verdict:
    """Check the instructions of the ground truth against the completion."""
    _warmed_up()
    options = DEFAULT_CONFIG if not config else validate_config(config)
    return run(completion, parse_ground_truth(ground_truth), options)
