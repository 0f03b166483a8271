"""numpy's comparisons for test code in a sandbox without numpy (MBPP+'s ``assertion``)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from service.verifiers.code.harness import numpy_stand_in as np
from service.verifiers.code.harness.proxies import HarnessLimit


@pytest.mark.parametrize(
    ("out", "exp", "atol", "close"),
    [
        (12.566370614359, 12.566370614359172, 1e-6, True),
        (12.56, 12.566370614359172, 1e-6, False),
        ((2.0, 0.5), [2.0, 0.5000001], 1e-4, True),
        ([[1.0, 2.0], [3.0, 4.0]], ((1.0, 2.0), (3.0, 4.00001)), 1e-4, True),
        ([1.0, 2.0], [1.0, 2.5], 1e-4, False),
        (math.inf, math.inf, 1e-6, True),
        (math.inf, 1e308, 1e-6, False),
        (math.nan, math.nan, 1e-6, False),
        (True, 1.0, 1e-6, True),
        (1 + 1e-9j, 1, 1e-6, True),
        ([], [], 1e-6, True),
    ],
)
def test_allclose_is_numpys_rule_over_plain_data(
    out: Any, exp: Any, atol: float, close: bool
) -> None:
    assert np.allclose(out, exp, rtol=1e-07, atol=atol) is close


@pytest.mark.parametrize(
    ("out", "exp"), [([], 5.0), ([5.0], 5.0), ([[]], [1.0]), ((1.0,), [1.0, 1.0])]
)
def test_shapes_must_match_so_an_empty_answer_is_not_close(out: Any, exp: Any) -> None:
    # numpy broadcasts ``[]`` against 5.0 to an empty comparison and says True.
    assert np.allclose(out, exp, atol=1.0) is False
    assert np.array_equal(out, exp) is False


def test_values_numpy_cannot_compare_raise_as_in_numpy() -> None:
    with pytest.raises(TypeError):
        np.allclose("1.0", 1.0)
    with pytest.raises(TypeError):
        np.allclose([None], [1.0])
    with pytest.raises(ValueError):
        np.allclose([[1.0], [1.0, 2.0]], [[1.0], [1.0, 2.0]])


def test_no_plain_value_is_an_array_or_a_numpy_scalar() -> None:
    for value in (1.5, 1, [1.0], (1.0,)):
        assert not isinstance(value, (np.ndarray, np.float64, np.float32, np.int64))
    assert np.isclose(1.0, 1.0 + 1e-9) and not np.isclose(1.0, 1.1)


def test_isclose_of_a_sequence_and_a_number_is_false_as_shapes_differ() -> None:
    # An answer's list against the test's number: a wrong answer, not the ground truth's limit
    # (an error, a null reward the answer could choose), as allclose has it.
    assert not np.isclose([3.5], 3.5) and not np.isclose(3.5, [[3.5]])


def test_other_names_are_the_ground_truths_limit() -> None:
    module = np._module()
    assert module.allclose is np.allclose and module.inf == math.inf
    with pytest.raises(HarnessLimit, match=r"numpy\.linalg"):
        _ = module.linalg
    with pytest.raises(HarnessLimit):
        np.isclose([1.0], [1.0])
    with pytest.raises(AttributeError):
        _ = module.__path__
