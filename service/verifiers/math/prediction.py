"""ANTLR's full-context predictions for the LaTeX grammar, remembered by what they depend on.

latex2sympy's grammar is ambiguous where an answer is most common: after ``x`` in
``x^{2}+3x-40`` the superscript can belong to the atom or to the power rule above it, and ANTLR
resolves that by a full-context (LL) prediction that reads to the end of the input. ANTLR caches
only its SLL predictions, so that prediction ran again on every polynomial: 3-8 ms a parse,
most of a slow answer's verification.

A prediction is a function of the decision, the parser's precedence level (the grammar's only
predicates are precedence predicates), the invoking states of the rule contexts around it and
the token types from the current token to the end of the input (``ParserATNSimulator`` reads
nothing else). Keyed by exactly that, a remembered prediction is the one ANTLR would make, so
the parse tree is the same; ``tests/unit/verifiers/math/test_prediction.py`` checks it tree for
tree. Only the decisions that have needed full context are looked up: the others stay on ANTLR's
own DFA cache, which is cheaper than building a key.
"""

from __future__ import annotations

from typing import Any

from antlr4.atn.ParserATNSimulator import ParserATNSimulator

# Keys are a few hundred bytes; past this many the table starts again empty.
MAX_PREDICTIONS = 16_384

_full_context_decisions: set[int] = set()
_predictions: dict[tuple[Any, ...], int] = {}


class RememberingSimulator(ParserATNSimulator):
    """``ParserATNSimulator`` that remembers the predictions of full-context decisions."""

    _needed_full_context = False

    def execATNWithFullContext(self, *args: Any) -> int:
        self._needed_full_context = True
        alt: int = super().execATNWithFullContext(*args)
        return alt

    def adaptivePredict(self, input: Any, decision: int, outerContext: Any) -> int:
        if decision not in _full_context_decisions:
            self._needed_full_context = False
            alt: int = super().adaptivePredict(input, decision, outerContext)
            if self._needed_full_context:
                _full_context_decisions.add(decision)
            return alt
        key = (decision, self.parser.getPrecedence(), _invoking_states(outerContext), _types(input))
        remembered = _predictions.get(key)
        if remembered is not None:
            return remembered
        alt = super().adaptivePredict(input, decision, outerContext)
        if len(_predictions) >= MAX_PREDICTIONS:
            _predictions.clear()
        _predictions[key] = alt
        return alt


def _invoking_states(context: Any) -> tuple[int, ...]:
    states = []
    while context is not None:
        states.append(context.invokingState)
        context = context.parentCtx
    return tuple(states)


def _types(stream: Any) -> tuple[int, ...]:
    """The types of the tokens the parser can still see (its channel), to the end of input."""
    stream.fill()
    channel = stream.channel
    return tuple(t.type for t in stream.tokens[stream.index :] if t.channel == channel)


def remember_predictions(parser: Any) -> Any:
    """Give ``parser`` a simulator that remembers full-context predictions; return it."""
    parser._interp = RememberingSimulator(
        parser, parser.atn, parser.decisionsToDFA, parser.sharedContextCache
    )
    return parser


def remembered_count() -> int:
    return len(_predictions)
