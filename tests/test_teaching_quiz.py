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


def test_quiz_view_text_fallback_is_the_question_and_how_to_answer_it_in_code():
    view = show_quiz("power_loss")
    bundle, metadata = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.startswith(QUIZZES["power_loss"].to_text(reveal=False))
    assert "check(QUIZZES['power_loss'], LETTER)" in text and '"a", "b", "c", "d"' in text
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
    assert text.startswith(f"Question 1 ({KNOWLEDGE_CHECK[0]}). ")
    assert f"Question {len(KNOWLEDGE_CHECK)} ({KNOWLEDGE_CHECK[-1]})." in text


# -- quizzes that test understanding: no tells in length or position, an order per student ----

def _every_question(seed: str | None = None) -> list:
    """Every quiz question and every prediction, in the authored order or ``seed``'s."""
    from graders.teaching.predictions import AUTHORED_PREDICTIONS, predictions_for
    from graders.teaching.quizzes import AUTHORED, quizzes_for

    if seed is None:
        return [*AUTHORED.values(), *AUTHORED_PREDICTIONS.values()]
    return [*quizzes_for(seed).values(), *predictions_for(seed).values()]


#: The chi-square statistic's 5 % critical value by degrees of freedom.
_CHI2_5 = {1: 3.841, 2: 5.991, 3: 7.815, 4: 9.488, 5: 11.070, 6: 12.592}


def _chi2(counts: list[int]) -> float:
    expected = sum(counts) / len(counts)
    return sum((c - expected) ** 2 / expected for c in counts)


def _length_rank(quiz) -> int:
    """How many options are strictly longer than the right one (0: the right one is longest)."""
    right = next(c for c in quiz.choices if c.correct)
    return sum(len(c.text) > len(right.text) for c in quiz.choices)


def _by_option_count(questions, value) -> dict[int, list[int]]:
    """Option count -> how often ``value(question)`` is 0, 1, ... across ``questions``."""
    counts: dict[int, list[int]] = {}
    for q in questions:
        row = counts.setdefault(len(q.choices), [0] * len(q.choices))
        row[value(q)] += 1
    return counts


def _uniform_at_5_percent(counts: dict[int, list[int]]) -> tuple[bool, float, float]:
    """Pooled chi-square over the option counts: (uniform at 5 %, statistic, critical value)."""
    statistic = sum(_chi2(row) for row in counts.values())
    df = sum(len(row) - 1 for row in counts.values())
    return statistic <= _CHI2_5[df], statistic, _CHI2_5[df]


def test_the_right_answers_length_rank_is_near_uniform():
    """Issue 30 (cues): neither "pick the longest" nor "pick the shortest" (nor any rank) beats
    chance. The right answer's length rank among its options, per option count, passes a
    chi-square test of uniformity at 5 % across every quiz and prediction."""
    questions = _every_question()
    assert len(questions) >= 28
    counts = _by_option_count(questions, _length_rank)
    uniform, statistic, critical = _uniform_at_5_percent(counts)
    assert uniform, f"length ranks {counts}: chi-square {statistic:.2f} > {critical}"
    for options, row in counts.items():  # and no rank is missing where there are enough
        assert min(row) >= sum(row) // (2 * options), (options, row)


def test_the_length_rank_test_can_fail():
    from graders.teaching.quiz import Choice, Quiz

    short_right = [Quiz(id=f"q{i}", question="?", choices=(
        Choice("a", True, "w"), Choice("bbbb", False, "w"), Choice("cccccc", False, "w")))
        for i in range(15)]
    assert not _uniform_at_5_percent(_by_option_count(short_right, _length_rank))[0]


def _position(quiz) -> int:
    return quiz.letters.index(quiz.right_letter)


def test_the_right_answers_position_is_uniform_for_each_student():
    """Issue 30 (cues): in each student's order, the right answer's position across every quiz
    and prediction passes a chi-square test at 5 % (for about 1 student in 20 it fails by
    chance: at most 3 of 40 may), and pooled over the students too."""
    failing, pooled = [], {}
    for student in range(40):
        counts = _by_option_count(_every_question(f"hub:student-{student}"), _position)
        if not _uniform_at_5_percent(counts)[0]:
            failing.append(student)
        for options, row in counts.items():
            before = pooled.get(options, [0] * options)
            pooled[options] = [a + b for a, b in zip(before, row, strict=True)]
    assert len(failing) <= 3, failing
    uniform, statistic, critical = _uniform_at_5_percent(pooled)
    assert uniform, (pooled, statistic, critical)


def test_no_answer_is_told_by_its_position():
    """Every question and prediction is shuffled per student; over many students each letter
    holds the right answer about as often as chance says, and as written no letter holds it in
    more than half the questions."""
    authored = [q.letters.index(q.right_letter) for q in _every_question()]
    widest = max(len(q.choices) for q in _every_question())
    assert set(authored) == set(range(widest))
    assert max(authored.count(i) for i in set(authored)) <= len(authored) / 2
    firsts, total = 0, 0
    for student in range(40):
        questions = _every_question(f"student-{student}")
        firsts += sum(q.right_letter == "a" for q in questions)
        total += len(questions)
        assert sum(q.right_letter == "a" for q in questions) < len(questions) / 2
    chance = sum(1 / len(q.choices) for q in _every_question()) / len(_every_question())
    assert abs(firsts / total - chance) < 0.06, (firsts / total, chance)


