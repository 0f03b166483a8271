"""Final-answer extraction from completions."""

from __future__ import annotations

import time

import pytest

from service.verifiers.math.extract import (
    FORMS,
    all_boxed,
    extract_answer,
    last_box_cluster,
    part_boxes,
)

ALL = frozenset(FORMS)

REASONING = (
    "Let's work through this step by step.\n\n"
    "Each day the bakery sells $24 \\times 12 = 288$ muffins.\n\n"
    "Over 5 days that is $288 \\times 5 = 1440$, plus an order of 60 gives 1500.\n\n"
    "Let me double-check: $17 \\times 23 = 391$, consistent with the estimate.\n\n"
)


def parts(text: str, forms: frozenset[str] = ALL) -> tuple[str, ...] | None:
    found = extract_answer(text, forms)
    return found.parts if found else None


def source(text: str) -> str | None:
    found = extract_answer(text, ALL)
    return found.source if found else None


@pytest.mark.parametrize(
    ("ending", "answer", "form"),
    [
        ("Therefore, the final answer is $\\boxed{1500}$.", "1500", "boxed"),
        ("$$\\fbox{1500}$$", "1500", "boxed"),
        ("#### 1500", "1500", "gsm8k"),
        ("The answer is 1500.", "1500", "answer_is"),
        ("Answer: 1500", "1500", "answer_is"),
        (
            "Final Answer: The final answer is $1500$. I hope it is correct.",
            "$1500$",
            "final_answer",
        ),
        ("**Final Answer:** $1500$", "$1500$", "final_answer"),
        ("**Final Answer**\n\n1500", "1500", "final_answer"),
        ("So the bakery sold **1500** muffins in total.", "1500", "bold"),
        ("So the bakery sold 1500 muffins in total.", "1500", "last_number"),
    ],
)
def test_forms(ending: str, answer: str, form: str) -> None:
    found = extract_answer(REASONING + ending, ALL)
    assert found is not None
    assert found.parts == (answer,)
    assert found.source == form


def test_last_box_cluster_with_nested_braces() -> None:
    assert parts("so $\\boxed{\\frac{\\sqrt{3}}{2}}$.") == ("\\frac{\\sqrt{3}}{2}",)


def test_boxed_without_braces() -> None:
    assert parts("the answer is \\boxed 7") == ("7",)


def test_unclosed_box_takes_the_rest() -> None:
    assert parts("so \\boxed{12") == ("12",)


def test_only_the_last_box_counts_after_prose() -> None:
    text = "A first guess is \\boxed{5}. Actually that ignores the offset, so \\boxed{7}."
    assert parts(text) == ("7",)


def test_boxes_joined_by_separators_are_one_cluster() -> None:
    assert parts("$\\boxed{381}$ or $\\boxed{391}$") == ("381", "391")
    assert parts("x = \\boxed{1} and x = \\boxed{2}") == ("1", "2")


def test_box_ending_in_a_line_break() -> None:
    assert parts("so \\boxed{5\\\\} and more") == ("5\\\\",)


def test_final_formulas_joined_by_and_or_are_read_together() -> None:
    assert parts("Therefore, the solutions are $x = 3$ and $x = -3$.") == ("x = 3", "x = -3")
    assert parts("Hence we get $x = 3$, or $x = 4$.") == ("x = 3", "x = 4")
    # A comma or a clause between formulas does not join them.
    assert parts("Since $x^2 = 25$ and $x > 0$, $x = 5$.") == ("x = 5",)
    assert parts("We find $a = 2$, so $a + 1 = 3$.") == ("a + 1 = 3",)


def test_repeated_box_is_deduplicated() -> None:
    assert parts("\\boxed{5} \\quad \\boxed{5}") == ("5",)


def test_outer_box_wrapping_inner_box() -> None:
    assert parts("\\boxed{\\boxed{9}}") == ("9",)


def test_answer_tag_wins_over_earlier_boxes() -> None:
    text = "<think>maybe \\boxed{6}</think>\n<answer>\\boxed{5}</answer>"
    assert parts(text) == ("5",)
    assert source(text) == "answer_tag/boxed"


def test_answer_tag_plain_content() -> None:
    assert parts("<think>2+3</think><answer> \\frac{1}{2} </answer>") == ("\\frac{1}{2}",)


def test_answer_tag_sentence_falls_back_to_its_number() -> None:
    assert parts("<answer>The bakery sold $1440$ muffins.</answer>") == ("1440",)


def test_statement_after_box_overrides_it() -> None:
    assert parts("First \\boxed{5}.\n\nCorrecting the offset, the final answer is 7.") == ("7",)


