"""Moments: one state of ``/work/checkpoint.json`` that a kill at one place of a run could leave."""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.judge.trace import Op

__all__ = ["Moment"]


@dataclass
class Moment:
    """One state a kill could leave.

    Attributes:
        position: how many operations had completed (the kill came before ``ops[position]``).
        how: ``"before"`` (just before ``op``), ``"during"`` (halfway through ``op``, a write),
            ``"call"`` (while the grader served the call marked by ``op``), or ``"end"``.
        op: the operation about to happen (or half done; the call marker), None at the end.
        kind: what ``/work/checkpoint.json`` was: ``"file"``, ``"absent"``, ``"fifo"``,
            ``"symlink"``, ``"directory"``, ``"special"`` or ``"unknown"`` (written in a way the
            model cannot follow).
        data: its bytes, for a file.
        listing: the other entries of ``/work``: name -> size (``"dir/"`` for folders).
        elsewhere: other files named checkpoint.json under ``/work``.
        write: for ``"during"``: the path written, the bytes of the whole write, the bytes kept.
    """

    position: int
    how: str
    op: Op | None
    kind: str
    data: bytes | None = None
    listing: dict = field(default_factory=dict)
    elsewhere: list = field(default_factory=list)
    write: dict | None = None

    def same_disk(self, other: Moment) -> bool:
        """Whether ``other`` leaves the same ``checkpoint.json`` (kind and bytes)."""
        return self.kind == other.kind and self.data == other.data
