"""What one sandboxed, traced run of a submission left for the judge: plain data.

The sandbox side fills a :class:`Recording`; the judge reads it. Every fact in it comes from the
grading process (its log of the calls it answered, what it read from disk, the trace strace
wrote), never from the submission's own account of itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Recording", "Call", "Snapshot"]


@dataclass
class Snapshot:
    """``checkpoint.json`` as the grading process found it at one moment.

    ``kind`` is ``"file"``, ``"absent"``, ``"fifo"``, ``"symlink"``, ``"directory"``,
    ``"special"``, ``"too_big"`` or ``"unreadable"``. For a file, ``digest`` is the SHA-256 of its
    bytes and ``size`` their count; ``data`` holds the bytes themselves only where the judge
    needs them (a run keeps few: a checkpoint may be megabytes, and a run may make hundreds of
    calls). ``listing`` is the other entries of the working directory (name -> size, ``"dir/"``
    for folders).
    """

    kind: str
    data: bytes | None = None
    size: int | None = None
    detail: str = ""
    listing: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None

    def same_bytes(self, data: bytes) -> bool:
        """Whether this file held exactly ``data``."""
        if self.data is not None:
            return self.data == data
        return self.digest is not None and self.digest == hashlib.sha256(data).hexdigest()

    def forget_bytes(self) -> Snapshot:
        """This snapshot keeping only the digest and size of a file's bytes."""
        if self.data is not None:
            self.digest = hashlib.sha256(self.data).hexdigest()
            self.size = len(self.data)
            self.data = None
        return self


@dataclass
class Call:
    """One ``call_model`` or ``execute_tool`` the grading process answered.

    ``index`` counts calls of its kind from 1; ``seq`` is the number the grading process gave
    the call's frame, in the order frames arrived (never a number the submission chose): the
    trace marker of that very frame places the call among the file operations. ``snapshot`` is
    ``checkpoint.json`` when the call arrived.
    """

    seq: int
    op: str
    index: int
    snapshot: Snapshot | None = None
    name: str | None = None
    input: Any = None
    result: str | None = None
    error: str | None = None
    stop_reason: str | None = None


@dataclass
class Recording:
    """One run: how it ended, the calls, the save markers, the trace, the outputs.

    ``ended`` is ``"finished"`` (run_agent returned), ``"raised"`` (see ``error``),
    ``"not_loaded"`` (see ``load``), ``"hung"``, or ``"died"`` (see ``detail``). ``tier`` names
    the sandbox it ran in (``"bubblewrap"``, ``"uid"``, or ``"none"`` for trusted code).

    ``frames`` is every frame the grading process received, in order: ``{"seq", "op",
    "header"}`` (the header as the submission wrote it, which its trace marker must show);
    ``markers`` the save markers among them. ``ops`` is the run's file operations when the
    observer recorded them itself (else the judge parses ``trace``). ``over_budget`` says why
    the run cost the grading process more than one run may (empty: it did not); ``trace_lost``
    why the grader lost part of its own record (empty: it did not). ``filled`` is set on a run
    whose disk was filled on purpose: ``{"seq", "limit", "error"}``.
    """

    scenario: str | None
    mode: str
    sandboxed: bool
    ended: str | None = None
    detail: str = ""
    error: dict | None = None
    load: dict | None = None
    loaded: bool = False
    described: dict | None = None
    calls: list[Call] = field(default_factory=list)
    markers: list[dict] = field(default_factory=list)
    final: Snapshot | None = None
    protocol: list[str] = field(default_factory=list)
    trace: str = ""
    ops: list | None = None
    frames: list[dict] = field(default_factory=list)
    over_budget: str = ""
    trace_lost: str = ""
    filled: dict | None = None
    socket_inode: int | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    elapsed: float = 0.0
    exit_code: int | None = None
    kept: str | None = None
    tier: str = ""