@pytest.mark.parametrize(
    "completion",
    [
        "$\\boxed{7}$. A common mistake is to think the answer is 5.",
        "The final answer is $\\boxed{7}$. Note that a naive count would suggest the answer is 5.",
        "$\\boxed{7}$. It is tempting to say the answer is 5, but that ignores overlap.",
        "$\\boxed{7}$. If we had forgotten the edge case, the answer is 5.",
        "$\\boxed{7}$\n\nNote: if the question instead asked for the perimeter, the answer is 20.",
        "$\\boxed{7}$\n\nWithout the restriction, the answer is 9.",
        "$\\boxed{7}$\n\nFor the harder version of this problem, the answer is 12.",
    ],
)
def test_a_value_someone_might_give_after_the_box_does_not_override_it(completion: str) -> None:
    assert parts(completion) == ("7",)


def test_a_value_someone_might_give_is_nobodys_answer() -> None:
    text = "The final answer is $7$. I hope it is correct. (Earlier I thought the answer is 5.)"
    assert parts(text) == ("$7$",)
    # A plain conclusion still states the answer, box or not.
    assert parts("First \\boxed{5}.\n\nWait, that is off by two. So the answer is 7.") == ("7",)
    assert parts("Since the function is increasing, the answer is 7.") == ("7",)


def test_what_describes_the_answer_is_not_part_of_it() -> None:
    assert parts("So $m+n = 16$, where $m = 7$ and $n = 9$.") == ("m+n = 16",)
    assert parts("The answer is 16 (since $m=7$ and $n=9$).") == ("16",)
    assert parts("The answer is 16 because 7+9=16.") == ("16",)


def test_what_is_never_shown_is_not_the_answer() -> None:
    assert parts("$\\boxed{7}$ <!-- \\boxed{5} -->") == ("7",)
    assert parts("$\\boxed{7}$ \\iffalse \\boxed{5} \\fi") == ("7",)


@pytest.mark.parametrize(
    "text",
    [
        "The answer is $\\boxed{7}$.\n% \\boxed{5}",
        "$\\boxed{7}$ % final: $\\boxed{5}$",
        "\\boxed{7}%\\boxed{5}",
        "$\\boxed{7}$\n  %% The answer is 5.",
    ],
)
def test_a_tex_comment_is_not_read(text: str) -> None:
    assert parts(text) == ("7",)


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("The share is $\\boxed{25\\%}$.", ("25\\%",)),
        ("The share is \\boxed{25%}.", ("25%",)),
        ("About 25% of them, so the answer is 25.", ("25",)),
        ("About 25 % of them, so $\\boxed{25}$.", ("25",)),
        ("$\\frac{1}{2}$% of them: $\\boxed{7}$", ("7",)),
        ("The rate (%) is $\\boxed{7}$.", ("7",)),
    ],
)
def test_a_percent_sign_is_not_a_comment(text: str, answer: tuple[str, ...]) -> None:
    assert parts(text) == answer


@pytest.mark.parametrize(
    "hidden",
    [
        "\\phantom{\\boxed{5}}",
        "$\\hphantom{\\boxed{5}}$",
        "$\\vphantom{\\boxed{5}}$",
        "${\\color{white}\\boxed{5}}$",
        "$\\textcolor{white}{\\boxed{5}}$",
        "${\\color{white} so the answer is \\boxed{5}}$",
        "$\\color{#FFFFFF} \\boxed{5}$",
    ],
)
def test_an_invisible_box_is_neither_the_answer_nor_a_hedge(hidden: str) -> None:
    assert parts(f"The answer is $\\boxed{{7}}$. {hidden}") == ("7",)
    assert parts(f"{hidden} The answer is $\\boxed{{7}}$.") == ("7",)


def test_a_box_in_a_visible_colour_is_read() -> None:
    assert parts("$\\textcolor{red}{\\boxed{5}}$") == ("5",)
    assert parts("$\\color{blue}\\boxed{5}$") == ("5",)


def test_the_answer_after_the_reasoning_block_stands() -> None:
    think = "<think>\nFirst guess \\boxed{5}. Rechecking: it's 7.\n</think>\n\n"
    assert parts(think + "The answer is $7$.") == ("$7$",)
    assert parts(think + "**7**") == ("**7**",)  # the whole closing line
    # Closing words that only end with a number leave the reasoning's answer.
    assert parts("<think>so \\boxed{7}</think>\nSee step 2.") == ("7",)


def test_quoted_answers_after_the_box_are_not_ours() -> None:
    for quote in (
        "According to the answer key, the answer is 5.",
        "The official answer is 5.",
        "My classmate's answer is 5.",
        "The textbook states the answer is 5.",
    ):
        assert parts(f"$\\boxed{{7}}$\n\n{quote}") == ("7",)


