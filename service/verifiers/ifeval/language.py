"""Language detection: langdetect's answer, bit for bit, in a third of its time.

Per detection langdetect extracts the text's n-grams through a method call per character, then
runs 7 seeded trials of ~60 updates of a 55-language probability vector, each update a Python
loop over the languages. That was half of a verification with a language check. Here the same
algorithm runs on the same data, with the same floating-point operations on the same values in
the same order, and the same random stream (a ``random.Random`` seeded as langdetect seeds it,
its words drawn as its ``choice`` and ``gauss`` draw them, in the same order); only the
interpretation overhead goes:

- the table: ``DetectorFactory.add_profile``'s probabilities, same arithmetic, in one float64
  matrix (a row per n-gram) instead of 87,598 lists of 55 Python floats, so it also takes
  less memory;
- n-grams: ``NGram.normalize`` (a pure function of one character) runs once per distinct
  character, through ``str.translate``; the n-gram buffer starts over at every space, so the
  n-grams of a word are found once per word (``_word_ngrams``) and remembered;
- updates: ``prob[j] *= weight + row[j]`` for all j is one numpy multiplication by a row of
  ``weight + row`` (the same IEEE sum, computed once per trial). Elementwise addition,
  multiplication and division are correctly rounded, so each value is the one the loop made;
  no sum is ever taken by numpy: the normalisation sums with the builtin ``sum`` over the same
  values in the same order (whatever this Python's ``sum`` does, langdetect's did too).

- text preparation (``_prepare``): URL and e-mail removal and the Vietnamese normaliser are
  langdetect's own regular expressions, called as is; its character loop (the 10,000-character
  cut, a run of spaces kept as one) is one slice and one substitution; its count of Latin and
  non-Latin letters, which can change nothing in ASCII text, runs only on other text;
- the rows: each word's n-grams are remembered as their rows of the matrix, so a text's
  rows are one list of integers, not a dictionary lookup per n-gram;
- updates between two normalisations: the draws do not depend on the vector, so the five
  rows of a stretch are drawn first and multiplied in one ``numpy.multiply.reduce`` down a
  matrix whose first row is the vector: the same products, in the same order (a reduction
  over the outer axis multiplies row after row; the test compares every bit).

The final ranking is langdetect's own code, called as is.
``tests/unit/verifiers/ifeval/test_language.py`` compares the prepared text, the n-grams and
the probabilities themselves, not only the answer, with langdetect's ``Detector``.

``detect`` asks only for the leader, so its trials stop once the leader is ahead by more than
the remaining trials could add to any other language: the answer is langdetect's, from a
partial vector (``_probabilities(..., decisive=True)``, tested against the full one).
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Container, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy

_NORMALISED_CACHE_LIMIT = 1 << 16  # distinct characters remembered (a table of str -> str)
# Room for the rounding of the partial sums when the trials stop early (they are sums of at
# most 7 terms of at most 1 / 7: any rounding is far below this).
_MARGIN = 1e-9


def load_profiles() -> list[Any]:
    """langdetect's language profiles, in the order of their file names.

    Sorted, so the language indices (and so the order of every sum, and any tie-break) do not
    depend on the order the file system lists them in.
    """
    from langdetect.detector_factory import PROFILES_DIRECTORY
    from langdetect.utils.lang_profile import LangProfile

    names = sorted(n for n in os.listdir(PROFILES_DIRECTORY) if not n.startswith("."))
    profiles = []
    for name in names:
        with open(os.path.join(PROFILES_DIRECTORY, name), encoding="utf-8") as fh:
            profiles.append(LangProfile(**json.load(fh)))
    return profiles


@dataclass(frozen=True, slots=True)
class Model:
    """langdetect's n-gram table as one matrix, and a factory of detectors for the rest."""

    # Its detectors prepare the text and rank the languages; its n-gram table stays empty.
    factory: Any
    index: dict[str, int]  # every n-gram of 1-3 characters a profile holds -> its row
    # [row, language]: P(n-gram | language), as DetectorFactory.add_profile computes it.
    matrix: numpy.ndarray[Any, numpy.dtype[numpy.float64]]


