"""The quiz questions of Part 4 (``lessons/04_power_cuts``)."""

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
                "A kill while the temp file is written: it tears checkpoint.json as well.",
                False,
                "That is the crash temp + rename is made for: the harness tears the temp file, "
                "and checkpoint.json stays the previous complete save.",
            ),
            Choice(
                "No crash: os.replace has the system write the data out before it renames.",
                False,
                "A rename says nothing about when data reaches the disk. Without fsync the "
                "rename may be on disk before the bytes it points at.",
            ),
            Choice(
                "A power cut soon after: the rename may land before the bytes.",
                True,
                "A killed process leaves its bytes in the page cache, and the system writes them "
                "out; a power cut takes the cache with it. A file system may have written the "
                "rename and not yet the bytes (the 2009 ext4 zero-length files; Pillai et al., "
                "OSDI 2014).",
            ),
            Choice(
                "A kill just before the rename: checkpoint.json is then half renamed.",
                False,
                "There is no half-renamed state: before the rename checkpoint.json is the old "
                "save, after it the new one.",
            ),
        ),
    ),
    Quiz(
        id="folder_sync_after_rename",
        source=BEYOND_SOURCE,
        question=(
            "A save fsyncs the temp file, renames it over checkpoint.json, and returns; the loop "
            "runs the next tool. The power fails. What can checkpoint.json be after the reboot?"
        ),
        choices=(
            Choice(
                "The previous save, although the next tool had already run.",
                True,
                "The rename changed the folder, and nothing synced the folder: the file system "
                "may not have written that change. The loop trusted a save that the disk does not "
                "hold, so resume runs the tool again.",
            ),
            Choice(
                "An empty file: the rename reached the disk before its bytes.",
                False,
                "The temp file was synced before the rename, so its bytes are on disk before any "
                "name points at them.",
            ),
            Choice(
                "Only this save: an fsync of the file also writes its name.",
                False,
                "Syncing a file writes its bytes and its own metadata, not the folder entry that "
                "names it (Linux fsync(2) says so): the folder needs a sync of its own.",
            ),
        ),
    ),
)
