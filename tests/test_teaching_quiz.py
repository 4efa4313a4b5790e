"""Quiz logic and the lesson's questions; the quiz widgets' behaviour and text fallback."""

from __future__ import annotations

import pytest

from graders.teaching.quiz import Choice, Feedback, Quiz, QuizError, check
from graders.teaching.quizzes import KNOWLEDGE_CHECK, QUIZZES, SOURCE_QUESTION
from graders.teaching.widgets import KnowledgeCheck, QuizView, show_knowledge_check, show_quiz


def _quiz(**overrides) -> Quiz:
    fields = dict(id="t", question="Which?", choices=(
        Choice("right one", True, "because"), Choice("wrong one", False, "no")))
    fields.update(overrides)
    return Quiz(**fields)


def test_answers_by_index_letter_or_text():
    quiz = _quiz()
    for answer in (0, "a", "A", "(a)", " right one "):
        feedback = quiz.answer(answer)
        assert feedback.correct and feedback.letter == "a" and feedback.why == "because"
    assert not quiz.answer("b").correct
    assert quiz.right_letter == "a"


@pytest.mark.parametrize("bad", ["c", 2, -1, "", None, True, 1.0])
def test_an_answer_that_names_no_choice_says_which_letters_exist(bad):
    with pytest.raises(QuizError, match="answer with a letter, a, b"):
        _quiz().answer(bad)


@pytest.mark.parametrize("choices,message", [
    ((Choice("x", True, ""),), "between 2 and 26"),
    ((Choice("x", True, ""), Choice("y", True, "")), "exactly one right answer, has 2"),
    ((Choice("x", False, ""), Choice("y", False, "")), "exactly one right answer, has 0"),
    ((Choice("x", True, ""), Choice("x", False, "")), "same text"),
])
def test_a_malformed_quiz_is_refused(choices, message):
    with pytest.raises(QuizError, match=message):
        _quiz(choices=choices)


def test_feedback_text_and_html():
    wrong = _quiz().answer("b")
    assert wrong.to_text() == "(b) Not quite. no Try another answer."
    assert 'data-correct="false"' in wrong.to_html()
    right = Feedback("t", "a", True, "a <b> tag")
    assert "Right." in right.to_html() and "&lt;b&gt;" in right.to_html()
    assert "Try another" not in str(right)


def test_text_hides_or_reveals_the_answers():
    quiz = _quiz(source="somewhere")
    assert "because" not in str(quiz) and "(b) wrong one" in str(quiz)
    revealed = quiz.to_text()
    assert "(a) right: because" in revealed and "(b) wrong: no" in revealed
    assert "[somewhere]" in revealed


def test_check_answers_in_code():
    assert check(_quiz(), "a").correct


@pytest.mark.parametrize("quiz_id", sorted(QUIZZES))
def test_every_lesson_question_explains_every_answer(quiz_id):
    quiz = QUIZZES[quiz_id]
    assert quiz.id == quiz_id
    assert quiz.question.endswith("?")
    for choice in quiz.choices:
        assert len(choice.why) > 30, f"{quiz_id}: {choice.text!r} needs an explanation"


def test_the_knowledge_check_starts_with_the_source_question():
    assert KNOWLEDGE_CHECK[0] == SOURCE_QUESTION == "in_place_overwrite"
    assert len(KNOWLEDGE_CHECK) >= 4 and len(set(KNOWLEDGE_CHECK)) == len(KNOWLEDGE_CHECK)
    assert all(q in QUIZZES for q in KNOWLEDGE_CHECK)
    source = QUIZZES[SOURCE_QUESTION]
    assert "in place" in source.question or "straight over" in source.question
    assert "half-written" in source.choices[source.letters.index(source.right_letter)].text


def test_the_b_only_question_in_part_2_is_answered_by_the_save_after_tool_1():
    # lessons/README.md tells the browser test to ask QUIZZES for the right letter.
    quiz = QUIZZES["b_only_tool_window"]
    right = quiz.choices[quiz.letters.index(quiz.right_letter)]
    assert "after tool 1" in right.text


def test_quiz_view_shows_feedback_on_choice_and_keeps_the_first_try():
    view = show_quiz("b_only_tool_window")
    assert isinstance(view, QuizView)
    assert {"cl-quiz", "cl-quiz-b-only-tool-window"} <= set(view._dom_classes)
    assert "cl-quiz-choices" in view.choices._dom_classes
    assert "cl-quiz-feedback" in view.feedback._dom_classes
    assert view.choices.index is None and "Choose an answer" in view.feedback.value
    wrong = next(letter for letter in view.quiz.letters if letter != view.quiz.right_letter)
    view.choose(wrong)
    assert 'data-correct="false"' in view.feedback.value and "Not quite" in view.feedback.value
    view.choose(view.quiz.right_letter)
    assert 'data-correct="true"' in view.feedback.value
    assert view.first_answer_correct is False


def test_quiz_view_text_fallback_is_the_question_with_answers():
    view = show_quiz("power_loss")
    bundle, metadata = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == QUIZZES["power_loss"].to_text()
    # What a saved notebook shows in the widget's place (graders.workspace.notebooks.before_save).
    assert metadata == {"checkpoint_lab_rerun": "Run this cell to see the quiz (its buttons "
                                                "need the running kernel)."}


