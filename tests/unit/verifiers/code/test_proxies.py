"""How the solution's exceptions and objects reach test code (``harness/proxies.py``)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from service.verifiers.code.harness import plain, proxies
from service.verifiers.code.harness.errors import SolutionError
from service.verifiers.code.harness.proxies import (
    HarnessLimit,
    IteratorProxy,
    NotPlainResult,
    ObjectProxy,
    Session,
    operand,
    raised_in_solution,
)


def _crossed(kind: Any, message: str = "", args: Any = None) -> BaseException:
    return Session(link=None).exception([kind, message, "solution.py line 3, in f", args, []])


def test_builtin_exceptions_cross_as_themselves() -> None:
    error = _crossed("ValueError", "negative", ["L", "negative"])
    assert type(error) is ValueError and str(error) == "negative"
    assert "solution.py line 3" in error.__notes__[0]


@pytest.mark.parametrize("name", ["StopIteration", "StopAsyncIteration"])
def test_exceptions_that_end_iteration_do_not_cross_as_themselves(name: str) -> None:
    # As itself, a StopIteration raised by the solution would end ``map``/``filter`` in the
    # test's loop and skip its asserts.
    error = _crossed(name)
    assert type(error) is SolutionError
    assert not isinstance(error, (StopIteration, StopAsyncIteration))
    assert name in str(error)


@pytest.mark.parametrize("name", ["KeyboardInterrupt", "SystemExit", "GeneratorExit"])
def test_exceptions_that_end_a_run_are_wrong_answers_no_test_code_catches(name: str) -> None:
    session = Session(link=None)
    with pytest.raises(NotPlainResult):
        session.exception([name, "", "", None, []])
    assert session.invalid is not None and name in session.invalid
    with pytest.raises(NotPlainResult):  # a class of its own deriving from one
        _crossed([7, "solution", "Stop", ["BaseException"]])


def test_a_malformed_exception_is_the_solution_process_gone() -> None:
    for described in (["solution", "Custom", "x", ""], ["NoSuchError", "", "", None, []]):
        assert isinstance(_crossed(described), proxies.SolutionGone)


def test_the_solutions_exceptions_are_told_from_the_drivers_own() -> None:
    # A MemoryError the solution raised (or a class of its own it named so) is its word, which
    # is a crash; the driver's own MemoryError is a fact, the test's memory limit.
    crossed = _crossed("MemoryError", "out of memory")
    assert type(crossed) is MemoryError and raised_in_solution(crossed)
    assert raised_in_solution(_crossed([3, "solution", "MemoryError", ["Exception"]]))
    assert not raised_in_solution(MemoryError()) and not raised_in_solution(ValueError())


def test_a_module_the_solution_gave_is_its_failure_where_the_tests_own_is_a_limit() -> None:
    # ``inf = math`` in the solution, and a test that passes ``inf`` on: a null reward the
    # solution could choose, were it the ground truth's limit.
    session = Session(link=None)
    given = session.attribute({"m": "math"}, "inf")
    with pytest.raises(NotPlainResult):
        session.arguments([[1, given]], {})
    session.begin_test()  # the next test passes its own module: the ground truth's limit
    with pytest.raises(HarnessLimit):
        session.arguments([given], {})


class _LyingLink:
    """A solution process whose object yields 1 and 2 but would say it holds anything."""

    def __init__(self, items: Any = (1, 2)) -> None:
        self.items = iter(items)

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        assert message["op"] == "dunder"
        lies = {"__contains__": {"v": True}, "__len__": {"v": 6}, "__getitem__": {"v": 8}}
        if message["name"] == "__next__":
            return {"v": ["L", *itertools.islice(self.items, message["args"][0])]}
        return {"v": ["L", 1, 2]} if message["name"] == "__iter__" else lies[message["name"]]


def test_membership_length_and_index_of_an_iterator_come_from_its_items() -> None:
    reiterable = IteratorProxy(Session(_LyingLink()), 1, "iterator from f", once=False)
    assert list(reiterable) == [1, 2] and list(reiterable) == [1, 2]
    assert 2 in reiterable and 3 not in reiterable and [1, 2] not in reiterable
    assert len(reiterable) == 2 and reiterable[1] == 2 and reiterable[-1:] == [2]


def test_a_one_pass_iterator_is_consumed_as_in_python() -> None:
    iterator = IteratorProxy(Session(_LyingLink()), 1, "iterator from f", once=True)
    assert 1 in iterator and next(iterator) == 2  # consumed up to the item found
    assert list(iterator) == [] and 2 not in iterator
    with pytest.raises(StopIteration):
        next(iterator)
    with pytest.raises(TypeError):
        len(iterator)
    with pytest.raises(TypeError):
        iterator[0]


def test_an_endless_iterator_is_read_only_as_far_as_needed() -> None:
    iterator = IteratorProxy(Session(_LyingLink(itertools.count())), 1, "count", once=True)
    assert next(iterator) == 0 and 1000 in iterator and next(iterator) == 1001


class _ContainerLink:
    """A solution process whose object's class has a ``__contains__`` (it answers ``own``) or
    none (it answers with the items it iterates)."""

    def __init__(self, own: Any) -> None:
        self.own = own

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        assert message["op"] == "dunder" and message["name"] == "__contains__"
        if self.own is None:
            return {"v": ["L", 1, 2], "items": True}
        return self.own


def test_membership_in_an_object_is_its_classs_answer_as_in_python() -> None:
    # A BST's __contains__ is the answer under test: asked, its result's truth is taken.
    assert 5 in ObjectProxy(Session(_ContainerLink({"v": True})), 1, "tree")
    assert 5 not in ObjectProxy(Session(_ContainerLink({"v": ["L"]})), 1, "tree")
    # Without one, Python compares the items it iterates: here, over the plain items.
    by_items = ObjectProxy(Session(_ContainerLink(None)), 1, "STOPWORDS")
    assert 1 in by_items and "the" not in by_items
    # A result that is not plain data has no truth test code may take.
    with pytest.raises(NotPlainResult):
        _ = 5 in ObjectProxy(Session(_ContainerLink({"o": 3})), 1, "tree")


def test_an_object_found_to_be_an_iterator_is_its_items_wherever_it_comes_from() -> None:
    session = Session(_LyingLink())
    words = session.attribute({"o": 1, "it": True, "once": True}, "WORDS")
    assert type(words) is IteratorProxy and 1 in words and "the" not in words
    assert type(session.attribute({"o": 1}, "bag")) is ObjectProxy


def test_only_an_object_of_a_class_with_call_is_callable() -> None:
    session = Session(_LyingLink())
    assert callable(session.attribute({"o": 1, "call": True}, "multiplier"))
    assert not callable(session.attribute({"o": 1}, "bag"))


class _RaisingLink(_LyingLink):
    """A generator of the solution's that yields 1 and 2, then raises ValueError: the solution
    process answers with the items it read and what the generator raised after them."""

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        count = message["args"][0]
        items = list(itertools.islice(self.items, count))
        if len(items) == count:
            return {"v": ["L", *items]}
        raised = ["ValueError", "boom", "solution.py line 3, in g", ["L", "boom"], []]
        return {"v": ["L", *items], "raised": raised}


def test_what_a_generator_raises_comes_after_the_items_it_yielded() -> None:
    # Read ahead in chunks, the items before the exception are not lost with their chunk.
    iterator = IteratorProxy(Session(_RaisingLink()), 1, "iterator from g", once=True)
    seen = []
    with pytest.raises(ValueError, match="boom"):
        for item in iterator:
            seen.append(item)
    assert seen == [1, 2] and list(iterator) == []
    found = IteratorProxy(Session(_RaisingLink()), 1, "iterator from g", once=True)
    assert 2 in found


def test_a_returned_iterator_as_an_operand_is_its_items_and_how_they_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The host finishes a lifted assert over them (``asserts.decode_operand``).
    iterator = IteratorProxy(Session(_LyingLink()), 1, "iterator from f", once=True)
    assert operand(iterator) == ["IT", "once", "end", "", ["L", 1, 2]]
    consumed = IteratorProxy(Session(_LyingLink()), 1, "iterator from f", once=True)
    assert next(consumed) == 1 and operand(consumed) == ["IT", "once", "end", "", ["L", 2]]
    raising = IteratorProxy(Session(_RaisingLink()), 1, "iterator from g", once=True)
    assert operand(raising) == ["IT", "once", "raised", "ValueError: boom", ["L", 1, 2]]
    monkeypatch.setattr(proxies, "OPERAND_ITEMS", 10)
    endless = IteratorProxy(Session(_LyingLink(itertools.count())), 1, "count", once=True)
    read = operand(endless)
    assert read[1:3] == ["once", "cut"] and len(read[4]) > 10  # a chunk's items past the 10th


def test_a_returned_view_as_an_operand_is_its_items_and_its_kind() -> None:
    keys = IteratorProxy(Session(_LyingLink()), 1, "iterator from f", once=False, kind="keys")
    assert operand(keys) == ["IT", "keys", "end", "", ["L", 1, 2]]
    unknown = IteratorProxy(Session(_LyingLink()), 1, "iterator from f", once=False)
    with pytest.raises(plain.NotPlain):
        operand(unknown)
    assert operand((1, [2])) == ["T", 1, ["L", 2]]
