"""Language detection computes exactly what langdetect computes: n-grams, probabilities, answer.

langdetect's own ``Detector`` (from the same seeded factory) is the oracle; the probabilities
are compared as floats for equality, so a change in the order of any operation would show.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import pytest

from service.verifiers.ifeval import language
from service.verifiers.ifeval.language import detect, extract_ngrams, load_profiles, model

SEED = 20_261_124

_WORDS = [
    "the river runs past the old mill and the garden",
    "Le chat dort sur le canapé pendant que la pluie tombe",
    "Der Hund läuft schnell über die große Straße",
    "El niño come una manzana en la cocina",
    "Привет мир, это тест на русском языке",
    "你好世界，这是一个中文句子",
    "こんにちは、カタカナとひらがなの文です",
    "안녕하세요 한국어 문장입니다",
    "مرحبا بالعالم هذه جملة عربية ی",
    "Tiếng Việt có dấu: ạ ả ấ ầ ẩ ẫ ậ",
    "a\u0301 e\u0300 o\u0303 u\u0309 i\u0323",  # Vietnamese letter + combining mark
    "Romanian ș ț Ș Ț and Greek αβγ Ελληνικά",
    "NASA and the USA sent THE ROCKET up",
    "see https://example.com/a?b=c and mail me@example.org now",
    "radio video",
]
_PIECES = [*"aZé ЖжÄß中あア가ب\u0301\u2019\u201c,.!?\n\t0123456789-_'", "  ", "   ", "AB"]


def _texts(rng: random.Random) -> list[str]:
    texts = list(_WORDS)
    for _ in range(120):
        texts.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6))))
    for _ in range(120):
        texts.append("".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 200))))
    texts += ["", " ", "12345 678", "...", "A", "ab", "AB CD", "x" * 12_000]
    return texts


Reference = tuple[Any, list[str], list[float] | None, str | None]


@cache
def _langdetect() -> Any:
    """langdetect's own factory and table (DetectorFactory.add_profile), the same profiles."""
    from langdetect.detector_factory import DetectorFactory

    factory = DetectorFactory()
    factory.seed = 0
    profiles = load_profiles()
    for index, profile in enumerate(profiles):
        factory.add_profile(profile, index, len(profiles))
    return factory


def _reference(text: str) -> Reference:
    """langdetect itself: the prepared detector, its n-grams, probabilities and answer."""
    from langdetect.lang_detect_exception import LangDetectException

    factory = _langdetect()
    prepared = factory.create()
    prepared.append(text)
    prepared.cleaning_text()
    ngrams = prepared._extract_ngrams()
    detector = factory.create()
    detector.append(text)
    try:
        answer = str(detector.detect())
    except LangDetectException:
        return prepared, ngrams, None, None
    return prepared, ngrams, list(detector.langprob), answer


@pytest.fixture(scope="module")
def cases() -> list[tuple[str, Reference]]:
    return [(text, _reference(text)) for text in _texts(random.Random(SEED))]


def test_the_matrix_is_langdetects_table() -> None:
    table = _langdetect().word_lang_prob_map
    ours = model()
    assert ours.factory.get_lang_list() == _langdetect().get_lang_list()
    # Longer keys are in langdetect's table too, with zeros: n-grams never have them.
    assert set(ours.index) == {word for word in table if 1 <= len(word) <= 3}
    assert all(ours.matrix[row].tolist() == table[word] for word, row in ours.index.items())


def test_the_prepared_text_is_langdetects(cases: list[tuple[str, Reference]]) -> None:
    """append and cleaning_text, as ``_prepare`` does them: ASCII, Latin and other scripts,
    runs of spaces, URLs and mail addresses, the Vietnamese normaliser and the 10,000 cut."""
    cleaned = 0
    for text, (prepared, _, _, _) in cases:
        assert language._prepare(text).text == prepared.text, text[:80]
        # Mostly non-Latin text loses its Latin letters: that branch is compared too.
        cleaned += prepared.text != _langdetect_appended(text)
    assert cleaned > 0


def _rows_of(ngrams: list[str]) -> list[int]:
    return [model().index[gram] for gram in ngrams]


def _langdetect_appended(text: str) -> str:
    detector = _langdetect().create()
    detector.append(text)
    return str(detector.text)


def test_ngrams_are_langdetects(cases: list[tuple[str, Reference]]) -> None:
    for text, (prepared, expected, _, _) in cases:
        assert extract_ngrams(prepared.text) == expected, text[:80]


def test_probabilities_are_langdetects_to_the_last_bit(cases: list[tuple[str, Reference]]) -> None:
    compared = 0
    for text, (prepared, ngrams, expected, _) in cases:
        if expected is None:
            continue
        assert language._probabilities(prepared, _rows_of(ngrams)) == expected, text[:80]
        compared += 1
    assert compared > 0.8 * len(cases)


def test_the_rows_are_those_of_the_ngrams(cases: list[tuple[str, Reference]]) -> None:
    index = model().index
    for text, (prepared, expected, _, _) in cases:
        assert language._rows(prepared.text) == [index[gram] for gram in expected], text[:80]


def test_answers_are_langdetects(cases: list[tuple[str, Reference]]) -> None:
    answers = set()
    for text, (_, _, _, expected) in cases:
        assert detect(text) == expected, text[:80]
        answers.add(expected)
    # Many scripts and languages, and texts without features: the comparison covers them.
    assert {None, "en", "fr", "ru", "ar", "ko", "ja", "vi"} <= answers


def test_full_caches_and_long_words_change_nothing(
    cases: list[tuple[str, Reference]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(language, "_NORMALISED_CACHE_LIMIT", 4)
    monkeypatch.setattr(language, "_normalised", {})
    monkeypatch.setattr(language, "_WORD_CACHE_LIMIT", 8)
    monkeypatch.setattr(language, "_word_cache", {})
    monkeypatch.setattr(language, "_CACHED_WORD_CHARS", 3)
    for text, (prepared, expected, _, _) in cases[:150]:
        # The cached path: each word's rows.
        assert language._rows(prepared.text) == _rows_of(expected), text[:80]
    assert 0 < len(language._word_cache) <= 8 + len(cases[149][0])


def test_detection_stops_once_the_leader_is_certain_and_names_the_same_leader(
    cases: list[tuple[str, Reference]],
) -> None:
    stopped = 0
    for text, (prepared, ngrams, expected, _) in cases:
        if expected is None:
            continue
        partial = language._probabilities(prepared, _rows_of(ngrams), decisive=True)
        leader = max(range(len(expected)), key=expected.__getitem__)
        assert max(range(len(partial)), key=partial.__getitem__) == leader, text[:80]
        if partial != expected:  # stopped early: what no later trial could have overturned
            stopped += 1
            ahead = partial[leader] - sorted(partial)[-2]
            assert ahead > 1 - sum(partial), text[:80]
    # Clear texts (most here) need only some of langdetect's 7 trials.
    assert stopped > 0.5 * len(cases)