def test_a_later_box_called_wrong_or_quoted_is_not_the_answer() -> None:
    assert parts("$\\boxed{7}$. Note: $\\boxed{5}$ is a common wrong answer.") == ("7",)
    assert parts("$\\boxed{7}$\n\n(The answer key gives $\\boxed{5}$, which is wrong.)") == ("7",)
    assert parts("$\\boxed{7}$\n\nReference: $\\boxed{5}$") == ("7",)
    # A lone box stays the answer whatever its sentence says.
    assert parts("For reference, the final answer is $\\boxed{7}$.") == ("7",)


def test_prose_after_box_does_not_override() -> None:
    assert parts("\\boxed{5}\n\nThe answer is correct because it checks out.") == ("5",)


def test_statement_anchor_keeps_the_clause() -> None:
    assert parts("The answer is 381 or 391.") == ("381 or 391",)


@pytest.mark.parametrize(
    ("ending", "answer"),
    [
        ("Answer: 7; the remainder is 5.", "7"),
        ("Answer: 7, and the remainder is 5.", "7"),
        ("Answer: 7 and the remainder is 5.", "7"),
        ("Final answer: 7, so the remainder is 5.", "7"),
        ("The answer is 10; hence the remainder is 5.", "10"),
        ("The answer is 7; but the remainder is 5.", "7"),
        ("The answer is 5 apples; the rest is 2.", "5 apples"),
        ("The answer is \\frac{1}{2}; the other root is 3.", "\\frac{1}{2}"),
        # A clause that takes the value back is read as before: its value is the answer.
        ("Answer: 7; wait, actually it is 5.", "5"),
        ("The answer is 7; wait, actually the answer is 5", "5"),
        # Not a further clause: a list, a system, a sentence about the answer.
        ("Answer: x = 1; y = 2", "x = 1; y = 2"),
        ("Answer: p=5, q=2; p=7, q=2", "p=5, q=2; p=7, q=2"),
        ("The answer is 3 and 4.", "3 and 4"),
        ("The answer is the number of ways, and that is 120.", "120"),
    ],
)
def test_a_further_clause_after_the_stated_value_is_not_the_answer(
    ending: str, answer: str
) -> None:
    assert parts(ending) == (answer,)


def test_a_clause_describing_the_value_before_it_gives_that_value() -> None:
    ending = "the answer is that $n = 12$ is the only solution."
    assert parts(ending) == ("n = 12",)
    # "a solution" leaves room for others, "not" denies the value: neither is read as the answer.
    assert parts("the answer is that $n = 12$ is a solution.") != ("n = 12",)
    assert parts("the answer is that $n = 12$ is not the solution.") != ("n = 12",)
    assert parts("the answer is that $n = 12$ is the value that doesn't work.") != ("n = 12",)
    assert parts("the answer is that $n = 12$ is the wrong answer.") != ("n = 12",)


@pytest.mark.parametrize(
    "ending",
    [
        "The answer is 4, not 3.",
        "The answer is 4 (not 3).",
        "The answer is 4, but not 3.",
        "The answer is 4 rather than 3.",
        "So x is 4, not 3.",
        "So x is $4$, not $3$.",
        "4, not 3",
    ],
)
def test_a_value_ruled_out_after_the_answer_is_not_read(ending: str) -> None:
    found = parts(REASONING + ending)
    assert found is not None and found[0].strip("$") == "4"


def test_where_a_value_is_attained_is_not_the_value() -> None:
    text = "The minimum of the expression is $\\frac{3}{2}$, attained at $a=b=c=1$."
    assert parts(text, frozenset({"last_number"})) == ("\\frac{3}{2}",)
    joined = "The maximum area is 12 when $x=3$ and $y = 4$."
    assert parts(joined, frozenset({"last_number"})) == ("12",)
    # With nothing else stated, the condition is all there is.
    assert parts("It is attained at $x = 2$.", frozenset({"last_number"})) == ("x = 2",)


def test_a_formula_ruled_out_is_skipped_with_its_numbers() -> None:
    assert parts("Thus $x = 5$ (not $x = -5$, which is extraneous).") == ("x = 5",)


def test_a_box_ruled_out_is_skipped() -> None:
    assert parts("So the answer is $\\boxed{5}$ and not $\\boxed{6}$.") == ("5",)
    assert parts("\\boxed{5}, not \\boxed{6}") == ("5",)


def test_a_negated_last_number_is_no_answer() -> None:
    assert parts("Hence the count is not 3.") is None


