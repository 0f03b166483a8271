"""Exact recognition and comparison of plain numbers: the sympy-free fast path.

Numbers are kept exact. A terminating decimal gets a canonical key ``(sign, digits, exp10)``
built by string work only, so a 100 KB digit string is compared without ``int()`` (Python
refuses int/str conversion beyond 4300 digits). Values that fit also get a ``Fraction``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction

# Below Python's 4300-digit int/str conversion limit, with room for exponent shifts.
MAX_FRACTION_DIGITS = 4000
MAX_EXPONENT_DIGITS = 9

DecimalKey = tuple[int, str, int]

_BODY = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+"
_EXP = r"[+-]?\d{1,9}"
_DECIMAL = re.compile(
    rf"^(?P<sign>[+-]?)(?:(?P<num>{_BODY})(?:[eE](?P<e1>{_EXP})|"
    rf"(?:\\times|\\cdot|\*|x)10\^(?:\{{(?P<e2>{_EXP})\}}|(?P<e3>\d)))?"
    rf"|10\^(?:\{{(?P<e4>{_EXP})\}}|(?P<e5>\d)))(?P<pct>%)?$"
)
_FRACTION = re.compile(
    rf"^(?P<sign>[+-]?)(?:\\frac\{{(?P<n1>[+-]?(?:{_BODY}))\}}\{{(?P<d1>[+-]?(?:{_BODY}))\}}"
    rf"|(?P<n2>{_BODY})/(?P<d2>{_BODY}))(?P<pct>%)?$"
)
_MIXED = re.compile(r"^(?P<sign>[+-]?)(?P<w>\d+)\\frac\{(?P<n>\d+)\}\{(?P<d>\d+)\}$")
_REPEATING = re.compile(
    r"^(?P<sign>[+-]?)(?P<int>\d*)\.(?P<fix>\d*)\\(?:overline|bar|dot)\{(?P<rep>\d+)\}$"
)
# Other ways to write a repeating decimal: the repetend in parentheses ("0.1(6)"), or one digit
# written three times or more before an ellipsis ("0.1666\\ldots"; "3.14\\ldots" is not one).
_REPEATING_OTHER = (
    re.compile(r"^(?P<sign>[+-]?)(?P<int>\d*)\.(?P<fix>\d*)\((?P<rep>\d+)\)$"),
    re.compile(
        r"^(?P<sign>[+-]?)(?P<int>\d*)\.(?P<fix>\d*?)(?P<rep>\d)(?P=rep){2,}"
        r"\\(?:ldots|cdots|dots)$"
    ),
)
_SPACED_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?: \d{3})+(?:\.\d+)?%?$")
# "2 1/2" is two and a half, as written in word problems.
_MIXED_SLASH = re.compile(r"^(?P<sign>[+-]?)(?P<w>\d+)\s+(?P<n>\d+)/(?P<d>\d+)$")
_DIGIT_SPACE_DIGIT = re.compile(r"\d\s+\d")
_COMMA_SPACE = re.compile(r",\s")
_INFINITY = re.compile(r"^(?P<sign>[+-]?)\\infty$")


@dataclass(frozen=True, slots=True)
class ExactNumber:
    """An exact real number, +-infinity, optionally marked as a percentage."""

    key: DecimalKey | None = None
    frac: Fraction | None = None
    inf: int = 0
    percent: bool = False

    def without_percent(self) -> ExactNumber:
        """The same digits read as a plain number (``50%`` -> ``50``)."""
        return replace(self, percent=False)

    def percent_value(self) -> ExactNumber:
        """The value a percentage stands for (``50%`` -> ``0.5``)."""
        key = None
        if self.key is not None:
            sign, digits, exp = self.key
            key = (sign, digits, exp - 2) if sign else self.key
        frac = self.frac / 100 if self.frac is not None else None
        return ExactNumber(key=key, frac=frac, inf=self.inf)

    @property
    def is_zero(self) -> bool:
        """True for an exact zero."""
        return self.inf == 0 and (self.key == (0, "0", 0) or self.frac == 0)


def _key_from_parts(negative: bool, int_digits: str, frac_digits: str, exp: int) -> DecimalKey:
    digits = (int_digits + frac_digits).lstrip("0")
    if not digits:
        return (0, "0", 0)
    exp -= len(frac_digits)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    return (-1 if negative else 1, stripped, exp)


def _fraction_from_key(key: DecimalKey) -> Fraction | None:
    sign, digits, exp = key
    if len(digits) > MAX_FRACTION_DIGITS or abs(exp) > MAX_FRACTION_DIGITS:
        return None
    value = int(digits)
    frac = Fraction(value * 10**exp) if exp >= 0 else Fraction(value, 10**-exp)
    return frac * sign


def _key_from_fraction(frac: Fraction) -> DecimalKey | None:
    """Decimal key of a fraction whose denominator is 2^a 5^b, else None."""
    den = frac.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return None
    shift = max(twos, fives)
    scaled = abs(frac.numerator) * (10**shift // frac.denominator)
    if scaled.bit_length() > MAX_FRACTION_DIGITS * 3.3:
        return None
    return _key_from_parts(frac.numerator < 0, str(scaled), "", -shift)


def _decimal_key(text: str) -> DecimalKey | None:
    """Key of an unsigned decimal literal, or None if it is malformed."""
    body = text.replace(",", "")
    int_part, _, frac_part = body.partition(".")
    if not (int_part or frac_part):
        return None
    return _key_from_parts(False, int_part, frac_part, 0)


def _negate(key: DecimalKey) -> DecimalKey:
    return (-key[0], key[1], key[2])


def _from_key(key: DecimalKey, percent: bool) -> ExactNumber:
    return ExactNumber(key=key, frac=_fraction_from_key(key), percent=percent)


def from_fraction(frac: Fraction, percent: bool) -> ExactNumber:
    """Exact number from a Fraction (decimal key added when it terminates)."""
    return ExactNumber(key=_key_from_fraction(frac), frac=frac, percent=percent)


def _literal_fraction(text: str) -> Fraction | None:
    negative = text.startswith("-")
    key = _decimal_key(text.lstrip("+-"))
    if key is None:
        return None
    frac = _fraction_from_key(key)
    if frac is None:
        return None
    return -frac if negative else frac


def parse_number(text: str) -> ExactNumber | None:
    """Parse a plain number (integer, decimal, a/b, \\frac{a}{b}, 1.5e3, 1.5\\times10^{3}, %)."""
    s = text.strip()
    if not s or len(s) > 200_000:
        return None
    if _COMMA_SPACE.search(s):
        return None  # "1, 234" is a list, never a number
    m = _MIXED_SLASH.match(s)
    if m and max(len(m.group("w")), len(m.group("d"))) < MAX_FRACTION_DIGITS:
        if int(m.group("d")) == 0:
            return None
        mixed_value = int(m.group("w")) + Fraction(int(m.group("n")), int(m.group("d")))
        return from_fraction(-mixed_value if m.group("sign") == "-" else mixed_value, False)
    if _DIGIT_SPACE_DIGIT.search(s):
        if not _SPACED_THOUSANDS.match(s):
            return None
        s = s.replace(" ", "")
    else:
        s = s.replace(" ", "")
    m = _INFINITY.match(s)
    if m:
        return ExactNumber(inf=-1 if m.group("sign") == "-" else 1)
    m = _DECIMAL.match(s)
    if m:
        return _parse_decimal(m)
    m = _FRACTION.match(s)
    if m:
        num = _literal_fraction(m.group("n1") or m.group("n2"))
        den = _literal_fraction(m.group("d1") or m.group("d2"))
        if num is None or den is None or den == 0:
            return None
        value = num / den
        return from_fraction(-value if m.group("sign") == "-" else value, bool(m.group("pct")))
    m = _REPEATING.match(s)
    if m is None and s[-1:] in ")s":
        m = next((r for p in _REPEATING_OTHER if (r := p.match(s))), None)
    if m and len(s) < 1000:
        fix, rep = m.group("fix"), m.group("rep")
        value = Fraction(int(m.group("int") or "0"))
        value += Fraction(int(fix or "0"), 10 ** len(fix))
        value += Fraction(int(rep), 10 ** len(fix) * (10 ** len(rep) - 1))
        return from_fraction(-value if m.group("sign") == "-" else value, False)
    m = _MIXED.match(s)
    if m and max(len(m.group("w")), len(m.group("d"))) < MAX_FRACTION_DIGITS:
        denominator = int(m.group("d"))
        if denominator == 0:
            return None
        mixed = int(m.group("w")) + Fraction(int(m.group("n")), denominator)
        return from_fraction(-mixed if m.group("sign") == "-" else mixed, False)
    return None


def _parse_decimal(m: re.Match[str]) -> ExactNumber | None:
    exp_text = next((g for g in (m.group(f"e{i}") for i in range(1, 6)) if g is not None), None)
    exp = int(exp_text) if exp_text is not None else 0
    num = m.group("num")
    key: DecimalKey = (1, "1", exp)
    if num is not None:
        literal = _decimal_key(num)
        if literal is None:
            return None
        key = (literal[0], literal[1], literal[2] + exp) if literal[0] else literal
    if m.group("sign") == "-":
        key = _negate(key)
    return _from_key(key, bool(m.group("pct")))


def numbers_equal(a: ExactNumber, b: ExactNumber) -> bool:
    """Exact equality of the plain values (percent marks ignored)."""
    if a.inf or b.inf:
        return a.inf == b.inf
    if a.key is not None and b.key is not None:
        # Canonical keys are unique per terminating decimal, so this decides both ways.
        return a.key == b.key
    if a.frac is not None and b.frac is not None:
        return a.frac == b.frac
    # One side is a huge decimal, the other a fraction without a decimal key (non-terminating):
    # they cannot be equal.
    return False


def numbers_close(a: ExactNumber, b: ExactNumber, rel_tol: Fraction) -> bool:
    """|a - b| <= rel_tol * max(|a|, |b|), computed exactly."""
    if numbers_equal(a, b):
        return True
    if a.inf or b.inf or a.frac is None or b.frac is None:
        return False
    return abs(a.frac - b.frac) <= rel_tol * max(abs(a.frac), abs(b.frac))


def _at_least_one(n: ExactNumber) -> bool:
    """Whether ``|n| >= 1`` (an infinity is)."""
    if n.inf:
        return True
    if n.frac is not None:
        return abs(n.frac) >= 1
    if n.key is not None:
        sign, digits, exp = n.key
        return sign != 0 and len(digits) + exp >= 1
    return False


def percent_readings(n: ExactNumber) -> tuple[ExactNumber, ...]:
    """Values a number may stand for: ``50%`` reads as 50 or as 0.5; others as themselves."""
    if not n.percent:
        return (n,)
    return (n.without_percent(), n.percent_value())


def same_number(a: ExactNumber, b: ExactNumber, rel_tol: Fraction | None) -> bool:
    """Compare two numbers, accepting a percent sign on either side as a unit or as /100.

    The sign is read as a unit ("what percent ...?": ``25%`` for ``25``) only against a number
    of magnitude 1 or more: against a probability or a fraction below 1, ``0.25%`` or
    ``\\frac14\\%`` says a hundredth of it."""
    if a.percent and b.percent:
        pairs = [(a.without_percent(), b.without_percent())]
    elif a.percent or b.percent:
        marked, plain = (a, b) if a.percent else (b, a)
        pairs = [(marked.percent_value(), plain)]
        if _at_least_one(plain):
            pairs.append((marked.without_percent(), plain))
    else:
        pairs = [(a, b)]
    if rel_tol:
        return any(numbers_close(x, y, rel_tol) for x, y in pairs)
    return any(numbers_equal(x, y) for x, y in pairs)