@cache
def model() -> Model:
    """Built once per process, before worker processes fork (~40 MB, shared by the forks)."""
    from langdetect.detector_factory import DetectorFactory

    profiles = load_profiles()
    factory = DetectorFactory()
    # An instance attribute: the class-wide seed belongs to whoever else uses langdetect.
    factory.seed = 0
    factory.langlist = [profile.name for profile in profiles]
    index: dict[str, int] = {}
    columns: list[tuple[list[int], list[float]]] = []
    for profile in profiles:
        rows, values = [], []
        for word, count in profile.freq.items():
            length = len(word)
            if 1 <= length <= 3:  # longer ones are in langdetect's table, but never looked up
                rows.append(index.setdefault(word, len(index)))
                values.append(1.0 * count / profile.n_words[length - 1])  # as add_profile
        columns.append((rows, values))
    matrix = numpy.zeros((len(index), len(profiles)), dtype=numpy.float64)
    for column, (rows, values) in enumerate(columns):
        matrix[rows, column] = values
    return Model(factory, index, matrix)


# ord(character) -> its normalised character, filled as characters are met (str.translate).
_normalised: dict[int, str] = {}


def _normalise(text: str) -> str:
    """``NGram.normalize`` applied to every character."""
    from langdetect.utils.ngram import NGram

    global _normalised
    table = _normalised  # a full table is replaced, never emptied under another thread
    missing = [char for char in set(text) if ord(char) not in table]
    if missing:
        if len(table) + len(missing) > _NORMALISED_CACHE_LIMIT:
            table = _normalised = {}
            missing = list(set(text))
        for char in missing:
            table[ord(char)] = NGram.normalize(char)
    return text.translate(table)


def _word_ngrams(word: str, space_after: bool, known: Container[str]) -> tuple[str, ...]:
    """The n-grams ``NGram.add_char`` yields while reading ``word`` (and the space after it).

    The buffer starts over at every space, so a word's n-grams depend on the word alone: at
    position j, ``word[j]``, then the two and three characters ending there (with the space
    before the word), skipped when ``word[j]`` and ``word[j - 1]`` are both upper case (a
    capitalised word); the space after adds the two and three characters ending with it.
    """
    found: list[str] = []
    padded = " " + word
    previous_upper = False
    for j, char in enumerate(word):
        upper = char.isupper()
        if not (upper and previous_upper):
            if char in known:
                found.append(char)
            if padded[j : j + 2] in known:
                found.append(padded[j : j + 2])
            if j >= 1 and padded[j - 1 : j + 2] in known:
                found.append(padded[j - 1 : j + 2])
        previous_upper = upper
    if space_after:
        for gram in (word[-1] + " ", padded[-2:] + " "):
            if gram in known:
                found.append(gram)
    return tuple(found)


# (word, followed by a space) -> the matrix rows of its n-grams: words repeat, in a text and
# across texts. Long "words" (text without spaces: Chinese, Japanese) are not kept.
_word_cache: dict[tuple[str, bool], tuple[int, ...]] = {}
_WORD_CACHE_LIMIT = 1 << 14
_CACHED_WORD_CHARS = 24


def _words(text: str) -> Iterator[tuple[str, bool]]:
    """Each word of a prepared text, and whether a space follows it, in order, as
    ``Detector._extract_ngrams`` reads them."""
    words = _normalise(text).split(" ")
    last = len(words) - 1
    for position, word in enumerate(words):
        if word:  # nothing for a space at the start, or after another space
            yield word, position < last


def extract_ngrams(text: str) -> list[str]:
    """``Detector._extract_ngrams``: the 1-, 2- and 3-grams the profiles know, in text order."""
    index = model().index
    return [gram for word, after in _words(text) for gram in _word_ngrams(word, after, index)]


def _rows(text: str) -> list[int]:
    """The matrix rows of ``extract_ngrams(text)``, in the same order."""
    global _word_cache
    index = model().index
    cache = _word_cache
    if len(cache) > _WORD_CACHE_LIMIT:
        cache = _word_cache = {}
    rows: list[int] = []
    for word, space_after in _words(text):
        if len(word) > _CACHED_WORD_CHARS:
            rows.extend(map(index.__getitem__, _word_ngrams(word, space_after, index)))
            continue
        key = (word, space_after)
        known = cache.get(key)
        if known is None:
            grams = _word_ngrams(word, space_after, index)
            known = cache[key] = tuple(map(index.__getitem__, grams))
        rows.extend(known)
    return rows


# Draws between two normalisations (langdetect normalises when the iteration count is a
# multiple of 5, the first time after one draw).
_STRETCH = 5


