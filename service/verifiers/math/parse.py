"""One LaTeX leaf -> sympy via latex2sympy2_extended, behind cheap guards.

The guards run before anything is evaluated: a length cap and nesting cap before ANTLR sees
the text, and a magnitude bound on the (unevaluated) sympy tree before ``doit``/``simplify``.
An expression that fails a guard is still returned, marked not ``evaluable``: it can then only
match an identical tree, so a guard can turn a verdict into ``incorrect`` but never ``correct``.
sympy is imported lazily so the plain-number fast path never pays for it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from .memo import memoize
from .normalize import find_closing_brace

# Parse time grows ~50 ms per nesting level in ANTLR; real answers stay far below this.
MAX_NESTING = 10
MAX_TREE_NODES = 2000
# log10 bound on any intermediate value we allow sympy to evaluate exactly.
MAX_SAFE_DIGITS = 5000.0
# Integer powers of symbolic sums above this are not expanded (expand would blow up).
MAX_EXPAND_EXPONENT = 60
# sympy factors the radicand of a root of an integer (a primality test on it): 1000 digits
# cost ~1 s and 4000 digits ~30 s, so bigger radicands are left to the bounded numeric check.
MAX_RADICAND_DIGITS = 300

MAX_CARETS = 24
MAX_BARS = 8
MAX_POWER_NESTING = 4
MAX_BARE_NESTING = 3
_DOUBLE_SUPERSCRIPT = re.compile(r"\^\s*(?:[\w.]|\\[A-Za-z]+)\s*\^")
_DECIMAL = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])")
_LEADING_DOT = re.compile(r"(?<![\d.])\.(\d)")
_EAGER_FUNCS = re.compile(r"\\binom|\\choose|\\Gamma|\\gamma|\\operatorname|\\tbinom|\\dbinom")
_BIG_LITERAL = re.compile(r"\d{5,}")
_CALCULUS = ("Integral", "Sum", "Product", "Limit", "Derivative")
# \frac\pi4 and \sqrt\pi: TeX takes a bare command (or one character) as an argument, and
# latex2sympy's normaliser splits such a command's backslash off; they are braced first. So
# are the arguments of accents: the grammar reads "\bar{z}" (as "\overline{z}"), not "\bar z".
_TAKES_ARGUMENTS = re.compile(
    r"\\(?:[dt]?frac|sqrt|bar|overline|hat|tilde|widetilde|vec|dot|ddot|check)(?![A-Za-z])"
)
_TWO_ARGUMENTS = ("frac", "dfrac", "tfrac")
# "\ln 5/\ln 3": the grammar lets an unparenthesised function argument run on over "/", "\cdot"
# and "\times" (ln(5/ln 3)); a product or quotient with another function is what is written.
_FUNCTION = r"\\(?:ln|lg|log|exp|(?:arc)?(?:sin|cos|tan|cot|sec|csc)h?)(?![A-Za-z])"
_SCRIPT = r"\s*[_^]\s*(?:\{[^{}]*\}|\w)"
_OPERAND = (
    r"(?:\d+(?:\.\d+)?[A-Za-z]?|[A-Za-z]|\\frac\{[^{}]*\}\{[^{}]*\}|\\sqrt\{[^{}]*\}"
    r"|\\[A-Za-z]+(?![A-Za-z]|\s*\{)|\{[^{}]*\})"
)
_FUNCTION_BEFORE_OPERAND = re.compile(
    rf"({_FUNCTION}(?:{_SCRIPT})*)\s*({_OPERAND}(?:\s*\^\s*(?:\{{[^{{}}]*\}}|\w))?)"
    rf"(?=\s*(?:/|\\cdot(?![A-Za-z])|\\times(?![A-Za-z]))\s*\(?\s*{_FUNCTION})"
)
_COMMAND = re.compile(r"\\[A-Za-z]+")
# The grammar reads "d" before a letter as a differential ("dc" -> the symbol dc), which is
# only meant where a differential can be: an integral or a derivative.
_DIFFERENTIAL_CONTEXT = re.compile(
    r"\\i+nt|\\oint|\\partial|\\frac\s*\{\s*(?:\\mathrm\s*\{\s*)?d|\\mathrm\s*\{\s*d\s*\}"
)
_LETTER_D = re.compile(
    r"(\\(?:text\w*|math\w+|operatorname|mbox|hbox)\s*\{[^{}]*\}|\\[A-Za-z]+)"
    r"|d(?=\s*(?:[A-Za-z]|\\[A-Za-z]))"
)


@dataclass(frozen=True, slots=True)
class ParsedExpr:
    """A sympy object plus what the guards allow us to do with it."""

    expr: Any
    evaluable: bool
    expandable: bool
    constant: bool
    nodes: int
    # No decimal literal in the source: only exact values may be matched numerically.
    exact: bool = True


def _brace_kinds_nesting(text: str) -> tuple[int, int]:
    """Deepest stacks of braced exponents (``x^{y^{z}}``) and of bare groups (``{{x}}``).

    The ANTLR parser is exponential in both, while real answers rarely exceed two or three.
    """
    stack: list[tuple[bool, bool]] = []
    exponents = bare = best_exp = best_bare = 0
    previous = ""
    for ch in text:
        if ch == "{":
            is_exp = previous == "^"
            is_bare = previous in ("", "{", "(", "[", "+", "-", "=", ",", "*", "/")
            stack.append((is_exp, is_bare))
            exponents += is_exp
            bare += is_bare
            best_exp, best_bare = max(best_exp, exponents), max(best_bare, bare)
        elif ch == "}" and stack:
            was_exp, was_bare = stack.pop()
            exponents -= was_exp
            bare -= was_bare
        if not ch.isspace():
            previous = ch
    return best_exp, best_bare


def _nesting(text: str) -> int:
    depth = best = 0
    for ch in text:
        if ch in "{([":
            depth += 1
            best = max(best, depth)
        elif ch in "})]":
            depth -= 1
    return best


def has_decimal_literal(text: str) -> bool:
    """``3.14`` or ``.5`` somewhere in the text: an approximation, not an exact value."""
    return bool(_DECIMAL.search(text) or _LEADING_DOT.search(text))


def _decimal_to_fraction(m: re.Match[str]) -> str:
    # Exact rational instead of a binary Float: 0.1 must stay 1/10.
    whole, frac = m.group(1), m.group(2)
    return "{\\frac{" + whole + frac + "}{1" + "0" * len(frac) + "}}"


def _argument(text: str, i: int) -> tuple[str, int] | None:
    """The TeX argument starting at or after ``i``, braced, and where it ends; None at the end
    of the text or at an unbalanced group."""
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        return None
    if text[i] == "{":
        end = find_closing_brace(text, i)
        return None if end < 0 else (text[i : end + 1], end + 1)
    command = _COMMAND.match(text, i)
    end = command.end() if command else i + 1
    return "{" + text[i:end] + "}", end


def _brace_arguments(text: str) -> str:
    """Every argument of \\frac, \\dfrac, \\tfrac, \\sqrt and accents in braces (the same TeX)."""
    out: list[str] = []
    pos = 0
    for m in _TAKES_ARGUMENTS.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos : m.end()])
        i = m.end()
        if m.group().endswith("sqrt"):
            index = re.match(r"\s*\[[^\[\]]*\]", text[i:])
            if index:
                out.append(index.group())
                i += index.end()
        for _ in range(2 if m.group()[1:] in _TWO_ARGUMENTS else 1):
            arg = _argument(text, i)
            if arg is None:
                break
            out.append(arg[0])
            i = arg[1]
        pos = i
    out.append(text[pos:])
    return "".join(out)


def _separate_letter_d(text: str) -> str:
    """The letter d before a letter as a factor outside integrals and derivatives: dc is d*c."""
    if "d" not in text or _DIFFERENTIAL_CONTEXT.search(text):
        return text
    return _LETTER_D.sub(lambda m: m.group(1) or "d\\,", text)


def _prepare(text: str) -> str:
    from latex2sympy2_extended import NormalizationConfig, normalize_latex

    if _TAKES_ARGUMENTS.search(text):
        text = _brace_arguments(text)
    text = _separate_letter_d(text)
    if "\\" in text:
        text = _FUNCTION_BEFORE_OPERAND.sub(r"\1(\2)", text)
    s = _LEADING_DOT.sub(r"0.\1", text)
    s = _DECIMAL.sub(_decimal_to_fraction, s)
    config = NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none"
    )
    s = normalize_latex(s, config)
    return s.replace("%", "")


def _walk(expr: Any) -> tuple[int, bool]:
    """Node count (capped) and whether calculus objects occur."""
    from sympy import Basic

    count = 0
    calculus = False
    stack = [expr]
    while stack:
        node = stack.pop()
        count += 1
        if count > MAX_TREE_NODES:
            return count, calculus
        if type(node).__name__ in _CALCULUS:
            calculus = True
        if isinstance(node, Basic):
            stack.extend(node.args)
    return count, calculus


def _int_digits(value: int) -> float:
    return max(value.bit_length(), 1) * 0.30103


def log10_bound(expr: Any) -> float:
    """Rough upper bound on the decimal digits any evaluation of ``expr`` can produce."""
    import sympy

    if expr.is_Integer:
        return _int_digits(abs(int(expr)))
    if expr.is_Rational:
        return max(_int_digits(abs(int(expr.p))), _int_digits(int(expr.q)))
    if expr.is_Float:
        return abs(int(expr._mpf_[2])) * 0.30103 + 20
    if not expr.args:
        return 1.0
    if expr.is_Pow:
        base, exponent = expr.args
        base_digits = log10_bound(base) + 1
        if exponent.is_Rational:
            if _int_digits(abs(int(exponent.p))) > 15:
                return math.inf
            size = abs(int(exponent.p)) / int(exponent.q)
        else:
            exp_digits = log10_bound(exponent)
            size = math.inf if exp_digits > 7 else 10**exp_digits
        return base_digits * size
    if isinstance(expr, (sympy.factorial, sympy.gamma, sympy.binomial, sympy.factorial2)):
        arg_digits = max(log10_bound(a) for a in expr.args)
        if arg_digits > 6:
            return math.inf
        n = 10**arg_digits
        return n * max(arg_digits, 1.0)
    if isinstance(expr, sympy.exp):
        arg_digits = log10_bound(expr.args[0])
        if _imaginary_multiple(expr.args[0]):
            return arg_digits  # e^{i\theta} has modulus 1: only its argument has digits
        return math.inf if arg_digits > 7 else 10**arg_digits
    parts = [log10_bound(a) for a in expr.args]
    if expr.is_Mul:
        return sum(parts)
    return max(parts) + math.log10(len(parts) + 1)


def _imaginary_multiple(expr: Any) -> bool:
    """``i`` times a real constant (``2\\pi i/3``; ``i`` is still a symbol when this runs)."""
    factors = [f for arg in expr.args for f in (arg.args if arg.is_Mul else (arg,))]
    if not expr.is_Mul:
        factors = [expr]
    imaginary = [f for f in factors if getattr(f, "name", "") == "i"]
    others = [f for f in factors if getattr(f, "name", "") != "i"]
    return len(imaginary) == 1 and all(not f.free_symbols and f.is_real for f in others)


def _has_big_radicand(expr: Any) -> bool:
    """A root (non-integer rational power) of something that may reach many digits."""
    from sympy import preorder_traversal

    for node in preorder_traversal(expr):
        root = node.is_Pow and node.exp.is_Rational and not node.exp.is_Integer
        if root and log10_bound(node.base) > MAX_RADICAND_DIGITS:
            return True
    return False


def _max_symbolic_power(expr: Any) -> int:
    """Largest integer exponent applied to a non-constant base (guards ``expand``)."""
    from sympy import preorder_traversal

    best = 0
    for node in preorder_traversal(expr):
        if node.is_Pow and node.exp.is_Integer and node.base.free_symbols:
            best = max(best, abs(int(node.exp)))
    return best


def _substitute_imaginary(expr: Any) -> Any:
    import sympy

    symbols = [s for s in expr.free_symbols if getattr(s, "name", "") == "i"]
    if not symbols:
        return expr
    return expr.xreplace({s: sympy.I for s in symbols})


def _integer_literal(text: str) -> Any:
    """A number token of ASCII digits (commas allowed) as ``sympy.Integer``, else None.

    latex2sympy builds every number with ``sympy.Number(text)``, which runs sympy's Python-source
    parser on the digits (~0.7 ms a number, most of a short answer's parse); for plain digits
    that parser yields ``Integer(int(digits))``, so building it directly is the same value."""
    import sympy

    digits = text.replace(",", "")
    if digits.isascii() and digits.isdigit():
        return sympy.Integer(int(digits))
    return None


@cache
def _converter_class() -> Any:
    from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy

    from .prediction import remember_predictions

    class Converter(_Latex2Sympy):
        def create_parser(self, latex_str: str) -> Any:
            return remember_predictions(super().create_parser(latex_str))

        def parse_number(self, text: str) -> Any:
            number = _integer_literal(text)
            return number if number is not None else super().parse_number(text)

    return Converter


def _latex_to_sympy(prepared: str) -> Any:
    """``latex2sympy(prepared)`` without its normalisation (``_prepare`` did it), with integer
    literals built directly (``_integer_literal``) and ANTLR's full-context predictions
    remembered (``prediction.py``)."""
    from latex2sympy2_extended.latex2sympy2 import ConversionConfig

    converter = _converter_class()(
        None, True, False, config=ConversionConfig(lowercase_symbols=False)
    )
    return converter.parse(prepared)


@memoize(maxsize=4096, max_chars=2000)
def parse_latex(text: str, max_length: int) -> ParsedExpr | None:
    """Parse one LaTeX expression, or None when it is too long, too deep or not LaTeX."""
    if not text or len(text) > max_length or _nesting(text) > MAX_NESTING:
        return None
    if text.count("^") > MAX_CARETS or text.count("|") > MAX_BARS:
        return None
    power_nesting, bare_nesting = _brace_kinds_nesting(text)
    if (
        power_nesting > MAX_POWER_NESTING
        or bare_nesting > MAX_BARE_NESTING
        or _DOUBLE_SUPERSCRIPT.search(text)
    ):
        # Power towers and deep bare groups: exponential for ANTLR, never a real answer.
        return None
    if _EAGER_FUNCS.search(text) and _BIG_LITERAL.search(text):
        # latex2sympy evaluates binomials and Gamma while parsing: keep their inputs small.
        return None
    try:
        prepared = _prepare(text)
        if not prepared or len(prepared) > 2 * max_length:
            return None
        expr = _latex_to_sympy(prepared)
    except Exception:
        return None
    return _finish(expr, not has_decimal_literal(text))


def _finish(expr: Any, exact: bool) -> ParsedExpr | None:
    from sympy import Basic, ImmutableMatrix

    if getattr(expr, "is_Matrix", False) and not isinstance(expr, Basic):
        expr = ImmutableMatrix(expr)
    if not isinstance(expr, Basic):
        return None
    try:
        nodes, calculus = _walk(expr)
        evaluable = nodes <= MAX_TREE_NODES and not calculus
        if evaluable:
            evaluable = log10_bound(expr) <= MAX_SAFE_DIGITS and not _has_big_radicand(expr)
        expr = _substitute_imaginary(expr)
        expandable = evaluable
        if evaluable:
            expr = expr.doit()
            expandable = _max_symbolic_power(expr) <= MAX_EXPAND_EXPONENT
        constant = not expr.free_symbols
    except Exception:
        return None
    return ParsedExpr(expr, evaluable, expandable, constant, nodes, exact)


# Typical answer shapes: parsing them once builds ANTLR's lazily grown prediction tables. A shape
# met for the first time costs 10-400 ms of table building (a polynomial with bare exponents
# the most), paid by every worker process on its first requests unless warmed here, before the
# fork; on a fresh worker the first 1024 items of a GRPO math workload took 2x their steady time.
_WARM_UP_SAMPLES = (
    "\\frac{x^{2}+1}{2}",
    "2\\sqrt{3}",
    "\\frac{\\sqrt{3}}{2}",
    "(x+1)^{2}",
    "3\\pi",
    "\\frac{5\\pi}{6}",
    "x^{2}-4x+4",
    "\\sin\\frac{\\pi}{3}",
    "\\cos(2x)",
    "\\log_{2}8",
    "\\ln(x)",
    "e^{2}",
    "3+4i",
    "\\sqrt[3]{2}",
    "|x-1|",
    "\\binom{10}{3}",
    "10!",
    "a_{1}+a_{2}",
    "\\frac{1}{x}+\\frac{1}{y}",
    "2^{10}",
    "x^2-5x+6",
    "x^2+3x-4",
    "-6+5x+x^2",
    "2x^2-3x+1",
    "x^{3}-1",
    "3x+2",
    "\\frac{x}{2}",
    "3\\cdot\\sqrt{2}",
    "3\\cdot 4",
    "5\\sqrt{4}",
    "\\sqrt{8}",
    "-\\sqrt{2}",
    "\\sqrt{2}+\\sqrt{3}",
    "2\\pi/3",
    "\\pi/4",
    "\\frac{2}{3}\\pi",
    "-\\frac{1}{2}",
    "\\frac{-1}{2}",
    "(1,2)",
    "(-1,\\frac{1}{2})",
    "[0,1)",
    "(-\\infty,2]",
    "\\{1,2,3\\}",
    "x=3",
    "y=2x+1",
    "2\\times3",
    "3^{4}",
    "2^{-1}",
    "\\frac{1}{2}+\\frac{1}{3}",
    "a+b",
    "10\\%",
    "\\sqrt{x^2+1}",
    "e^{-x}",
    "\\ln 2",
    "1+\\sqrt{5}",
    "\\frac{1+\\sqrt{5}}{2}",
    "4\\sqrt{3}\\pi",
)


def _polynomial_shapes() -> list[str]:
    """Quadratics expanded and factored, in every sign pattern and both superscript writings:
    the commonest algebra answers, and each sign pattern is a shape of its own for ANTLR."""
    shapes = []
    for square in ("^2", "^{2}"):
        for a in "+-":
            shapes.append(f"(x{a}1){square}")
            for b in "+-":
                shapes += [f"x{square}{a}3x{b}2", f"2x{square}{a}x{b}1", f"x{square}{a}x{b}1"]
                shapes += [f"(x{a}2)(x{b}3)", f"(2x{a}1)(x{b}3)"]
    return shapes


def warm_up() -> None:
    """Import sympy/latex2sympy and prime the parser (call once in a parent process)."""
    for sample in (*_WARM_UP_SAMPLES, *_polynomial_shapes()):
        parse_latex(sample, 1000)
