"""Moments: one state of ``/work/checkpoint.json`` that a kill at one place of a run could leave,
and the words for each moment that the crash list, the checks and the lessons share.

The vocabulary, defined once here (:func:`moment_words`, :func:`in_save`, :func:`save_label`):

- a kill at a call: ``"while tool 2 (summarize_tickets) ran"``, ``"while model call 3 was in
  flight"`` (the crash point's own label);
- inside a save, before an operation: ``"just before a rename"``, ``"just before a write"``;
- inside a save, part of a write done: ``"after 1 of 2,913 bytes of a write"`` (a torn write is cut
  at several points: the first byte, each 512-byte sector and 4 KiB page, the middle, the last
  byte); with the save: ``"after 1 of 2,913 bytes of a write in save 2 (save point B of turn 1)"``;
- a crash point that stands for every moment of a save: ``"while save 2 (...) was being
  written"``; the kill before its rename: ``"just before the rename in save 2 (...)"``;
- ``"at the end"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.judge.trace import Op

__all__ = ["Moment", "OPERATION_WORDS", "operation_words", "moment_words", "bytes_kept",
           "in_save", "save_label", "rename_label"]


@dataclass
class Moment:
    """One state a kill could leave.

    Attributes:
        position: how many operations had completed (the kill came before ``ops[position]``).
        how: ``"before"`` (just before ``op``), ``"during"`` (part way through ``op``, a write),
            ``"call"`` (while the grader served the call marked by ``op``), or ``"end"``.
        op: the operation about to happen (or part done; the call marker), None at the end.
        kind: what ``/work/checkpoint.json`` was: ``"file"``, ``"absent"``, ``"fifo"``,
            ``"symlink"``, ``"directory"``, ``"special"`` or ``"unknown"`` (written in a way the
            model cannot follow).
        data: its bytes, for a file.
        listing: the other entries of ``/work``: name -> size (``"dir/"`` for folders).
        elsewhere: other files named checkpoint.json under ``/work``.
        write: for ``"during"``: the bytes of the whole write and the bytes kept.
        unfollowed: for ``"unknown"``: why, naming the operation the grader could not follow, as
            an account of checkpoint.json goes on ("is unknown: the grader could not ...").
    """

    position: int
    how: str
    op: Op | None
    kind: str
    data: bytes | None = None
    listing: dict = field(default_factory=dict)
    elsewhere: list = field(default_factory=list)
    write: dict | None = None
    unfollowed: str | None = None

    def same_disk(self, other: Moment) -> bool:
        """Whether ``other`` leaves the same ``checkpoint.json`` (kind and bytes)."""
        return self.kind == other.kind and self.data == other.data


#: Each system call as a moment names it (with its article).
OPERATION_WORDS = {
    "rename": "a rename", "renameat": "a rename", "renameat2": "a rename",
    "link": "a link", "linkat": "a link", "symlink": "a symbolic link", "symlinkat":
    "a symbolic link", "unlink": "a removal", "unlinkat": "a removal", "rmdir": "a removal",
    "mkdir": "a new folder", "mkdirat": "a new folder", "mknod": "a new special file",
    "mknodat": "a new special file", "openat": "an open", "open": "an open", "creat": "an open",
    "openat2": "an open", "ftruncate": "a truncation", "truncate": "a truncation",
    "fallocate": "a resize", "write": "a write", "pwrite64": "a write", "writev": "a write",
    "pwritev": "a write", "pwritev2": "a write", "sendfile": "a copy", "copy_file_range":
    "a copy", "splice": "a copy", "fsync": "an fsync", "fdatasync": "an fdatasync",
    "sync_file_range": "a sync_file_range", "sync": "a sync", "syncfs": "a syncfs",
}


def operation_words(call: str) -> str:
    """``"a rename"``, ``"a write"``, ... for system call ``call``."""
    return OPERATION_WORDS.get(call, f"a {call}")


def bytes_kept(kept: int, total: int, what: str = "a write") -> str:
    """``"after 1 of 2,913 bytes of a write"``: a torn write that kept ``kept`` bytes."""
    return f"after {kept:,} of {total:,} bytes of {what}"


def moment_words(moment: Moment) -> str:
    """When ``moment`` comes, in the course's words (see the module docstring)."""
    op = moment.op
    if moment.how == "during" and moment.write:
        return bytes_kept(moment.write["kept"], moment.write["bytes"],
                          operation_words(op.call) if op is not None else "a write")
    if op is None or moment.how == "end":
        return "at the end"
    if moment.how == "call":
        return "while the call was served"
    return f"just before {operation_words(op.call)}"


def in_save(words: str, n: int, where: str = "") -> str:
    """``words`` placed in save ``n`` (``where``: ``"(save point B of turn 1)"``)."""
    return f"{words} in save {n} {where}".rstrip()


def save_label(n: int, where: str = "") -> str:
    """The label of a crash point that stands for every moment of save ``n``."""
    return f"while save {n} {where} was being written".replace("  ", " ")


def rename_label(n: int, where: str = "") -> str:
    """The label of the kill just before save ``n`` renames (or links, or removes) a name."""
    return f"just before the rename in save {n} {where}".rstrip()