@pytest.mark.parametrize("text", ["The answer is not 5.", "The answer isn't 5."])
def test_an_answer_statement_that_denies_a_value_is_no_answer(text: str) -> None:
    assert parts(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "The answer cannot be 5.",
        "The answer can't be 5.",
        "The answer must not be 5.",
        "The answer could never be 5.",
        "The answer is unlikely to be 5.",
        "The result is not equal to 5.",
        "We can rule out 5.",
        "5 is not the answer.",
        "So 5 is impossible.",
        "It is false that the answer is 5.",
        "There is no way the answer is 5.",
    ],
)
def test_a_value_denied_in_other_words_is_no_answer(text: str) -> None:
    assert parts(text) is None


def test_a_denied_value_then_the_answer() -> None:
    assert parts("The answer is not 5, but 6.") == ("6",)


def test_a_time_of_day_is_one_value() -> None:
    assert parts("The train arrives at 11:30 AM.") == ("11:30 AM.",)
    assert parts("It ends at 9:05 p.m.", frozenset({"last_number"})) == ("9:05 p.m.",)
    assert parts("The bus leaves at 7:45.", frozenset({"last_number"})) == ("7:45",)


def test_statement_with_verb_takes_the_value() -> None:
    assert parts("Final Answer: The volume of $ABCD$ is 120. I hope it is correct.") == ("120",)


def test_short_whole_answers() -> None:
    assert parts("$\\frac{1}{2}$") == ("$\\frac{1}{2}$",)
    assert parts("Monday") == ("Monday",)
    assert parts("\\sin(\\pi/3)") == ("\\sin(\\pi/3)",)


def test_no_answer_is_none() -> None:
    assert parts("I am not sure how to continue with this problem.") is None
    assert parts("") is None


def test_disabled_forms_are_skipped() -> None:
    text = REASONING + "#### 1500"
    found = extract_answer(text, frozenset({"boxed"}))
    assert found is None


def test_all_boxed_reads_every_box() -> None:
    assert all_boxed("\\boxed{1} papers and \\boxed{2} bins") == ["1", "2"]


def test_last_box_cluster_is_linear_on_deep_nesting() -> None:
    text = "\\boxed{" + "{" * 50_000 + "1" + "}" * 50_000 + "}"
    start = time.process_time()
    boxes = last_box_cluster(text)
    assert time.process_time() - start < 2.0
    assert len(boxes) == 1


def test_extraction_is_fast_on_long_text() -> None:
    text = (REASONING * 10) + "Therefore the answer is $\\boxed{1500}$."
    start = time.process_time()
    for _ in range(100):
        extract_answer(text, ALL)
    assert (time.process_time() - start) / 100 < 0.01


def test_answer_colon_in_prose_is_not_an_anchor() -> None:
    text = "So x = \\boxed{5}.\n\nLet me check my answer: 5 + 2 = 7, correct."
    assert parts(text) == ("5",)


@pytest.mark.parametrize(
    "label", ["Answer: 42", "**Answer:** 42", "### Answer: 42", "  answer: 42"]
)
def test_answer_label_at_line_start(label: str) -> None:
    assert parts(REASONING + label) == ("42",)


@pytest.mark.parametrize(
    "ending",
    [
        "The answer is $\\$18$.",
        "So she has $\\$18$ left, and the answer is $\\$18$.",
        "Answer: $\\$18$.",
        "**Final Answer**\n$\\$18$",
    ],
)
def test_escaped_dollar_inside_inline_math_is_not_a_delimiter(ending: str) -> None:
    found = parts(REASONING + ending)
    assert found is not None and found[0].endswith("\\$18$")


def test_boxes_with_prose_between_are_offered_as_parts() -> None:
    found = extract_answer("\\boxed{(3,3)} for part (a) and \\boxed{(1,1)} for part (b).", ALL)
    assert found is not None
    assert found.parts == ("(1,1)",)  # the tight cluster: what a single-value answer reads
    assert part_boxes(found) == ("(3,3)", "(1,1)")


def test_a_box_taken_back_is_not_a_part() -> None:
    text = "So $x=\\boxed{2}$. Wait, that is wrong. Solving again, $x=\\boxed{3}$."
    found = extract_answer(text, ALL)
    assert found is not None and found.parts == ("3",) and part_boxes(found) == ()


def test_parts_stop_at_a_long_gap() -> None:
    text = "\\boxed{1}" + " filler" * 400 + " and \\boxed{2}"
    found = extract_answer(text, ALL)
    assert found is not None and part_boxes(found) == ()
    assert last_box_cluster(text, parts=True)[0].content == "2"


def test_thousands_of_nested_boxes_read_as_the_innermost_answer() -> None:
    text = "\\boxed{" * 20_000 + "1"
    boxes = last_box_cluster(text, parts=True) + last_box_cluster(text)
    assert [b.content for b in boxes] == ["1", "1"]
