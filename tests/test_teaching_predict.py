"""Predict, then observe: the widget holds the answer back until a prediction is locked in."""

from __future__ import annotations

import pytest

from graders.teaching.predict import PredictionView, compare, forget, locked_in, predict
from graders.teaching.predictions import PREDICTIONS
from tests.conftest import ROOT


@pytest.fixture(autouse=True)
def fresh_kernel():
    forget()
    yield
    forget()


@pytest.mark.parametrize("prediction_id", sorted(PREDICTIONS))
def test_every_prediction_asks_a_question_and_explains_every_option(prediction_id):
    p = PREDICTIONS[prediction_id]
    assert p.question.endswith("?")
    for choice in p.choices:
        assert len(choice.why) > 30, (prediction_id, choice.text)
        assert len(choice.text) <= 80, "options stay on one line"


def test_nothing_is_revealed_before_locking_in_and_the_lock_holds():
    view = predict("torn_in_place")
    assert isinstance(view, PredictionView)
    assert {"cl-predict", "cl-predict-torn-in-place"} <= set(view._dom_classes)
    text = view._repr_mimebundle_()[0]["text/plain"]
    for choice in PREDICTIONS["torn_in_place"].choices:
        assert choice.why not in text, "the fallback must not give the answer away"
    assert view.lock.disabled, "nothing picked yet: nothing to lock in"
    view.choices.index = 0
    assert not view.lock.disabled
    view.lock.click()
    assert locked_in("torn_in_place") == 0
    assert view.choices.disabled and view.lock.disabled
    assert "Locked in: <b>(a)</b>" in view.status.value and "run the next cell" in view.status.value
    view.lock_in(1)
    assert locked_in("torn_in_place") == 0, "a locked prediction cannot be changed"
    again = predict("torn_in_place")
    assert again.choices.index == 0 and again.choices.disabled, "a rerun cell shows the lock"


def test_compare_says_what_was_predicted_and_what_happened():
    none = compare("torn_in_place")
    assert none.right is None and none.to_text().startswith("You locked in no prediction")
    torn = PREDICTIONS["torn_in_place"]  # this student's order of the options
    right = next(c for c in torn.choices if c.correct)
    for told in (f"({torn.right_letter})", right.text, right.why, "What happened"):
        assert told not in none.to_text(), "Run All answers a prediction nobody made (G8)"
    wrong_letter = next(letter for letter in torn.letters if letter != torn.right_letter)
    predict("torn_in_place").lock_in(wrong_letter)
    wrong = compare("torn_in_place")
    assert wrong.right is False
    assert f"You predicted ({wrong_letter})" in str(wrong)
    assert f"What happened: ({torn.right_letter})" in str(wrong)
    assert 'data-right="false"' in wrong._repr_html_()
    predict("torn_atomic").lock_in(PREDICTIONS["torn_atomic"].right_letter)
    assert compare("torn_atomic").right is True
    assert "That is what happened" in str(compare("torn_atomic"))


def test_unknown_predictions_are_named():
    with pytest.raises(KeyError, match="the predictions are"):
        predict("nope")


def test_every_prediction_is_asked_in_a_lesson_just_before_the_crash_it_predicts():
    lessons = "\n".join(p.read_text() for p in sorted((ROOT / "lessons").glob("*.py")))
    for prediction_id in PREDICTIONS:
        assert f'predict("{prediction_id}")' in lessons, prediction_id
        assert f'compare("{prediction_id}")' in lessons, prediction_id
        assert lessons.index(f'predict("{prediction_id}")') < lessons.index(
            f'compare("{prediction_id}")')
