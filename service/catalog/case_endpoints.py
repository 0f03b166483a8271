"""Canary cases of a verifier: what its promotion gate checks besides the labelled inputs."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, status
from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from service.auth.dependencies import AuditReader, VerifierAdmin
from service.catalog.cases import CaseService
from service.catalog.schemas import NAME_PATTERN
from service.db.dependencies import SessionDep
from service.dependencies import SettingsDep
from service.errors import ERROR_RESPONSES
from service.validation import unstorable_value, without_nul

router = APIRouter(prefix="/v1/verifiers", tags=["verifiers"], responses=ERROR_RESPONSES)
VerifierName = Annotated[str, Path(pattern=NAME_PATTERN)]
NO_NUL = r"^[^\x00]*$"


class CaseIn(BaseModel):
    # Strict: "yes" is not true and 1 is not "1" (the schema says what is accepted).
    model_config = ConfigDict(strict=True)

    prompt: str | None = Field(default=None, max_length=200_000, pattern=NO_NUL)
    completion: str = Field(max_length=1_000_000, pattern=NO_NUL)
    ground_truth: JsonValue = Field(
        description="As in a reward item: finite numbers only; a NUL is kept as U+FFFD."
    )
    verdict: Literal["correct", "incorrect"] = Field(
        description="What the verifier must say: correct (status correct) or incorrect (any "
        "status but correct)."
    )
    note: str | None = Field(default=None, max_length=4000, pattern=NO_NUL)

    @field_validator("ground_truth")
    @classmethod
    def _storable(cls, value: JsonValue) -> JsonValue:
        # Stored (JSONB): NaN, 1e400 or a NUL reached Postgres as a 500 DataError. NUL is
        # legal JSON, so it is kept as the decision log keeps it; the others are refused.
        found = unstorable_value(value, "ground_truth")
        if found:
            raise ValueError(found)
        return without_nul(value)


class CasesIn(BaseModel):
    # Strict: "yes" is not true and 1 is not "1" (the schema says what is accepted).
    model_config = ConfigDict(strict=True)

    cases: list[CaseIn] = Field(min_length=1, max_length=1000)


class CasesAdded(BaseModel):
    added: int


class CaseOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    prompt: str | None
    completion: str
    ground_truth: JsonValue
    verdict: str
    note: str | None
    created_at: datetime


@router.post("/{name}/cases", response_model=CasesAdded, status_code=status.HTTP_201_CREATED)
def add_cases(
    name: VerifierName,
    body: CasesIn,
    session: SessionDep,
    settings: SettingsDep,
    caller: VerifierAdmin,
) -> CasesAdded:
    """Upload canary cases for a verifier you own; the promotion gate checks them."""
    service = CaseService(session, caller.tenant_id, settings.operator_tenant)
    return CasesAdded(added=service.add(name, [c.model_dump() for c in body.cases], caller))


@router.get("/{name}/cases", response_model=list[CaseOut])
def list_cases(
    name: VerifierName, session: SessionDep, settings: SettingsDep, caller: AuditReader
) -> list[CaseOut]:
    """Your canary cases of a verifier."""
    service = CaseService(session, caller.tenant_id, settings.operator_tenant)
    return [CaseOut.model_validate(case) for case in service.cases_of(name)]
