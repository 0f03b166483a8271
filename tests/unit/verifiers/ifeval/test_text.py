"""Text measures: words, the two sentence splitters, tokens and seeded language detection."""

from __future__ import annotations

import random

import langdetect

from service.verifiers.ifeval.text import (
    count_words,
    detect_language,
    punkt_sentences,
    split_into_sentences,
    word_tokens,
)


def test_words_are_runs_of_word_characters() -> None:
    assert count_words("don't stop-believing, x_y 3.14") == 7


def test_regex_splitter_keeps_titles_and_decimals_inside_sentences() -> None:
    assert split_into_sentences("Dr. Smith paid 3.5 dollars. He left!") == [
        "Dr. Smith paid 3.5 dollars.",
        "He left!",
    ]


def test_punkt_knows_english_abbreviations() -> None:
    assert len(punkt_sentences("Mr. Smith met Dr. Jones at 5 p.m. yesterday. They talked.")) == 2


def test_tokens_follow_nltk_word_tokenize() -> None:
    assert word_tokens("Don't stop. It's NASA's call.") == [
        "Do",
        "n't",
        "stop",
        ".",
        "It",
        "'s",
        "NASA",
        "'s",
        "call",
        ".",
    ]


def test_language_is_detected() -> None:
    assert detect_language("The weather is lovely today and we will walk in the park.") == "en"
    assert detect_language("Le chat dort sur le canapé pendant que la pluie tombe.") == "fr"


def test_text_without_letters_has_no_language() -> None:
    assert detect_language("12345 678") is None


def test_detection_is_repeatable_whatever_the_global_seed() -> None:
    # Unseeded, langdetect says "es" or "it" for this about half the time each.
    text = "radio video"
    saved = langdetect.DetectorFactory.seed
    try:
        langdetect.DetectorFactory.seed = None
        answers = {detect_language(text) for _ in range(20)}
    finally:
        langdetect.DetectorFactory.seed = saved
    assert len(answers) == 1
    assert langdetect.DetectorFactory.seed == saved  # the global seed is not ours to set


_TOKENIZER_PIECES = [
    *"aB .,;:!?'\"`()[]{}<>-\u2012\u2013\u2014\u2015\u2026",
    *"\u00ab\u00bb\u201c\u201d\u2018\u2019\u201e",
    *"$%&@#*\n\t0189",
    *("Dr.", "U.S.", "e.g.", "can't", "CANNOT", "Gonna", "'tis", "--", "...", "Mr.", "NASA's"),
    *(
        "gimme",
        "LeMMe",
        "gotta",
        "wanna ",
        "more'n",
        "d'ye",
        " 'Twas",
        "g\u0130mme",
        "g\u0131mme",
        " 'ti\u017f",
    ),
    *("3.14", "1,000", "ellipsis...", "end.", '"Quoted."', "(aside)", "  ", "\n\n", "''", "``"),
]


def _tokenizer_texts() -> list[str]:
    rng = random.Random(20_261_124)
    texts = [
        "Mr. Smith met Dr. Jones at 5 p.m. yesterday. They talked.",
        'He said, "Stop!" Then... he left (quietly). Didn\'t he?',
        "WE CAN'T GO. I'm sure -- aren't you? It costs $4.99 in the U.S. today.",
    ]
    for _ in range(1500):
        texts.append("".join(rng.choice(_TOKENIZER_PIECES) for _ in range(rng.randint(0, 80))))
    return texts


def test_tokenizers_without_timeouts_split_as_nltk_does() -> None:
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from service.verifiers.ifeval.tokenizers import punkt, treebank

    nltk_punkt = PunktSentenceTokenizer(punkt()._params)
    nltk_words = NLTKWordTokenizer()
    sentences = 0
    for text in _tokenizer_texts():
        expected = nltk_punkt.tokenize(text)
        assert punkt().tokenize(text) == expected, text
        for sentence in expected:
            assert treebank().tokenize(sentence) == nltk_words.tokenize(sentence), sentence
            sentences += 1
    assert sentences > 1500


def test_only_the_whitespace_rule_of_the_word_tokenizer_always_runs() -> None:
    """Every other substitution is skipped where it cannot match (see ``tokenizers``)."""
    from nltk.tokenize.destructive import NLTKWordTokenizer

    from service.verifiers.ifeval.tokenizers import _NeedsOneOf, _NeedsWord, treebank

    tokenizer = treebank()
    lists = ("STARTING_QUOTES", "PUNCTUATION", "ENDING_QUOTES")
    rules = [rule for name in lists for rule, _ in getattr(tokenizer, name)]
    rules += [tokenizer.PARENS_BRACKETS[0], tokenizer.DOUBLE_DASHES[0]]
    rules += [*tokenizer.CONTRACTIONS2, *tokenizer.CONTRACTIONS3]
    nltk_rules = sum(len(getattr(NLTKWordTokenizer, n)) for n in lists) + 2
    nltk_rules += len(NLTKWordTokenizer.CONTRACTIONS2) + len(NLTKWordTokenizer.CONTRACTIONS3)
    assert len(rules) == nltk_rules
    unguarded = [rule.pattern for rule in rules if not isinstance(rule, _NeedsOneOf | _NeedsWord)]
    assert unguarded == [r"\s+"]


def test_nltk_itself_keeps_its_timeouts() -> None:
    from nltk import redos
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktLanguageVars, PunktToken

    from service.verifiers.ifeval.tokenizers import punkt, treebank

    punkt(), treebank()  # built: NLTK's classes must be as shipped all the same
    assert isinstance(NLTKWordTokenizer.STARTING_QUOTES[0][0], redos.TimedPattern)
    assert isinstance(NLTKWordTokenizer().PUNCTUATION[0][0], redos.TimedPattern)
    assert isinstance(PunktToken._RE_NUMERIC, redos.TimedPattern)
    assert isinstance(PunktLanguageVars().period_context_re(), redos.TimedPattern)
    assert not isinstance(treebank().PUNCTUATION[0][0], redos.TimedPattern)
