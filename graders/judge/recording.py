"""What one sandboxed, traced run of a submission left for the judge: plain data.

The sandbox side fills a :class:`Recording`; the judge reads it. Every fact in it comes from the
grading process (its log of the calls it answered, what it read from disk, the trace strace
wrote), never from the submission's own account of itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Recording", "Call", "Snapshot"]


@dataclass
class Snapshot:
    """``checkpoint.json`` as the grading process found it at one moment.

    ``kind`` is ``"file"`` (``data`` holds its bytes), ``"absent"``, ``"fifo"``, ``"symlink"``,
    ``"directory"``, ``"special"``, ``"too_big"`` or ``"unreadable"``. ``listing`` is the other
    entries of the working directory (name -> size, ``"dir/"`` for folders).
    """

    kind: str
    data: bytes | None = None
    size: int | None = None
    detail: str = ""
    listing: dict[str, Any] = field(default_factory=dict)


@dataclass
class Call:
    """One ``call_model`` or ``execute_tool`` the grading process answered.

    ``index`` counts calls of its kind from 1; ``seq`` is the frame's number, which finds the
    call's place in the trace. ``snapshot`` is ``checkpoint.json`` when the call arrived.
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
    ``"not_loaded"`` (see ``load``), ``"hung"``, or ``"died"`` (see ``detail``).
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
    socket_inode: int | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    elapsed: float = 0.0
    exit_code: int | None = None
    kept: str | None = None
