"""Decide a chunk's items: cache hits answer as cached, each distinct miss is verified once (in
the killable child for kinds that need it); then the version's group shaping is applied."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from service.execution.bounded import Call, get_runner, verdict_for
from service.execution.items import PreparedItem
from service.verifiers.answer_leak import answer_leak
from service.verifiers.base import Verdict
from service.verifiers.group_shaping import shape_group
from service.verifiers.registry import VerifierVersionSpec, get_kind

# Verdicts that depend on the machine (a timeout under load, a crash) are not reused.
CACHEABLE_STATUSES = frozenset({"correct", "incorrect", "partial", "unparseable", "invalid"})
# Prompts longer than this are not scanned for a leaked answer (the scan is linear, but a
# worker should not spend its time on megabytes of prompt).
MAX_LEAK_SCAN_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class Decided:
    verdict: Verdict
    duration_ms: float
    # Served by the verdict cache, or by an identical item earlier in the chunk.
    cached: bool
    # A fresh verdict worth keeping in the verdict cache.
    cacheable: bool


def decide(
    items: Sequence[PreparedItem],
    cached: Mapping[str, Verdict],
    spec: VerifierVersionSpec,
    timeout_s: float,
    memory_mb: int,
) -> list[Decided]:
    """One decision per item, in order."""
    misses = [prepared for prepared in items if prepared.cache_key not in cached]
    computed = _verify_misses(misses, spec, timeout_s, memory_mb)
    seen: set[str] = set()
    decided = []
    for prepared in items:
        key = prepared.cache_key
        hit = cached.get(key)
        if hit is not None:
            decided.append(Decided(hit, 0.0, cached=True, cacheable=False))
        elif key in seen:
            decided.append(Decided(computed[key][0], 0.0, cached=True, cacheable=False))
        else:
            verdict, duration_ms = computed[key]
            cacheable = verdict.status in CACHEABLE_STATUSES
            decided.append(Decided(verdict, duration_ms, cached=False, cacheable=cacheable))
        seen.add(key)
    return decided


def _verify_misses(
    items: Sequence[PreparedItem], spec: VerifierVersionSpec, timeout_s: float, memory_mb: int
) -> dict[str, tuple[Verdict, float]]:
    """Verify each distinct cache key once; returns key → (verdict, duration_ms)."""
    distinct: dict[str, PreparedItem] = {}
    for prepared in items:
        distinct.setdefault(prepared.cache_key, prepared)
    config = dict(spec.config)
    calls = [
        Call(spec.kind, p.item.completion, p.item.ground_truth, config, p.item.prompt)
        for p in distinct.values()
    ]
    if get_kind(spec.kind).isolated:
        # The whole chunk in one message to the killable child, each call on its own clock.
        timed = get_runner(timeout_s, memory_mb).call_many(calls)
    else:
        timed = []
        for call in calls:
            started = time.perf_counter()
            verdict = verdict_for(call)
            timed.append((verdict, (time.perf_counter() - started) * 1000.0))
    leaks: dict[tuple[str, type, str | int | float], bool] = {}
    return {
        key: (_flag_answer_leak(verdict, prepared, leaks), duration_ms)
        for (key, prepared), (verdict, duration_ms) in zip(distinct.items(), timed, strict=True)
    }


def _flag_answer_leak(
    verdict: Verdict, prepared: PreparedItem, leaks: dict[tuple[str, type, str | int | float], bool]
) -> Verdict:
    """Flag, for audit, an answer written in the prompt: such data teaches copying.

    ``leaks`` remembers the scan per prompt and ground truth within a chunk: a group's items
    share both, and the scan normalises the whole prompt."""
    prompt, truth = prepared.item.prompt, prepared.item.ground_truth
    if prompt is None or len(prompt) > MAX_LEAK_SCAN_CHARS:
        return verdict
    if type(truth) in (str, int, float):  # the type too: 1 and 1.0 are one key, not one text
        key = (prompt, type(truth), truth)
        leaked = leaks.get(key)
        if leaked is None:
            leaked = leaks[key] = answer_leak(prompt, truth)
    else:
        leaked = answer_leak(prompt, truth)
    if not leaked:
        return verdict
    details = {**verdict.details, "answer_leak": True}
    return Verdict(verdict.reward, verdict.status, verdict.components, details)


def shape_groups(
    spec: VerifierVersionSpec, items: Sequence[PreparedItem], decided: list[Decided]
) -> list[Decided]:
    """Apply the version's group shaping; chunks always hold whole groups."""
    if not spec.group_shaping:
        return decided
    members: dict[str, list[int]] = {}
    for position, prepared in enumerate(items):
        members.setdefault(prepared.group_key, []).append(position)
    shaped = list(decided)
    for positions in members.values():
        verdicts = shape_group(
            spec.group_shaping,
            [decided[p].verdict for p in positions],
            [items[p].item.completion for p in positions],
            [items[p].item.metadata for p in positions],
        )
        for position, verdict in zip(positions, verdicts, strict=True):
            shaped[position] = replace(decided[position], verdict=verdict)
    return shaped
