"""/readyz answers 503 while not ready: its OpenAPI says so, with the body's shape, so a client
(or schemathesis) reading the schema does not take the 503 for an undocumented status."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from service.app import create_app
from service.settings import Settings


def test_readyz_documents_its_503_and_its_body(tmp_path: Path) -> None:
    schema: dict[str, Any] = create_app(Settings(data_dir=tmp_path)).openapi()
    responses = schema["paths"]["/readyz"]["get"]["responses"]
    assert set(responses) >= {"200", "503"}
    for status in ("200", "503"):
        body = responses[status]["content"]["application/json"]["schema"]
        assert body == {"$ref": "#/components/schemas/Readiness"}, status
    assert "Retry-After" in responses["503"]["headers"]
    readiness = schema["components"]["schemas"]["Readiness"]
    assert set(readiness["required"]) == {"status", "checks", "problems"}
