"""The quiz questions of Part 5 (``lessons/05_several_tool_calls_in_one_turn``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz
from . import BEYOND_SOURCE

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="results_in_one_message",
        source=BEYOND_SOURCE,
        question=(
            "The model asks for three tools in one response. How must their results go back "
            "to it?"
        ),
        choices=(
            Choice(
                "One user message holding a tool_result per call, in any order.",
                True,
                "The API pairs each result with its call by tool_use_id, so the order among them "
                "does not matter (block order is a good habit); every call needs its result, "
                "all in the one user message that follows.",
            ),
            Choice(
                "One user message per result, each sent as its tool returns.",
                False,
                "Results spread over several messages leave the first one incomplete: the API "
                "answers the next request with a 400 error.",
            ),
            Choice(
                "In the assistant's own message, each result after its tool_use block.",
                False,
                "The assistant's message holds what the model wrote; the results answer it, so "
                "they go in the user message that follows, or the API refuses the request.",
            ),
            Choice(
                "Only the results that succeeded; a failed call may be left out.",
                False,
                "Every tool_use needs its tool_result, a failure included (with is_error set); "
                "one missing and the API refuses the request.",
            ),
        ),
    ),
)
