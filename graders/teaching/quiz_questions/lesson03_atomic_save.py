"""The quiz questions of Part 3 (``lessons/03_atomic_save``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz
from . import BEYOND_SOURCE

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="replace_not_rename",
        source=BEYOND_SOURCE,
        question="Why does the reference call os.replace rather than os.rename?",
        choices=(
            Choice(
                "os.replace also fsyncs the new file, so the save survives a power cut as well.",
                False,
                "Neither call fsyncs anything. Surviving a power cut takes an explicit fsync of "
                "the temp file before the rename and of the directory after it (part 4).",
            ),
            Choice(
                "On Windows os.rename fails when the target exists; os.replace overwrites it there "
                "too.",
                True,
                "From the second save on, checkpoint.json always exists. On POSIX both calls are "
                "rename(2), atomic. On Windows os.replace does replace the target, though it is "
                "not documented as atomic there and fails while another process holds the file "
                "open.",
            ),
            Choice(
                "os.rename is not atomic on Linux, while os.replace swaps the new file in over the "
                "old one in one step.",
                False,
                "On Linux both call rename(2), which replaces the target atomically.",
            ),
        ),
    ),
)
