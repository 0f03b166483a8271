"""Unit labels after a value: dropping them, and telling two of them apart.

Units are ignored when only one side has one (``5 \\text{ cm}`` == ``5``): math ground truths
rarely carry units, and model answers often add them. When both sides name a unit the table
below knows and the units differ (``5 \\text{ g}`` against ``5 \\text{ kg}``, ``\\$5`` against
``5 \\text{ cents}``), the answer is wrong. Nothing is converted (100 cm is not 1 m here), and
a unit the table does not know is ignored as before. A trailing label that changes or denies
the value (``\\text{ is not a solution}``, ``\\text{ squared}``, ``\\text{ or more}``) is not a
unit, and is never dropped.
"""

from __future__ import annotations

import re

from .normalize import TRAILING_PUNCT

# Trailing labels that may follow a complete value. Bare single letters are not units here
# ("5m" is an expression), they are only dropped inside \text{...}.
_UNIT_WORDS = (
    "square units|sq units|cubic units|units?|square|sq|cubic|"
    "cm|mm|km|meters?|metres?|inches|inch|feet|foot|ft|yards?|yd|miles?|mi|"
    "kg|grams?|mg|lbs?|pounds?|oz|ounces?|tons?|liters?|litres?|ml|gallons?|gal|"
    "seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|yrs?|"
    "degrees?|deg|radians?|rad|dollars?|cents?|euros?|usd|rs|rupees?|percentage points?|"
    "mph|km/h|kmh|m/s|cm\\^2|cm\\^3|m\\^2|m\\^3|ft\\^2|in\\^2"
)
# Every unit word starts with a letter: the lookahead fails fast at each digit of a long number
# instead of trying all the alternatives there (100 KB of digits: 86 ms -> 4 ms a search).
# A unit's power: "cm^2", "cm^{3}", "s^{-1}" (Minerva writes "\\mathrm{~cm}^{-3}").
_UNIT_POWER = r"(?:\s*\^\s*(?:\{\s*-?\d\s*\}|\d))?"
_UNIT_SUFFIX = re.compile(
    rf"(?<=[\d}}\s])\s*(?=[A-Za-z])(?:{_UNIT_WORDS}){_UNIT_POWER}\s*$",
    re.IGNORECASE,
)
# "3.54 \\text{m}/\\text{s}": a label divided by the next one goes with it.
_TEXT_SUFFIX = re.compile(rf"(?:/\s*)?\\text\{{((?:[^{{}}]|\{{[^{{}}]*\}})*)\}}{_UNIT_POWER}\s*$")
_UNIT_TEXT_CONTENT = re.compile(r"^[\sA-Za-z./\-^0-9{}]*[A-Za-z][\sA-Za-z./\-^0-9{}]*$")
# A unit in parentheses: "17 \\text{ (cm)}", "17\\ (\\text{cm})".
_PAREN_SUFFIX = re.compile(
    rf"(?:\\text\{{\s*\(\s*([^(){{}}]+?)\s*\)\s*\}}|\(\s*\\text\{{\s*([^(){{}}]+?)\s*\}}"
    rf"{_UNIT_POWER}\s*\))\s*$"
)
_DEGREE_SUFFIX = re.compile(r"\s*(?:\^\\circ|\\circ)\s*(?:\\text\{\s*[CF]\s*\}|[CF])?\s*$")
# A currency before a number ("-\\$5" is -5 dollars); "rs+1" is an expression, not 1 rupee.
_CURRENCY_PREFIX = re.compile(
    r"^(?P<sign>[+-]?)\s*(?P<unit>(?:\\text\{\s*)?(?:(?:usd|rs)(?![a-z])\.?(?:\s*\})?\s*(?=\.?\d)"
    r"|(?:€|£|¥|₹|\\?\$)(?:\s*\})?\s*(?=[-+]?\s*\.?\d)))",
    re.IGNORECASE,
)
# An amount of money with a magnitude letter ("\\$2.5\\text{M}", "\\$5K"): K, M, B are a
# thousand, a million, a billion here (not kelvin or molar), so the letter is not a unit.
_CURRENCY_MAGNITUDE = re.compile(
    r"^[+-]?\s*(?:\\text\{\s*)?(?:\\?\$|€|£|¥|₹)\s*\}?\s*[\d.,]+\s*"
    r"(?:\\(?:text|mathrm)\s*\{\s*(?:[KMBkb]|bn|mn|mil)\s*\}|(?:[KMBkb]|bn|mn|mil))\s*$"
)
_WORDS_SUFFIX = re.compile(r"(?<=\d)\s+[A-Za-z]{2,}(?:[ -][A-Za-z]{2,}){0,3}$")
_NUMBERISH = re.compile(r"^[+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+|\d+/\d+)%?$")

