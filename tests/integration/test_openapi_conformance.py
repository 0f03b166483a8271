"""The app against its own OpenAPI: schemathesis with every check, on the embedded app, with the
admin key. Whatever the schema calls valid must be served, whatever it calls invalid refused
with a documented status, no answer may be a 5xx or undocumented, every response must match
its schema.

What JSON Schema cannot state is supplied as known test data (schemathesis ``parameters``),
each rule with its own integration test elsewhere: which verifier names exist in the catalogue
(the schema has their pattern, not the catalogue), one OpenRLHF label per query, unique item
ids, a kind's config keys, group shaping's bounds, a grader's shape. The coverage phase does
not take such data, so on those operations it is not asked to have valid data accepted; it
still sends its boundary and invalid values, and every other check holds there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from schemathesis.engine import events, from_schema
from schemathesis.python.asgi import shutdown_lifespans

from tests.support import AUTH, embedded_settings_in

pytestmark = pytest.mark.slow

# Examples per operation and phase: enough to find each finding of the review again, small
# enough for the whole run to stay near a minute on two cores.
MAX_EXAMPLES = 25
SEED = 20261123

KNOWN_DATA: list[dict[str, Any]] = [
    {
        # 503 is /readyz's documented answer while the embedded pools warm up (schemathesis
        # starts the app and asks at once): not a server error; its schema is still checked.
        "include-path": "/readyz",
        "checks": {"not_a_server_error": {"enabled": False}},
    },
    {
        "include-path": "/v1/rewards",
        "parameters": {
            "body.verifier": "math",
            "body.items[*].verifier": "math@stable",
            # Ids default to the item's index, so they are unique.
            "body.items[*].id": None,
        },
    },
    {
        "include-path": "/compat/openrlhf",
        "parameters": {
            "verifier": "math",
            "body.query": ["So the answer is \\boxed{4}."],
            "body.prompts": ["So the answer is "],
            "body.labels": ["4"],
        },
    },
    {
        "include-path-regex": "^/compat/nemo-gym/",
        "parameters": {"verifier": "math", "body.expected_answer": "4"},
    },
    {
        # Both versions exist (the fixture publishes 1.1.0); starting the same experiment
        # again while it runs is a conflict.
        "include-path": "/v1/experiments",
        "parameters": {"body.verifier": "math", "body.control": "1.0.0", "body.treatment": "1.1.0"},
        "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "409"]}},
    },
    {
        "include-path": "/v1/replays",
        "parameters": {"body.target": "math@1.0.0", "body.targets": None},
    },
    {
        # DELETE cancels a replay; the cancelled replay stays readable, as an audit record of
        # what was done (tests/integration/experiments/test_replays.py).
        "include-path-regex": "^/v1/replays/\\{replay_id\\}",
        "checks": {"use_after_free": {"enabled": False}},
    },
    {
        "include-path": "/v1/verifiers/{name}/versions",
        "parameters": {"body.kind": "math", "body.config": {}, "body.group_shaping": None},
    },
    {
        "include-path-regex": "^/v1/fine_tuning/alpha/graders/",
        "parameters": {
            "body.grader": {
                "type": "string_check",
                "name": "exact",
                "input": "{{sample.output_text}}",
                "reference": "{{item.answer}}",
                "operation": "eq",
            },
            "body.item": {"answer": "4"},
        },
    },
]


# Coverage-phase cases ignore the pinned data: acceptance is asked of the fuzzing phase's.
_PINNED = {"phases": {"coverage": {"checks": {"positive_data_acceptance": {"enabled": False}}}}}


def _pinned(operation: dict[str, Any]) -> dict[str, Any]:
    checks = operation.get("checks", {})
    return {**operation, **_PINNED, **({"checks": checks} if checks else {})}


def _config(operations: list[dict[str, Any]], **options: Any) -> Any:
    return schemathesis.Config.from_dict(
        {
            **options,
            "seed": SEED,
            "headers": AUTH,
            # No example database: every run (here or in CI) draws the same cases from SEED.
            "generation": {"max-examples": MAX_EXAMPLES, "database": "none"},
            "checks": {"enabled": True},
            "operations": [_pinned(operation) for operation in operations],
        }
    )


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from service.app import create_app

    settings = embedded_settings_in(tmp_path_factory.mktemp("conformance"), local_workers=1)
    application = create_app(settings)
    # A second math version for the experiment and replay routes (no lifespan needed for it).
    published = TestClient(application, headers=AUTH).post(
        "/v1/verifiers/math/versions",
        json={"version": "1.1.0", "kind": "math", "config": {"rel_tol": 0.01}},
    )
    assert published.status_code in (200, 201), published.text
    yield application
    shutdown_lifespans()  # schemathesis started the app's lifespan (its worker pool)


def _failures(schema: Any) -> list[str]:
    found: list[str] = []
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            for nodes in event.recorder.checks.values():
                for node in nodes:
                    if node.failure_info is not None:
                        failure = node.failure_info.failure
                        found.append(
                            f"{failure.operation} [{node.name}, {event.phase.value}] "
                            f"{failure.title}: "
                            f"{failure.message[:300]}\n{node.failure_info.code_sample[:600]}"
                        )
        elif isinstance(event, events.NonFatalError | events.FatalError):
            found.append(f"schemathesis error: {event!r}")
    return found


def test_the_api_conforms_to_its_own_openapi(app: Any) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=_config(KNOWN_DATA))
    failures = _failures(schema)
    assert not failures, f"{len(failures)} failures:\n\n" + "\n\n".join(failures[:20])
