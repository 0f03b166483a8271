"""The ``math`` configuration: defaults, validation and the frozen form the pipeline reads."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service.verifiers.base import InvalidGroundTruth, merge_config

from .extract import FORMS

DEFAULT_CONFIG: dict[str, Any] = {
    # Which answer-extraction forms are enabled (see extract.FORMS).
    "extraction_forms": list(FORMS),
    # None = exact comparison. A number in [0, 0.1] accepts |a-b| <= rel_tol * max(|a|, |b|).
    "rel_tol": None,
    # Leaves longer than this are never given to the symbolic parser (string match only).
    "max_symbolic_length": 1000,
}
# Conventions added after math@1.0.0. A validated config holds them only when they differ from
# these defaults, so every config written before them keeps its version hash.
CONVENTION_DEFAULTS: dict[str, Any] = {
    # "," reads "2,74" as 2.74 (datasets written with a decimal comma); lists need "2, 74".
    "decimal_separator": ".",
    # None = off. N: a decimal with at least N significant digits equals an exact value when
    # they differ by less than one unit in the N-th significant digit (0.0833333333333 = 1/12).
    "min_significant_digits": None,
}

_MAX_REL_TOL = 0.1
_LENGTH_RANGE = (16, 20_000)
_SEPARATORS = (".", ",")
_SIGNIFICANT_RANGE = (6, 100)


@dataclass(frozen=True, slots=True)
class MathConfig:
    """A validated, hashable math verifier config."""

    forms: frozenset[str]
    rel_tol: float | None
    max_length: int
    decimal_comma: bool = False
    min_digits: int | None = None


def _forms(value: Any) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidGroundTruth("config 'extraction_forms' must be a list of form names")
    unknown = [v for v in value if v not in FORMS]
    if unknown or not value:
        raise InvalidGroundTruth(
            f"config 'extraction_forms' must be a non-empty subset of {list(FORMS)}"
        )
    return frozenset(value)


def _rel_tol(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidGroundTruth("config 'rel_tol' must be null or a number")
    if not math.isfinite(value) or not 0 <= value <= _MAX_REL_TOL:
        raise InvalidGroundTruth(f"config 'rel_tol' must be between 0 and {_MAX_REL_TOL}")
    return float(value) or None


def _max_length(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidGroundTruth("config 'max_symbolic_length' must be an integer")
    low, high = _LENGTH_RANGE
    if not low <= value <= high:
        raise InvalidGroundTruth(f"config 'max_symbolic_length' must be in [{low}, {high}]")
    return value


def _decimal_comma(value: Any) -> bool:
    if value not in _SEPARATORS or not isinstance(value, str):
        raise InvalidGroundTruth(f"config 'decimal_separator' must be one of {list(_SEPARATORS)}")
    return value == ","


def _min_digits(value: Any) -> int | None:
    if value is None:
        return None
    low, high = _SIGNIFICANT_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidGroundTruth(
            f"config 'min_significant_digits' must be null or an integer in [{low}, {high}]"
        )
    return value


def validate_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge ``config`` over the defaults; unknown keys or bad values raise InvalidGroundTruth."""
    merged = merge_config(config, {**DEFAULT_CONFIG, **CONVENTION_DEFAULTS})
    _forms(merged["extraction_forms"])
    _rel_tol(merged["rel_tol"])
    _max_length(merged["max_symbolic_length"])
    _decimal_comma(merged["decimal_separator"])
    _min_digits(merged["min_significant_digits"])
    merged["extraction_forms"] = list(merged["extraction_forms"])
    for key, default in CONVENTION_DEFAULTS.items():
        if merged[key] == default and type(merged[key]) is type(default):
            del merged[key]
    return merged


def parse_config(config: Mapping[str, Any] | None) -> MathConfig:
    """Validate and freeze a config for the pipeline."""
    merged = validate_config(config)
    return MathConfig(
        forms=_forms(merged["extraction_forms"]),
        rel_tol=_rel_tol(merged["rel_tol"]),
        max_length=_max_length(merged["max_symbolic_length"]),
        decimal_comma=_decimal_comma(merged.get("decimal_separator", ".")),
        min_digits=_min_digits(merged.get("min_significant_digits")),
    )
