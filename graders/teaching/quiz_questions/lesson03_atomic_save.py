"""The quiz questions of Part 3 (``lessons/03_atomic_save``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz
from . import BEYOND_SOURCE

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="replace_not_rename",
        source=BEYOND_SOURCE,
        question="Why does the lesson's atomic save call os.replace rather than os.rename?",
        choices=(
            Choice(
                "os.replace also fsyncs the new file, so the save survives a power cut too.",
                False,
                "Neither call fsyncs anything. What a power cut leaves is part 4's subject.",
            ),
            Choice(
                "On Windows os.rename fails when the target exists; os.replace does not.",
                True,
                "From the second save on, checkpoint.json always exists. On POSIX both calls are "
                "rename(2), atomic. On Windows os.replace does replace the target, though it is "
                "not documented as atomic there and fails while another process holds the file "
                "open.",
            ),
            Choice(
                "os.rename is not atomic on Linux; os.replace swaps the file in one step.",
                False,
                "On Linux both call rename(2), which replaces the target atomically.",
            ),
            Choice(
                "os.replace keeps checkpoint.json's owner and mode; os.rename does not.",
                False,
                "Both give checkpoint.json the temp file's own owner and mode (mkstemp makes "
                "it 0600): a rename moves a name, it copies nothing.",
            ),
        ),
    ),
)