_MULTIPLIER = re.compile(r"hundred|thousand|million|billion|trillion|dozen|score", re.IGNORECASE)
_SCALE_WORD = re.compile(
    r"^(?P<num>[+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+))\s*(?:\\text\{\s*)?"
    r"(?P<word>hundred|thousand|million|billion|trillion)s?\s*\}?$",
    re.IGNORECASE,
)
_SCALE_EXPONENT = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12}

# Words after a value that deny it ("x = 3 \\text{ is extraneous}") or change it ("5 \\text{ or
# more}", "5 \\text{ squared}", "2 \\text{ and a half}"): such a label is part of the answer.
# "per" (meters per second), "times", plain nouns (apples, ways) and a comparative alone ("12
# more", the answer to "how many more") stay droppable.
_DENYING = re.compile(
    r"n't|\b(?:not|no|never|none|wrong|incorrect|false|extraneous|invalid|rejected|reject|"
    r"impossible|excluded|spurious|undefined)\b",
    re.IGNORECASE,
)
_CHANGING = re.compile(
    r"\b(?:is|are|or|and|nor|but|except|without|least|most|than|over|under|above|below|between|"
    r"maximum|minimum|max|plus|minus|negative|factorial|inverse|reciprocal|power|twice|double|"
    r"triple|half|halves|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|"
    r"tenths?|hundredths?|thousandths?|approximately|approx|about|around|roughly|nearly|almost|"
    r"circa|maybe|possibly|perhaps|probably|if|when|unless|"
    # Magnitudes, fractions, operations and readings that change the number: "3 \\text{ lakh}",
    # "3 \\text{ twelfths}", "5 \\text{ times three}", "9 \\text{ recurring}".
    r"lakhs?|crores?|quadrillions?|quintillions?|sextillions?|mil|mill|mn|bn|bil|tens|gross|"
    r"dozens?|(?:eleven|twelf|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)ths?|"
    r"(?:twent|thirt|fort|fift|sixt|sevent|eight|ninet)ieths?|"
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"root|roots|recurring|repeating|negated|opposite|basis|bps|odds|ratio|to)\b",
    re.IGNORECASE,
)
# A digit in the label that is not a unit's power: "5 \\text{e-3}", "1 \\text{ in 6}",
# "3 \\text{ to 2}" change the value ("cm^2", "m^{-1}" stay units, and a modulus, "5 \\text{
# (mod 7)}", names the residue's class as before).
_LABEL_POWER = re.compile(r"\^\s*\{?\s*-?\d+\s*\}?|\b(?:mod|modulo)\s*\d+")
_DIGIT = re.compile(r"\d")
# "5 \\text{ squared}" changes the value; "5 \\text{ meters squared}" is a unit's power.
_POWER_WORD = re.compile(r"^\s*(?:squared|cubed)\b", re.IGNORECASE)
# "5 \\text{ is the answer}", "12 \\text{ apples are left}": a clause that only says what the
# value is.
_DESCRIBING = re.compile(
    r"\b(?:is|are)\s+(?:the\s+(?:[a-z]+\s+){0,3}?(?:solution|answer|value|result)s?"
    r"|left|remaining|needed)\s*$",
    re.IGNORECASE,
)


def _droppable(label: str) -> bool:
    """A trailing label that may be a unit: no word in it denies or changes the value."""
    if _DENYING.search(label) or _POWER_WORD.match(label):
        return False
    if _DIGIT.search(_LABEL_POWER.sub("", label)):
        return False
    return not _CHANGING.search(_DESCRIBING.sub("", label))


def _text_label(label: str) -> bool:
    return bool(_UNIT_TEXT_CONTENT.match(label)) and not _MULTIPLIER.search(label)


def _paren_label(label: str) -> bool:
    """``(cm)`` after a value; a single capital letter is an option label (``12 \\text{(C)}``),
    and another single letter is a unit only when it names one (``(m)``, ``(g)``)."""
    if len(label) == 1:
        return label in _SYMBOLS and not label.isupper()
    return _text_label(label) and _droppable(label)


