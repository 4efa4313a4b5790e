"""The power-cut model: what a machine that loses power may find on disk when it boots again.

A killed process leaves the page cache to the kernel, which writes it out; a power cut does not.
From the same recorded operations as the kill states (:mod:`graders.judge.replay`), this module
builds every state the ALICE model (Pillai et al., OSDI '14; LazyFS does the same for real)
allows at each moment of the run:

- a file's data written since that file's last ``fsync``/``fdatasync`` may be lost (the file as
  of its last sync: empty if it was never synced), zero-filled, partly kept, or all kept; a
  write through an ``O_DSYNC`` or ``O_SYNC`` descriptor is on disk when it returns (as if
  ``fdatasync`` followed it); ``sync_file_range``, with any flags, makes nothing durable (its
  man page: no metadata, no disk cache flush);
- a directory entry created, renamed or removed since that directory's last ``fsync`` may or may
  not have happened, in order: ``checkpoint.json`` may point at what any prefix of the pending
  directory operations left it pointing at;
- ``fsync`` is a barrier: what it covers is on disk before anything after it. ``sync()`` covers
  everything, ``syncfs(fd)`` the file system of ``fd`` (``/work`` or ``/tmp``).

Each state says which of the two went wrong (``"data"``: the bytes did not reach the disk;
``"rename"``: the directory entry did not), so that each check judges its own failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.judge.disk_model import CHECKPOINT_PATH, Node
from graders.judge.moments import Moment
from graders.judge.replay_model import DATA_WRITES, ReplayModel
from graders.judge.trace import Op

__all__ = ["PowerState", "PowerMoment", "power_moments", "WORK", "FILE_SYNCS"]

WORK = "/work"


@dataclass
class PowerState:
    """One state a power cut may leave: ``checkpoint.json`` and why it is what it is.

    ``cause`` is None (as the running system saw it), ``"data"`` (its bytes are not all on
    disk: ``variant`` says how: ``"lost"``, ``"zeroed"``, ``"half"``) or ``"rename"`` (the
    directory entry is an older one: ``back`` directory operations did not reach the disk).
    """

    kind: str
    data: bytes | None
    cause: str | None = None
    variant: str = ""
    back: int = 0


@dataclass
class PowerMoment:
    """A moment of the run (as in :class:`~graders.judge.replay.Moment`) and its power states."""

    moment: Moment
    states: list[PowerState] = field(default_factory=list)
    syncs: list[str] = field(default_factory=list)


#: The calls after which a file's data is on disk (``sync_file_range`` is not one).
FILE_SYNCS = frozenset({"fsync", "fdatasync"})


class _DurableModel(ReplayModel):
    def __init__(self, ops: list[Op] | None = None) -> None:
        super().__init__(ops)
        self.durable_binding: Node | None = None
        self.pending: list[Node | None] = []
        self.log: list[str] = []
        self._states: tuple | None = None

    def binding(self) -> Node | None:
        return self.paths.get(CHECKPOINT_PATH)

    def apply(self, op: Op, *, keep: int | None = None) -> None:
        before = self.binding()
        super().apply(op, keep=keep)
        if op.error is not None or op.ret is None:
            return
        after = self.binding()
        if after is not before:
            self.pending.append(after)
            self.log.append(f"{op.call}@{op.index}")
        if op.call in DATA_WRITES:
            desc = self.target_of(op)
            if desc is not None and desc.sync and desc.node.kind == "file":
                desc.node.durable = desc.node.snapshot()  # O_DSYNC / O_SYNC
                self.log.append(f"file-sync@{op.index}")
        elif op.call in FILE_SYNCS:
            self._file_sync(op, after)
        elif op.call in ("sync", "syncfs"):
            self._sync_all(op, after)

    def _file_sync(self, op: Op, after: Node | None) -> None:
        desc = self.desc(op.pid, op.args[0] if op.args else None)
        if desc is None:
            return
        node = desc.node
        if node.kind == "file":
            node.durable = node.snapshot()
            self.log.append(f"file-sync@{op.index}")
        elif node.kind == "dir" and node is self.paths.get(WORK):
            self.durable_binding = after
            self.pending = []
            self.log.append(f"dir-sync@{op.index}")

    def _sync_all(self, op: Op, after: Node | None) -> None:
        root = None  # sync(): every file system
        if op.call == "syncfs":
            arg = op.args[0] if op.args else None
            path = (arg.get("path") or b"") if isinstance(arg, dict) else b""
            root = next((r for r in ("/work", "/tmp") if path.decode("utf-8", "replace") == r
                         or path.decode("utf-8", "replace").startswith(r + "/")), "")
        for path, node in self.paths.items():
            if node.kind == "file" and (root is None or path.startswith(root + "/")):
                node.durable = node.snapshot()
        if root in (None, WORK):
            self.durable_binding = after
            self.pending = []
        self.log.append(f"sync@{op.index}")

    def states(self) -> list[PowerState]:
        """Every distinct ``checkpoint.json`` a power cut now may leave, the running one first."""
        candidates = [self.durable_binding, *self.pending]
        key = (self.lost, tuple(None if n is None else (n.ident, n.version, hash(n.durable),
                                                         n.unknown) for n in candidates))
        if self._states is not None and self._states[0] == key:
            return [PowerState(**vars(s)) for s in self._states[1]]
        found = self._enumerate(candidates)
        self._states = (key, found)
        return [PowerState(**vars(s)) for s in found]

    def _enumerate(self, candidates: list) -> list[PowerState]:
        if self.lost is not None:
            return [PowerState("unknown", None)]
        found: list[PowerState] = []
        seen: set = set()
        for back, node in enumerate(reversed(candidates)):
            for state in _variants(node):
                if back and state.cause is None:
                    state.cause, state.back = "rename", back
                key = (state.kind, state.data)
                if key not in seen:
                    seen.add(key)
                    found.append(state)
        return found


def _variants(node: Node | None) -> list[PowerState]:
    if node is None:
        return [PowerState("absent", None)]
    if node.kind != "file":
        return [PowerState(node.kind, None)]
    if node.unknown:
        return [PowerState("unknown", None)]
    data = bytes(node.data)
    states = [PowerState("file", data)]
    if node.durable != data:
        states.append(PowerState("file", node.durable, "data", "lost"))
        states.append(PowerState("file", b"\0" * len(data), "data", "zeroed"))
        common = 0
        while (common < min(len(data), len(node.durable))
               and data[common] == node.durable[common]):
            common += 1
        half = common + (len(data) - common) // 2
        states.append(PowerState("file", data[:half], "data", "half"))
    return states


def power_moments(moments: list[Moment], ops: list[Op]) -> list[PowerMoment]:
    """The power states at each of ``moments`` (from :func:`graders.judge.replay.replay`)."""
    model = _DurableModel(ops)
    wanted = {m.position: [] for m in moments}
    for m in moments:
        wanted[m.position].append(m)
    out: list[PowerMoment] = []
    position = 0
    for op in ops:
        while position <= op.index:
            for m in wanted.get(position, []):
                if m.how in ("before", "call", "end"):
                    out.append(PowerMoment(m, model.states(), list(model.log)))
            position += 1
        if op.call != "marker":
            model.apply(op)
    for m in wanted.get(len(ops), []):
        if m.how == "end":
            out.append(PowerMoment(m, model.states(), list(model.log)))
    return out