def _probabilities(detector: Any, ngram_rows: list[int], decisive: bool = False) -> list[float]:
    """``Detector._detect_block`` after the n-grams are known (as their matrix rows, ``_rows``):
    the averaged language vector.

    ``decisive``: stop after the first trial that leaves the leading language ahead by more
    than every trial still to come could add to another (each adds at most 1 / trials): the
    vector is then partial, but its leader is the full vector's, strictly first."""
    table = model()
    multiply, divide, reduce = numpy.multiply, numpy.divide, numpy.multiply.reduce
    size = len(detector.langlist)
    # choice() looks only at the length, so drawing a row index is drawing the n-gram. The rows
    # of the n-grams present, in a small matrix: (weight + row) is then one operation a trial.
    present, ids = numpy.unique(numpy.array(ngram_rows, numpy.intp), return_inverse=True)
    rows = table.matrix.take(present, axis=0)
    picks = ids.tolist()
    # Row 0 the vector, rows 1.. the factors of a stretch: reduced down, the vector times each.
    stretch = numpy.empty((_STRETCH + 1, size))
    rng = random.Random()
    rng.seed(detector.seed)
    # ``rng.choice(picks)`` as this Python's ``random`` makes it (``_randbelow`` with
    # ``getrandbits``: k bits, drawn again while out of range), without its two calls a draw.
    getrandbits, count = rng.getrandbits, len(picks)
    bits = count.bit_length()
    trials = detector.n_trial
    limit, converged = detector.ITERATION_LIMIT, detector.CONV_THRESHOLD
    langprob = numpy.zeros(size)
    for done in range(1, trials + 1):
        prior = detector.prior_map if detector.prior_map is not None else [1.0 / size] * size
        prob = numpy.array(prior, dtype=numpy.float64)
        alpha = detector.alpha + rng.gauss(0.0, 1.0) * detector.ALPHA_WIDTH
        weight = alpha / detector.BASE_FREQ
        factors = rows + weight  # factors[k][j] = weight + row_k[j]
        # Iteration 0 draws once; every later normalisation (at i = 5, 10, ...) follows five.
        i, draws = 0, 1
        while True:
            chosen = []
            for _ in range(draws):
                drawn = getrandbits(bits)
                while drawn >= count:
                    drawn = getrandbits(bits)
                chosen.append(picks[drawn])
            if draws == 1:
                multiply(prob, factors[chosen[0]], out=prob)  # prob[j] *= weight + row[j]
            else:
                # prob[j] *= weight + row[j], for each drawn row in turn.
                stretch[0] = prob
                factors.take(chosen, axis=0, out=stretch[1:])
                reduce(stretch, axis=0, out=prob)
            # _normalize_prob: the builtin's sum over the same values in the same order;
            # p / total is monotone in p, so the largest quotient is max(p) / total.
            values = prob.tolist()
            total = sum(values)
            top = max(values) / total
            divide(prob, total, out=prob)
            if top > converged or i >= limit:
                break
            i, draws = i + _STRETCH, _STRETCH
        langprob += prob / trials
        if decisive and done < trials:
            values = langprob.tolist()
            top = max(values)
            values.remove(top)
            if top - max(values) > (trials - done) / trials + _MARGIN:
                break
    return langprob.tolist()


def detect(text: str) -> str | None:
    """``Detector.detect()`` with the factory's seed; None for a text without n-grams."""
    detector = _prepare(text)
    rows = _rows(detector.text)
    if not rows:  # langdetect raises "No features in text."
        return None
    # Only the leader is asked for: the trials stop once no later one could change it.
    detector.langprob = _probabilities(detector, rows, decisive=True)
    return str(detector.detect())


_SPACES = re.compile(" {2,}")


def _prepare(text: str) -> Any:
    """A new detector holding ``text`` as ``append`` then ``cleaning_text`` leave it."""
    from langdetect.utils.ngram import NGram

    detector = model().factory.create()
    text = detector.URL_RE.sub(" ", text)
    text = detector.MAIL_RE.sub(" ", text)
    text = NGram.normalize_vi(text)
    # append's loop: the first max_text_length characters, each space after a space dropped.
    detector.text += _SPACES.sub(" ", text[: detector.max_text_length])
    if not detector.text.isascii():
        # ASCII holds no letter from U+0300 up: the count could only leave the text as it is.
        detector.cleaning_text()
    return detector