def split_units(text: str) -> tuple[str, tuple[str, ...]]:
    """The value without its currency, degree sign and unit labels, and the labels dropped
    (last first). Plain trailing words (``12 apples``) are only dropped after a bare number,
    so ``5x`` or ``3 or 4`` are never affected."""
    s = text.strip()
    if ("$" in s or not s.isascii()) and _CURRENCY_MAGNITUDE.match(s):
        return s, ()  # "\\$2.5\\text{M}" is 2.5 million dollars: never 2.5
    labels: list[str] = []
    # Compound units ("\\text{erg}\\,\\text{cm}^{-2}\\,\\text{s}^{-1}") go one label a round.
    for _ in range(5):
        before = s
        currency = _CURRENCY_PREFIX.match(s)
        if currency:
            labels.append(currency.group("unit").strip())
            s = currency.group("sign") + s[currency.end() :]
        # The scale word ends the text: skip the match (which backtracks over every digit of a
        # long number) when the text does not end in a letter or a closing brace.
        tail = s.rstrip()[-1:]
        scale = _SCALE_WORD.match(s) if tail.isalpha() or tail == "}" else None
        if scale:
            # "5 million" is a number, not 5 with a unit.
            exponent = _SCALE_EXPONENT[scale.group("word").lower()]
            return f"{scale.group('num')}\\times10^{{{exponent}}}", tuple(labels)
        # Substring checks first: each search below scans every digit of a long number.
        degree, text_label = "\\circ" in s, "\\text{" in s
        if degree:
            s = _drop(s, _DEGREE_SUFFIX.search(s), labels)  # "5^\\circ \\text{C}" is one label
        m = _TEXT_SUFFIX.search(s) if text_label else None
        if m and m.start() > 0 and _text_label(m.group(1)) and _droppable(m.group(1)):
            s = _drop(s, m, labels)
        elif text_label and s.endswith(("}", ")")):
            paren = _PAREN_SUFFIX.search(s)
            if paren and paren.start() > 0 and _paren_label(paren.group(1) or paren.group(2)):
                s = _drop(s, paren, labels)
        if degree:
            s = _drop(s, _DEGREE_SUFFIX.search(s), labels)
        m2 = _UNIT_SUFFIX.search(s)
        if m2 and m2.start() > 0:
            s = _drop(s, m2, labels)
        m3 = _WORDS_SUFFIX.search(s)
        if (
            m3
            and _NUMBERISH.match(s[: m3.start()].strip())
            and not _MULTIPLIER.search(m3.group(0))
            and _droppable(m3.group(0))
        ):
            s = _drop(s, m3, labels)
        s = TRAILING_PUNCT.sub("", s)
        if s == before or not s:
            break
    return (s, tuple(labels)) if s else (text.strip(), ())


def _drop(s: str, m: re.Match[str] | None, labels: list[str]) -> str:
    if m is None:
        return s
    labels.append(m.group(0).strip())
    return s[: m.start()].rstrip()


def strip_units(text: str) -> str:
    """Drop currency, degree signs and unit labels that follow a complete value."""
    return split_units(text)[0]


