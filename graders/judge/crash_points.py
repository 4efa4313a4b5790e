"""Crash points: where a run is killed, derived from a dry run of the same submission.

A dry run (``no_crash``) shows how many model calls, tool calls and saves the submission makes,
which saves rename a file, and what ``checkpoint.json`` held after each save. From that,
:func:`derive_points` lists every crash point in the order its moment comes in the run.

Moments: one state of ``/work/checkpoint.json`` that a kill at one place of a run could leave,
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

from dataclasses import asdict, dataclass, field
from typing import Any

from graders.judge.recording import Observation, SaveRecord
from graders.judge.trace import Op
from graders.loop.protocol import CHECKPOINT

__all__ = ["CrashPoint", "KINDS", "derive_points", "point_from_id", "point_kind", "NO_CRASH",
           "tear_limit", "PADDING", "Moment", "OPERATION_WORDS", "operation_words",
           "moment_words", "bytes_kept", "in_save", "save_label", "rename_label"]


# -- moments ---------------------------------------------------------------------------------------


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


# -- crash points ----------------------------------------------------------------------------------


NO_CRASH = "no_crash"
#: Every kind of crash point, in the order their ids are documented (``restart`` and
#: ``disk_full``: a run after a kill, and a run whose disk fills, graded beside the recorded one).
KINDS = ("no_crash", "killed_during_model_call", "killed_during_tool", "torn_write",
         "killed_before_rename", "restart", "disk_full")


@dataclass
class CrashPoint:
    """One place to kill the run.

    Attributes:
        id: ``"killed_during_tool_2"``, ``"torn_write_save_3"``, ``"no_crash"``, ...
        kind: one of :data:`KINDS`.
        index: ``k`` (model call or tool call number) or ``n`` (save number); None for no_crash.
        label: the moment in words, e.g. ``"while tool 2 (summarize_tickets) ran"`` (the words of
            :mod:`graders.judge.crash_points`).
        step: the point's place in the timeline (0, 1, 2, ... in the order things happen).
        save: for the save kinds, the save as the dry run saw it (:class:`SaveRecord` fields,
            without the checkpoint text).
        before: for the save kinds, ``checkpoint.json`` as the previous complete save left it
            (None: there was none), from the dry run.
        after: for the save kinds, ``checkpoint.json`` as this save left it.
        trace: every save of the dry run (summaries), for diagnosing where saves are placed
            (None when the point was not derived from a dry run).
        tear_target, tear_limit, tear_expected: how a torn write is made: which file open arms
            it (``"checkpoint"``: checkpoint.json itself; ``"first"``: the save's first file
            opened for writing; ``"start"``: any write once the save starts), the file-size limit
            in bytes, and the bytes the save writes to that file.
        rename_at: for ``killed_before_rename``: which rename of the save (from 0) is stopped.
    """

    id: str
    kind: str
    index: int | None
    label: str
    step: int = 0
    save: dict[str, Any] | None = None
    before: str | None = None
    after: str | None = None
    trace: list[dict[str, Any]] | None = None
    tear_target: str | None = None
    tear_limit: int | None = None
    tear_expected: int | None = None
    rename_at: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CrashPoint:
        """The crash point ``to_dict`` described."""
        return cls(**data)

    def plan(self) -> dict[str, Any]:
        """What the child needs to know to crash here."""
        plan: dict[str, Any] = {"id": self.id, "kind": self.kind, "index": self.index}
        if self.kind == "torn_write":
            plan.update(tear_target=self.tear_target, tear_limit=self.tear_limit,
                        tear_expected=self.tear_expected)
        if self.kind == "killed_before_rename":
            plan["rename_at"] = self.rename_at
        return plan


def _tear(save: SaveRecord) -> tuple[str, int | None]:
    """Which open arms the torn write of ``save``, and the bytes written to that file."""
    if save.in_place:
        return "checkpoint", save.checkpoint_bytes or save.sizes.get(CHECKPOINT)
    if save.opened:
        first = save.opened[0]
        size = save.sizes.get(first)
        return "first", size if size else save.checkpoint_bytes
    return "start", save.checkpoint_bytes


#: What pads a fixed-size record after its JSON (spaces, newlines, zero bytes).
PADDING = b" \t\r\n\0"


def tear_limit(target: str, expected: int | None, previous: str | None) -> int:
    """Where a real kill tears save's write (a file-size limit): the middle of the bytes, or, for
    an in-place write of a save longer than the previous one, the end of the previous save's
    JSON: a fixed-size padded record rewritten in place then holds the new save's start and the
    old padding (cut in the middle it would hold the whole new save and pass). The replay
    (:func:`graders.judge.replay.replay`) cuts at the same place."""
    half = max(1, (expected or 2) // 2)
    if target != "checkpoint" or previous is None or not expected:
        return half
    kept = len(previous.encode("utf-8", "surrogateescape").rstrip(PADDING))
    return kept if 0 < kept < expected else half


def _rename_at(save: SaveRecord) -> int:
    for i, (_src, dst) in enumerate(save.renames):
        if dst == CHECKPOINT:
            return i
    return 0


def derive_points(dry: Observation) -> list[CrashPoint]:
    """Every crash point of the run ``dry`` saw, in timeline order, ``no_crash`` last."""
    saves = {s.n: s for s in dry.saves}
    trace = [s.summary() for s in dry.saves]
    points: list[CrashPoint] = []
    previous: str | None = None
    for ev in dry.events:
        e = ev.get("e")
        if e == "model_start":
            k = ev["k"]
            points.append(CrashPoint(f"killed_during_model_call_{k}", "killed_during_model_call",
                                     k, f"while model call {k} was in flight"))
        elif e == "tool_start":
            k = ev["k"]
            name = f" ({ev['name']})" if isinstance(ev.get("name"), str) else ""
            points.append(CrashPoint(f"killed_during_tool_{k}", "killed_during_tool", k,
                                     f"while tool {k}{name} ran"))
        elif e == "save_start" and ev["n"] in saves:
            save = saves[ev["n"]]
            n = save.n
            summary = save.summary()
            target, expected = _tear(save)
            limit = tear_limit(target, expected, previous)
            where = f"({save.where})"
            # a temp file written, then checkpoint.json opened: a copy over it (as the
            # replay names the sendfile or copy_file_range that does it)
            copy = target == "checkpoint" and save.opened.index(CHECKPOINT) > 0
            label = (in_save(bytes_kept(limit, expected, "a copy" if copy else "a write"), n,
                             where) if expected else save_label(n, where))
            points.append(CrashPoint(
                f"torn_write_save_{n}", "torn_write", n, label, save=summary, before=previous,
                after=save.checkpoint_text, tear_target=target, tear_expected=expected,
                tear_limit=limit))
            if save.renames:
                points.append(CrashPoint(
                    f"killed_before_rename_save_{n}", "killed_before_rename", n,
                    rename_label(n, where), save=summary, before=previous,
                    after=save.checkpoint_text,
                    rename_at=_rename_at(save)))
            if save.completed:
                previous = save.checkpoint_text
    points.append(CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash"))
    for step, point in enumerate(points):
        point.step = step
        point.trace = trace
    return points


def point_from_id(point_id: str) -> CrashPoint:
    """A bare CrashPoint for ``point_id`` (no dry-run details), e.g. ``"killed_during_tool_2"``."""
    if point_id == NO_CRASH:
        return CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash")
    head, _, number = point_id.rpartition("_")
    index = int(number) if number.isdigit() else None
    labels = {
        "killed_during_model_call": f"while model call {index} was in flight",
        "killed_during_tool": f"while tool {index} ran",
        "torn_write_save": save_label(index or 0),
        "killed_before_rename_save": rename_label(index or 0),
    }
    kind = head.removesuffix("_save")
    if head not in labels or index is None:
        raise ValueError(f"{point_id!r} is not a crash point id (e.g. killed_during_tool_2, "
                         "torn_write_save_3, no_crash)")
    return CrashPoint(point_id, kind, index, labels[head])


def point_kind(point_id: str) -> str:
    """The kind a crash point id starts with (``"killed_during_tool"``), or ``"unknown"``."""
    for kind in sorted(KINDS, key=len, reverse=True):
        if point_id.startswith(kind):
            return kind
    return "unknown"
