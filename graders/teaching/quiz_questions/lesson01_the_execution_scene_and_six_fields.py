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
                "Nothing that matters: the spend can simply be counted again from messages after "
                "the restart, token by token.",
                False,
                "What can be recounted from messages is the context's size (what the next request "
                "will send). The running spend is the sum of every past response's usage, and "
                "those figures are gone with the process.",
            ),
            Choice(
                "The running spend: it restarts at zero, so a budget or threshold judged on it "
                "fires late or never.",
                True,
                "tokensUsed adds up output_tokens over the run. Counted from zero it forgets "
                "everything spent before the crash. (In practice compaction is usually judged on "
                "the context size, the latest input_tokens plus the cache fields, which can be "
                "recounted; the spend cannot.)",
            ),
            Choice(
                "The conversation: the model no longer knows what it did before the crash.",
                False,
                "What the model knows is messages, and messages is still there. tokensUsed is the "
                "harness's own bookkeeping.",
            ),
            Choice(
                "The file itself: resume refuses it, as it refuses a version it does not know.",
                False,
                "Refusing is for an unknown version. Without tokensUsed resume loads the file "
                "and carries on, which is the trouble: its bookkeeping is wrong.",
            ),
        ),
    ),
)
