"""The quiz questions of Part 1 (``lessons/01_the_execution_scene_and_six_fields``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="tokens_used_missing",
        question=(
            "A checkpoint has every field but tokensUsed. The loop resumes from it. What is "
            "lost?"
        ),
        choices=(
            Choice(
                "Nothing: the count is rebuilt exactly from messages, token by token.",
                False,
                "A resume could re-estimate the output tokens from the assistant messages, but "
                "not exactly (thinking tokens, responses lost before a save). What messages "
                "gives back exactly is the context's size, which is a different number.",
            ),
            Choice(
                "The output tokens counted so far: the count starts again at zero.",
                True,
                "tokensUsed adds up output_tokens over the run, one part of what the run costs "
                "(every request is also billed for its input). Counted from zero, a budget or "
                "a threshold judged on it fires late or never.",
            ),
            Choice(
                "The conversation: the model no longer knows what it did before.",
                False,
                "What the model knows is messages, and messages is still there. tokensUsed is the "
                "harness's own bookkeeping.",
            ),
            Choice(
                "The file itself: resume refuses it, as it refuses an unknown version.",
                False,
                "Refusing is for an unknown version. Without tokensUsed resume loads the file "
                "and carries on, which is the trouble: its bookkeeping is wrong.",
            ),
        ),
    ),
)
