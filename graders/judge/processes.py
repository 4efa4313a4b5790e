"""Processes as the kernel keeps them for file operations: each one's table of open descriptors
and its working directory, and what a new process or thread shares with the one that started it.

A descriptor names an open file description (the file, the offset, append and sync modes);
``dup``, ``dup2``, ``dup3`` and ``fcntl(F_DUPFD)`` make another descriptor for the SAME
description (one offset for both), and ``close`` of one leaves the others. A process started by
``fork``/``clone`` gets a copy of its parent's table (the copies share the descriptions) and of
its working directory; a thread (``CLONE_FILES``, ``CLONE_FS``) shares both.

strace prints a child's first calls before its parent's ``clone`` returns, so who started whom
is read from the whole trace first (:func:`starts_of`), and a process is made the first time it
is seen, from its parent as it was then.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.judge.trace import STARTS, Op

__all__ = ["Start", "Process", "starts_of"]


@dataclass(frozen=True)
class Start:
    """How a process or thread was started: by ``parent``, with ``flags``, known inside its
    sandbox as pid ``inside``."""

    parent: int
    flags: str
    inside: int | None


@dataclass
class Process:
    """One process (or thread): its descriptor table and its working directory.

    ``files`` maps a descriptor number to its open file description
    (:class:`graders.judge.disk_model.Description`); ``fs`` holds one item, the working
    directory, in a list that the threads sharing it share.
    """

    files: dict = field(default_factory=dict)
    fs: list = field(default_factory=lambda: ["/work"])

    @property
    def cwd(self) -> str:
        """The working directory."""
        return self.fs[0]

    @cwd.setter
    def cwd(self, path: str) -> None:
        self.fs[0] = path

    def started(self, flags: str) -> Process:
        """The process or thread this one starts with ``flags``."""
        files = self.files if "CLONE_FILES" in flags else dict(self.files)
        fs = self.fs if "CLONE_FS" in flags else [self.fs[0]]
        return Process(files, fs)


def starts_of(ops: list[Op]) -> dict[int, Start]:
    """Every process started in ``ops``: its pid (as ``Op.pid`` numbers it) -> how."""
    found: dict[int, Start] = {}
    for op in ops:
        if op.call in STARTS and op.error is None and op.ret is not None and op.ret > 0:
            flags, inside = (op.args + ["", None])[:2] if isinstance(op.args, list) else ("", None)
            found.setdefault(op.ret, Start(op.pid, str(flags or ""), inside))
    return found
