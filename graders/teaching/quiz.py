"""Quiz questions that explain why each answer is right or wrong.

The logic lives here; `graders.teaching.widgets.QuizView` puts a question on screen.

    >>> q = QUIZZES["in_place_overwrite"]
    >>> q.answer("b").correct
    True
    >>> print(q.answer("a"))      # why (a) is wrong
"""

from __future__ import annotations

import html
import string
from dataclasses import dataclass

__all__ = ["Choice", "Quiz", "Feedback", "QuizError", "check"]


class QuizError(ValueError):
    """An answer that names no choice of the question (the message lists the choices)."""


@dataclass(frozen=True)
class Choice:
    """One answer: its text, whether it is right, and why."""

    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class Feedback:
    """What a student sees after choosing: right or not, and why."""

    quiz_id: str
    letter: str
    correct: bool
    why: str

    @property
    def verdict(self) -> str:
        return "Right." if self.correct else "Not quite."

    def to_text(self) -> str:
        again = "" if self.correct else " Try another answer."
        return f"({self.letter}) {self.verdict} {self.why}{again}"

    __str__ = to_text

    def to_html(self) -> str:
        # The colour comes from the widgets' stylesheet (graders.teaching.style), which has a
        # dark-theme variant; the words say it without colour.
        cls = "cl-right" if self.correct else "cl-wrong"
        again = "" if self.correct else " <em>Try another answer.</em>"
        return (
            f'<div class="cl-quiz-verdict" data-correct="{str(self.correct).lower()}" '
            f'role="status"><b class="{cls}">({self.letter}) {self.verdict}</b> '
            f"{html.escape(self.why)}{again}</div>"
        )

    _repr_html_ = to_html


@dataclass(frozen=True)
class Quiz:
    """A multiple-choice question with exactly one right answer.

    ``source`` is where the question comes from (the source lesson, or beyond it), shown
    under the question.
    """

    id: str
    question: str
    choices: tuple[Choice, ...]
    source: str | None = None

    def __post_init__(self) -> None:
        if len(self.choices) < 2 or len(self.choices) > len(string.ascii_lowercase):
            raise QuizError(f"quiz {self.id!r} needs between 2 and 26 choices")
        right = [c for c in self.choices if c.correct]
        if len(right) != 1:
            raise QuizError(f"quiz {self.id!r} needs exactly one right answer, has {len(right)}")
        if len({c.text for c in self.choices}) != len(self.choices):
            raise QuizError(f"quiz {self.id!r} has two choices with the same text")

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(string.ascii_lowercase[: len(self.choices)])

    @property
    def right_letter(self) -> str:
        return next(letter for letter, c in zip(self.letters, self.choices, strict=True)
                    if c.correct)

    def index_of(self, answer: int | str) -> int:
        """The index of the choice ``answer`` names: an index, a letter, or the choice's text."""
        if isinstance(answer, bool):
            answer = str(answer)
        if isinstance(answer, int):
            if 0 <= answer < len(self.choices):
                return answer
        elif isinstance(answer, str):
            key = answer.strip().strip("()").strip().lower()
            if key in self.letters:
                return self.letters.index(key)
            for index, choice in enumerate(self.choices):
                if choice.text.lower() == answer.strip().lower():
                    return index
        raise QuizError(
            f"{answer!r} is not one of the answers to this question: answer with a letter, "
            f"{', '.join(self.letters)}."
        )

    def answer(self, answer: int | str) -> Feedback:
        """The feedback for choosing ``answer`` (an index, a letter, or the choice's text)."""
        index = self.index_of(answer)
        choice = self.choices[index]
        return Feedback(self.id, self.letters[index], choice.correct, choice.why)

    def to_text(self, *, reveal: bool = True) -> str:
        """The question as plain text; with ``reveal``, the answer and every why at the end."""
        lines = [self.question, ""]
        lines += [f"  ({letter}) {c.text}" for letter, c in zip(self.letters, self.choices,
                                                                  strict=True)]
        if self.source:
            lines += ["", f"[{self.source}]"]
        if reveal:
            lines += ["", "Answers, and why (read them once you have chosen):"]
            lines += [f"  ({letter}) {'right' if c.correct else 'wrong'}: {c.why}"
                      for letter, c in zip(self.letters, self.choices, strict=True)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text(reveal=False)


def check(quiz: Quiz, answer: int | str) -> Feedback:
    """Answer ``quiz`` in code, where widgets cannot render: ``check(QUIZZES["..."], "b")``."""
    return quiz.answer(answer)