def test_predictions_are_shuffled_per_student_as_the_quizzes_are():
    from graders.teaching.predictions import AUTHORED_PREDICTIONS, PREDICTIONS, predictions_for

    assert predictions_for("alice") == predictions_for("alice")
    assert any(predictions_for("alice")[p].choices != predictions_for("bob")[p].choices
               for p in AUTHORED_PREDICTIONS)
    assert predictions_for("authored") == AUTHORED_PREDICTIONS
    from graders.teaching.quiz_order import student_seed

    assert PREDICTIONS == predictions_for(student_seed())


def test_no_widget_fallback_tells_an_answer():
    """Issue 18.6: GitHub, nbviewer and VS Code without widgets show the text/plain part of each
    widget. It shows the question, and how to answer; never which answer is right, nor why."""
    from graders.teaching.predict import AnswerLock, compare, forget, predict
    from graders.teaching.predictions import PREDICTIONS

    forget()
    views = [show_quiz(q) for q in QUIZZES] + [predict(p) for p in PREDICTIONS]
    views.append(show_knowledge_check())
    for view in views:
        text = view._repr_mimebundle_()[0]["text/plain"]
        quizzes = [v.quiz for v in view.views] if isinstance(view, KnowledgeCheck) else [
            getattr(view, "quiz", None) or view.prediction]
        for quiz in quizzes:
            assert quiz.question in text
            for choice in quiz.choices:
                assert choice.why not in text, (quiz.id, choice.why)
            assert f"({quiz.right_letter}) right" not in text and "Answers, and why" not in text
            assert f'lock_in("{quiz.right_letter}")' not in text
    lock = AnswerLock("l2_name_the_failures")._repr_mimebundle_()[0]["text/plain"]
    assert "lock_in()" in lock
    # compare() is what a crash cell ends with: the sentence, never the dataclass and its flags
    assert "correct=True" not in repr(compare("torn_in_place"))
    assert repr(compare("torn_in_place")).startswith("You locked in no prediction")


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


def test_the_seed_is_the_env_then_the_hub_user_then_one_kept_in_the_workspace(monkeypatch,
                                                                              tmp_path):
    import getpass

    from graders.teaching.quiz_order import HUB_USER_ENV, SEED_FILE
    from graders.teaching.quizzes import SEED_ENV, student_seed

    monkeypatch.setenv("CHECKPOINT_LAB_WORKSPACE", str(tmp_path))
    monkeypatch.setenv(HUB_USER_ENV, "alice")
    monkeypatch.setenv(SEED_ENV, "class-of-2026")
    assert student_seed() == "class-of-2026"
    monkeypatch.delenv(SEED_ENV)
    assert student_seed() == "hub:alice"
    monkeypatch.delenv(HUB_USER_ENV)
    kept = student_seed()
    assert kept != getpass.getuser() and (tmp_path / SEED_FILE).read_text().strip() == kept
    assert student_seed() == kept, "the same seed on every run"
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("CHECKPOINT_LAB_WORKSPACE", str(other))
    assert student_seed() != kept, "another workspace, another student"


def test_two_hub_users_with_the_same_os_user_name_get_different_orders(tmp_path):
    """On the documented hub image and on Binder every student's OS user is jovyan."""
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = ("import json, getpass\n"
            "from graders.teaching.quizzes import QUIZZES\n"
            "from graders.teaching.predictions import PREDICTIONS\n"
            "print(json.dumps([getpass.getuser(), {q.id: [c.text for c in q.choices]\n"
            "    for q in [*QUIZZES.values(), *PREDICTIONS.values()]}]))\n")
    seen = []
    for user in ("alice", "bob"):
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
               "USER": "jovyan", "LOGNAME": "jovyan", "JUPYTERHUB_USER": user,
               "CHECKPOINT_LAB_WORKSPACE": str(tmp_path)}
        out = subprocess.run([sys.executable, "-c", code], env=env, text=True, cwd=tmp_path,
                             capture_output=True, check=True).stdout
        seen.append(json.loads(out))
    (os_alice, alice), (os_bob, bob) = seen
    assert os_alice == os_bob == "jovyan"
    differ = [q for q in alice if alice[q] != bob[q]]
    assert len(differ) > len(alice) / 2, differ


def test_part_2_asks_about_both_halves_of_goal_2():
    """B only and A only each get a prediction, a real crash and a quiz in part 2."""
    from graders.teaching.predictions import PREDICTIONS
    from tests.conftest import ROOT

    lesson = (ROOT / "lessons" / "02_two_save_points.py").read_text()
    for call in ('predict("b_only_runs_twice")', 'predict("a_only_finished_runs_twice")',
                 'show_quiz("b_only_tool_window")', 'show_quiz("a_only_finished_run")',
                 'variant("A only", "temp + rename")', '"killed_during_model_call_3"'):
        assert call in lesson, call
    prediction = PREDICTIONS["a_only_finished_runs_twice"]
    right = prediction.choices[prediction.letters.index(prediction.right_letter)]
    assert "again" in right.text
    quiz = QUIZZES["a_only_finished_run"]
    assert "in flight" in quiz.choices[quiz.letters.index(quiz.right_letter)].text


def test_no_question_is_asked_twice():
    """A repeated question tests memory of a letter: the knowledge check asks its own."""
    from graders.teaching.quiz_questions import lesson07_knowledge_check_and_recap as recap

    assert set(KNOWLEDGE_CHECK) <= {q.id for q in recap.QUESTIONS}


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
