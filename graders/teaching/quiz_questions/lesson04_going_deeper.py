"""The quiz questions of Part 4 (``lessons/04_going_deeper``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz
from . import BEYOND_SOURCE

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="power_loss",
        source=BEYOND_SOURCE,
        question=(
            "A save writes a temp file and os.replace-s it over checkpoint.json, with no fsync. "
            "Which crash can still lose the checkpoint?"
        ),
        choices=(
            Choice(
                "A kill while the temp file is written: the kill tears checkpoint.json as well.",
                False,
                "That is the crash temp + rename is made for: the harness tears the temp file, "
                "and checkpoint.json stays the previous complete save.",
            ),
            Choice(
                "None: os.replace makes the operating system flush the data before it renames.",
                False,
                "A rename says nothing about when data reaches the disk. Without fsync the "
                "rename may be on disk before the bytes it points at.",
            ),
            Choice(
                "A power cut soon after: the rename may reach the disk before the temp file's "
                "bytes.",
                True,
                "A killed process leaves the page cache behind and the OS writes it out; a power "
                "cut does not. fsync the temp file before the rename and the directory after it "
                "(on macOS, fsync leaves data in the drive's cache: fcntl F_FULLFSYNC flushes "
                "it). See the 2009 ext4 zero-length files and Pillai et al., OSDI 2014.",
            ),
        ),
    ),
)