# The unit table: spellings of one unit share a key. Symbols are matched as written ("mm" is
# not "Mm", "pm" the picometre is not "PM"); words in any case, singular or plural.
_SYMBOLS = {
    "m": "m", "cm": "cm", "mm": "mm", "km": "km", "nm": "nm", "pm": "pm", "um": "um", "μm": "um",
    "in": "in", "ft": "ft", "yd": "yd", "mi": "mi",
    "g": "g", "kg": "kg", "mg": "mg", "lb": "lb", "lbs": "lb", "oz": "oz",
    "s": "s", "ms": "ms", "h": "h", "L": "L", "l": "L", "mL": "mL",
    "K": "K", "J": "J", "kJ": "kJ", "eV": "eV", "N": "N", "W": "W", "kW": "kW",
    "Pa": "Pa", "kPa": "kPa", "Hz": "Hz",
    "$": "USD", "¢": "cent", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "Rs": "INR",
    "AM": "AM", "PM": "PM", "a.m": "AM", "p.m": "PM", "A.M": "AM", "P.M": "PM",
}  # fmt: skip
_WORD_FORMS = {
    "m": ("meter", "metre"),
    "cm": ("cm", "centimeter", "centimetre"),
    "mm": ("millimeter", "millimetre"),
    "km": ("km", "kilometer", "kilometre"),
    "nm": ("nanometer", "nanometre"),
    "pm": ("picometer", "picometre"),
    "um": ("micrometer", "micrometre", "micron"),
    "in": ("inch", "inches"),
    "ft": ("ft", "foot", "feet"),
    "yd": ("yd", "yard"),
    "mi": ("mile",),
    "g": ("gram", "gramme"),
    "kg": ("kg", "kilo", "kilogram", "kilogramme"),
    "mg": ("milligram", "milligramme"),
    "lb": ("lb", "lbs"),
    "oz": ("oz", "ounce"),
    "s": ("sec", "secs", "second"),
    "ms": ("millisecond",),
    "min": ("min", "mins", "minute"),
    "h": ("hr", "hrs", "hour"),
    "day": ("day",),
    "week": ("week", "wk"),
    "month": ("month",),
    "year": ("year", "yr", "yrs"),
    "L": ("liter", "litre"),
    "mL": ("ml", "milliliter", "millilitre", "cc"),
    "gal": ("gal", "gallon"),
    "K": ("kelvin",),
    "J": ("joule",),
    "N": ("newton",),
    "W": ("watt",),
    "Pa": ("pascal",),
    "Hz": ("hertz",),
    "mol": ("mol", "mole"),
    "rad": ("rad", "radian"),
    "deg": ("deg", "degree"),
    "degC": ("celsius", "degree celsius", "degrees celsius"),
    "degF": ("fahrenheit", "degree fahrenheit", "degrees fahrenheit"),
    "USD": ("usd", "dollar"),
    "cent": ("cent",),
    "EUR": ("eur", "euro"),
    "GBP": ("gbp",),
    "JPY": ("yen",),
    "INR": ("rs", "rupee"),
    "mi/h": ("mph",),
    "km/h": ("kph", "kmh"),
}
_WORDS = {
    form: key
    for key, forms in _WORD_FORMS.items()
    for word in forms
    for form in (word, word if word.endswith("s") or len(word) < 3 else word + "s")
}
_MARKUP = re.compile(r"\\text\{|[{}()~]|\\(?=\$)")
_POWER = re.compile(r"^(?P<base>.+?)\s*\^\s*(?P<power>-?\d)$")
_SQUARE_CUBIC = re.compile(
    r"^(?:(?P<sq>square|sq\.?)|cubic|cu\.?)\s+(?P<base>.+)$"
    r"|^(?P<base2>.+?)\s+(?:(?P<sq2>squared)|cubed)$",
    re.IGNORECASE,
)
_PER = re.compile(r"\s*/\s*|\s+per\s+", re.IGNORECASE)
# One unit under two names: a cubic centimetre is a millilitre.
_SAME_UNIT = {"cm^3": "mL", "dm^3": "L"}
_DEGREE_KEYS = {"": "deg", "C": "degC", "F": "degF"}
# A degree sign alone may be a temperature's; "pm" is the picometre or the afternoon.
_COMPATIBLE = frozenset(
    {frozenset({"deg", "degC"}), frozenset({"deg", "degF"}), frozenset({"pm", "PM"})}
)


def _base_key(word: str) -> str | None:
    return _SYMBOLS.get(word) or _WORDS.get(word.lower())


def _label_key(label: str) -> str | None:
    """The table's key of one label as dropped (``\\text{cm}^{2}`` -> ``cm^2``), else None."""
    if "\\circ" in label:
        return _DEGREE_KEYS.get(" ".join(_MARKUP.sub(" ", label).split()[1:]))
    if label.startswith("/"):
        return None  # a divided unit ("\\text{m}/\\text{s}") comes as two labels: not read
    s = " ".join(_MARKUP.sub(" ", label).split()).rstrip(".")
    power = ""
    if m := _POWER.match(s):
        s, power = m.group("base"), m.group("power")
    elif m := _SQUARE_CUBIC.match(s):
        s = m.group("base") or m.group("base2")
        power = "2" if m.group("sq") or m.group("sq2") else "3"
    key = _base_key(s)
    if key is None and (parts := _PER.split(s)) and len(parts) == 2:
        top, bottom = _base_key(parts[0]), _base_key(parts[1])
        key = f"{top}/{bottom}" if top and bottom else None
    if key is None:
        return None
    key = key if power in ("", "1") else f"{key}^{power}"
    return _SAME_UNIT.get(key, key)


def unit_key(labels: tuple[str, ...]) -> str | None:
    """The one unit the labels name (``\\$5 \\text{ dollars}`` names one), if the table knows
    every label; None when there is no label, an unknown one, or several units."""
    keys = {_label_key(label) for label in labels}
    if len(keys) != 1:
        return None
    return keys.pop()


def units_differ(g: str | None, a: str | None) -> bool:
    """Both sides name a known unit, and not the same one. A rate against its numerator's
    unit is not a difference: a ground truth often names only the currency of a wage
    (``\\$5`` against ``5 \\text{ dollars per hour}``)."""
    if g is None or a is None or g == a:
        return False
    if ("/" in g) != ("/" in a):
        return g.split("/")[0] != a.split("/")[0]
    return frozenset({g, a}) not in _COMPATIBLE
