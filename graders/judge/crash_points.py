"""Crash points: where a run is killed, derived from a dry run of the same submission.

A dry run (``no_crash``) shows how many model calls, tool calls and saves the submission makes,
which saves rename a file, and what ``checkpoint.json`` held after each save. From that,
:func:`derive_points` lists every crash point in the order its moment comes in the run.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from graders.judge.moments import bytes_kept, in_save, rename_label, save_label
from graders.judge.observation import Observation, SaveRecord
from graders.loop.protocol import CHECKPOINT

__all__ = ["CrashPoint", "KINDS", "derive_points", "point_from_id", "NO_CRASH", "tear_limit",
           "PADDING"]

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
            :mod:`graders.judge.moments`).
        step: the point's place in the timeline (0, 1, 2, ... in the order things happen).
        save: for the save kinds, the save as the dry run saw it (:class:`SaveRecord` fields,
            without the snapshot text).
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
        return "checkpoint", save.snapshot_bytes or save.sizes.get(CHECKPOINT)
    if save.opened:
        first = save.opened[0]
        size = save.sizes.get(first)
        return "first", size if size else save.snapshot_bytes
    return "start", save.snapshot_bytes


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
            label = (in_save(bytes_kept(limit, expected), n, where) if expected
                     else save_label(n, where))
            points.append(CrashPoint(
                f"torn_write_save_{n}", "torn_write", n, label, save=summary, before=previous,
                after=save.snapshot, tear_target=target, tear_expected=expected,
                tear_limit=limit))
            if save.renames:
                points.append(CrashPoint(
                    f"killed_before_rename_save_{n}", "killed_before_rename", n,
                    rename_label(n, where), save=summary, before=previous, after=save.snapshot,
                    rename_at=_rename_at(save)))
            if save.completed:
                previous = save.snapshot
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