def test_quiz_view_carries_the_stylesheet_that_gives_each_option_its_own_box():
    view = show_quiz("power_loss")
    style = view.children[0]
    assert "cl-style" in style._dom_classes and style.value.startswith("<style>")
    # The fixed-height label of ipywidgets is what made long options run into each other.
    rules = style.value.split(".widget-radio-box label {", 1)[1].split("}", 1)[0]
    assert "height: auto" in rules and "white-space: normal" in rules
    assert "label:has(input:checked)" in style.value  # the chosen one is marked
    assert view.choices.index is None and len(view.choices.options) == len(view.quiz.choices)


def test_the_verdict_colours_come_from_classes_with_a_dark_theme_variant():
    from graders.teaching.style import CSS

    right, wrong = _quiz().answer("a").to_html(), _quiz().answer("b").to_html()
    assert 'class="cl-right"' in right and 'class="cl-wrong"' in wrong
    assert "style=" not in right + wrong
    assert 'body[data-jp-theme-light="false"] .cl-quiz-verdict .cl-wrong' in CSS


def test_knowledge_check_counts_first_tries():
    check_view = show_knowledge_check()
    assert isinstance(check_view, KnowledgeCheck)
    assert "cl-knowledge-check" in check_view._dom_classes
    assert "0 of 0 answered" in check_view.score.value
    first, second = check_view.views[:2]
    first.choose(QUIZZES[KNOWLEDGE_CHECK[0]].right_letter)
    wrong = next(letter for letter in second.quiz.letters if letter != second.quiz.right_letter)
    second.choose(wrong)
    second.choose(second.quiz.right_letter)
    assert "1 of 2 answered" in check_view.score.value
    text = check_view._repr_mimebundle_()[0]["text/plain"]
    assert text.startswith("Question 1. ") and f"Question {len(KNOWLEDGE_CHECK)}." in text


# -- quizzes that test understanding: no tells in length or position, an order per student ----

def test_the_right_answer_is_rarely_the_longest_and_sits_in_every_position():
    from graders.teaching.quizzes import AUTHORED

    quizzes = list(AUTHORED.values())
    longest = [q.id for q in quizzes
               if max(q.choices, key=lambda c: len(c.text)).correct]
    assert len(longest) <= len(quizzes) / 3, f"the right answer is the longest in {longest}"
    positions = {q.letters.index(q.right_letter) for q in quizzes}
    widest = max(len(q.choices) for q in quizzes)
    assert positions == set(range(widest)), f"the right answer only ever sits at {positions}"


def test_no_option_stands_out_by_its_length():
    from graders.teaching.quizzes import AUTHORED

    for quiz in AUTHORED.values():
        lengths = [len(c.text) for c in quiz.choices]
        assert max(lengths) <= 1.6 * min(lengths), (quiz.id, lengths)


def test_each_student_gets_an_order_of_their_own_the_same_on_every_run():
    from graders.teaching.quizzes import AUTHORED, quizzes_for, shuffled

    alice, again, bob = quizzes_for("alice"), quizzes_for("alice"), quizzes_for("bob")
    assert all(alice[q].choices == again[q].choices for q in AUTHORED)
    assert any(alice[q].choices != bob[q].choices for q in AUTHORED)
    assert any(alice[q].choices != AUTHORED[q].choices for q in AUTHORED)
    for quiz_id, quiz in AUTHORED.items():
        mine = alice[quiz_id]
        assert sorted(c.text for c in mine.choices) == sorted(c.text for c in quiz.choices)
        for choice in quiz.choices:  # feedback travels with its option
            feedback = mine.answer(choice.text)
            assert (feedback.correct, feedback.why) == (choice.correct, choice.why)
    assert shuffled(AUTHORED["power_loss"], "authored") is AUTHORED["power_loss"]


def test_the_seed_comes_from_the_environment_or_the_user_name(monkeypatch):
    import getpass

    from graders.teaching.quizzes import SEED_ENV, student_seed

    monkeypatch.setenv(SEED_ENV, "class-of-2026")
    assert student_seed() == "class-of-2026"
    monkeypatch.delenv(SEED_ENV)
    assert student_seed() == getpass.getuser()


def test_the_a_only_question_is_asked_in_part_2():
    from tests.conftest import ROOT

    lesson = (ROOT / "lessons" / "02_two_save_points.py").read_text()
    assert 'show_quiz("a_only_after_result")' in lesson
    quiz = QUIZZES["a_only_after_result"]
    right = quiz.choices[quiz.letters.index(quiz.right_letter)]
    assert "again" in right.text and "pendingToolUse" in right.text


def test_a_view_is_displayed_with_the_script_that_makes_it_keyboard_usable(monkeypatch):
    import IPython.display

    from graders.teaching.style import A11Y_JS

    shown = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, **kwargs: shown.append((obj, kwargs)))
    show_quiz("power_loss")._ipython_display_()
    (widget, widget_kwargs), (script, script_kwargs) = shown
    assert "application/vnd.jupyter.widget-view+json" in widget and widget_kwargs["raw"]
    assert script["application/javascript"] == A11Y_JS
    assert script_kwargs["metadata"] == {"checkpoint_lab_rerun": ""}  # dropped when saved
    # The script stops JupyterLab's notebook shortcuts on the controls themselves.
    assert "data-lm-suppress-shortcuts" in A11Y_JS and ".cl-quiz-choices input" in A11Y_JS
