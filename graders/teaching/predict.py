"""Predict, then observe: the student commits to what a crash will leave before running it.

A lesson shows ``predict("id")`` just above a cell that crashes a loop for real. The student picks
what they expect and locks it in; then they run the next cell, which ends with
``compare("id")``: what they predicted beside what happened, and why. Nothing is revealed before
the prediction is locked in, and a prediction cannot be changed once it is.

    >>> view = predict("torn_in_place")        # in a notebook: pick, then "Lock in"
    >>> view.lock_in("a")                       # the same, in code
    >>> print(compare("torn_in_place"))
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets

from graders.teaching._fallback import TextFallback
from graders.teaching.predictions import PREDICTIONS
from graders.teaching.quiz import Quiz

__all__ = ["PredictionView", "Comparison", "predict", "compare", "locked_in", "forget",
           "AnswerLock", "lock_answer"]

#: What each prediction was locked in as, in this kernel: {prediction id: choice index}.
_LOCKED: dict[str, int] = {}


def _prediction(prediction_id: str) -> Quiz:
    if prediction_id not in PREDICTIONS:
        raise KeyError(f"no prediction {prediction_id!r}; the predictions are "
                       f"{', '.join(sorted(PREDICTIONS))}")
    return PREDICTIONS[prediction_id]


def locked_in(prediction_id: str) -> int | None:
    """The index of the choice locked in for ``prediction_id`` in this kernel, or None."""
    _prediction(prediction_id)
    return _LOCKED.get(prediction_id)


def forget(prediction_id: str | None = None) -> None:
    """Forget one locked-in prediction (or all of them), as a fresh kernel would."""
    if prediction_id is None:
        _LOCKED.clear()
    else:
        _LOCKED.pop(prediction_id, None)


def _style() -> widgets.HTML:
    """The quiz's option boxes (one box per option, the radio inside it, the chosen one marked),
    for the prediction's options, and the colours of `compare`'s verdict."""
    from graders.teaching.style import CSS

    quiz_rules = [line for line in CSS.split("\n\n") if ".cl-quiz .cl-quiz-choices" in line]
    css = "\n".join(rule.replace(".cl-quiz .cl-quiz-choices", ".cl-predict .cl-quiz-choices")
                    for rule in quiz_rules)
    css += ("\n.cl-predict-compare .cl-right { color: #1a7f37; }"
            "\n.cl-predict-compare .cl-wrong { color: #b42318; }"
            '\nbody[data-jp-theme-light="false"] .cl-predict-compare .cl-right { color: #75e0a7; }'
            '\nbody[data-jp-theme-light="false"] .cl-predict-compare .cl-wrong { color: #fda29b; }')
    style = widgets.HTML(f"<style>{css}</style>")
    style.add_class("cl-style")
    return style


class PredictionView(TextFallback, widgets.VBox):
    """A question about what a crash will leave: pick an answer, lock it in, then run the cell."""

    rerun_hint = "Run this cell to make your prediction (its buttons need the running kernel)."

    def __init__(self, prediction: Quiz, **kwargs) -> None:
        from graders.teaching.style import style_widget

        self.prediction = prediction
        self.question = widgets.HTML(
            f"<b>Predict:</b> {html.escape(prediction.question)}")
        self.choices = widgets.RadioButtons(
            options=[(f"({letter}) {c.text}", i) for i, (letter, c)
                     in enumerate(zip(prediction.letters, prediction.choices, strict=True))],
            index=None, layout=widgets.Layout(width="100%"),
            description="", style={"description_width": "0px"})
        self.choices.add_class("cl-quiz-choices")
        self.choices.add_class("cl-predict-choices")
        self.lock = widgets.Button(description="Lock in my prediction", disabled=True,
                                   tooltip="Commit to this answer, then run the next cell",
                                   layout=widgets.Layout(width="max-content"))
        self.lock.add_class("cl-predict-lock")
        self.status = widgets.HTML("<em>Pick what you expect, then lock it in.</em>")
        self.status.add_class("cl-predict-status")
        self.choices.observe(self._on_pick, names="index")
        self.lock.on_click(lambda _button: self.lock_in(self.choices.index))
        super().__init__([style_widget(), _style(), self.question, self.choices, self.lock,
                          self.status],
                         **kwargs)
        self.add_class("cl-predict")
        self.add_class(f"cl-predict-{prediction.id.replace('_', '-')}")
        if prediction.id in _LOCKED:
            self._show_locked(_LOCKED[prediction.id])

    def _on_pick(self, change) -> None:
        self.lock.disabled = change["new"] is None or self.prediction.id in _LOCKED

    def lock_in(self, answer: int | str | None) -> None:
        """Commit to ``answer`` (an index, a letter or its text), as the button does."""
        if answer is None:
            self.status.value = "<em>Pick an answer first.</em>"
            return
        if self.prediction.id in _LOCKED:
            return
        index = self.prediction.index_of(answer)
        _LOCKED[self.prediction.id] = index
        self._show_locked(index)

    def _show_locked(self, index: int) -> None:
        self.choices.index = index
        self.choices.disabled = True
        self.lock.disabled = True
        letter = self.prediction.letters[index]
        self.status.value = (f"Locked in: <b>({letter})</b>. Now run the next cell and compare "
                             "what really happens.")

    def fallback_text(self) -> str:
        letters = ", ".join(f'"{letter}"' for letter in self.prediction.letters)
        return (f"Predict: {self.prediction.to_text(reveal=False)}\n"
                f"Lock in your answer in code: predict({self.prediction.id!r}).lock_in(LETTER), "
                f"with LETTER one of {letters}; then run the next cell.")


def predict(prediction_id: str) -> PredictionView:
    """The prediction ``prediction_id`` (a key of `PREDICTIONS`), ready to display."""
    return PredictionView(_prediction(prediction_id))


@dataclass(frozen=True)
class Comparison:
    """What the student predicted beside what happened."""

    prediction: Quiz
    chosen: int | None

    @property
    def right(self) -> bool | None:
        """True or False once a prediction was locked in; None when none was."""
        return None if self.chosen is None else self.prediction.choices[self.chosen].correct

    def to_text(self) -> str:
        p = self.prediction
        answer = p.letters.index(p.right_letter)
        what = f"({p.right_letter}) {p.choices[answer].text}"
        if self.chosen is None:
            # Run All must not answer the prediction for a student who skipped it (issue 30, G8).
            return ("You locked in no prediction above, so there is nothing to compare yet: "
                    "choose one above, lock it in, then run this cell again.")
        mine = self.prediction.choices[self.chosen]
        said = f"You predicted ({p.letters[self.chosen]}) {mine.text}"
        if mine.correct:
            return f"{said} That is what happened. {mine.why}"
        return f"{said} Not what happened: {mine.why} What happened: {what}"

    __str__ = to_text

    def __repr__(self) -> str:
        # What a viewer without HTML shows: the sentence, never the dataclass with its flags.
        return self.to_text()

    def _repr_html_(self) -> str:
        cls = {True: "cl-right", False: "cl-wrong", None: "cl-muted"}[self.right]
        return (f'<div class="cl-predict-compare" data-right="{str(self.right).lower()}">'
                f'<b class="{cls}">Your prediction.</b> {html.escape(self.to_text())}</div>')


def compare(prediction_id: str) -> Comparison:
    """What was predicted for ``prediction_id`` in this kernel, beside what happened."""
    return Comparison(_prediction(prediction_id), locked_in(prediction_id))


class AnswerLock(TextFallback, widgets.VBox):
    """Under a written answer: whether the checks below may show what they found yet.

    The gate is kept in the saved notebook (`graders.checks.gate`), not in this kernel: the
    checks show their findings once the saved answer holds the student's own words. The button
    reads the saved notebook again and says where the answer stands; it unlocks nothing by
    itself, and Run All does not need it.
    """

    rerun_hint = "Run this cell to see whether your saved answer opens the checks."

    def __init__(self, grade_id: str, **kwargs) -> None:
        from graders.checks.gate import GATES

        if grade_id not in GATES.values():
            raise KeyError(f"no check waits for {grade_id!r}; the answers the checks wait for "
                           f"are {', '.join(sorted(GATES.values()))}")
        self.grade_id = grade_id
        self.notebook = next(name for name, gate in GATES.items() if gate == grade_id)
        self.lock = widgets.Button(description="I have written it: check my saved answer",
                                   tooltip="Save the notebook first (Ctrl+S)",
                                   layout=widgets.Layout(width="max-content"))
        self.lock.add_class("cl-answer-lock")
        self.status = widgets.HTML()
        self.status.add_class("cl-answer-status")
        self.lock.on_click(lambda _button: self.lock_in())
        super().__init__([self.lock, self.status], **kwargs)
        self.add_class("cl-answer")
        self._show()

    def lock_in(self) -> None:
        """Read the saved notebook again and say whether its answer opens the checks."""
        self._show()

    def is_open(self) -> bool:
        """Whether the saved notebook's answer opens this exercise's checks."""
        from graders.checks.gate import gate_open, saved_notebook

        return gate_open(self.notebook, saved_notebook(self.notebook, _user_namespace()))

    def _show(self) -> None:
        from graders.checks.gate import gate_state, held_back_text, saved_notebook

        nb = saved_notebook(self.notebook, _user_namespace())
        is_open, why = gate_state(self.notebook, nb)
        if is_open:
            self.status.value = ("Your saved answer is in. The checks below say what they found: "
                                 "run them again.")
        else:
            self.status.value = html.escape(f"Not yet ({why}). {held_back_text(self.notebook, nb)}")

    def fallback_text(self) -> str:
        return (f"Once your answer above is written and saved, the checks below say what they "
                f"found; lock_answer({self.grade_id!r}).lock_in() tells you where it stands.")


def _user_namespace() -> dict:
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return {"__session__": (getattr(shell, "user_ns", None) or {}).get("__session__")}


def lock_answer(grade_id: str) -> AnswerLock:
    """The lock under written answer ``grade_id`` (see `AnswerLock`)."""
    return AnswerLock(grade_id)
