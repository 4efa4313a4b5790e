"""Replay recorded file operations on a model of the sandbox's files: every state a kill can leave.

The sandbox's writable places (``/work`` and ``/tmp``) start empty. Applying the recorded
operations one by one, the model knows at every point what ``/work/checkpoint.json`` is: a
file with these bytes, nothing, a FIFO, a link. A process killed just before operation ``i``
leaves the state after operations ``0..i-1``; one killed in the middle of a write leaves part
of that write's bytes on top of it: cut after the first byte, at each 512-byte sector and 4 KiB
page boundary, in the middle and before the last byte when the write goes into checkpoint.json
itself (each distinct state once), in the middle when it goes into a file renamed over it
later. That is the record-and-replay approach of ALICE (Pillai et al., OSDI '14): one run, every
crash state, no second run to compare with.

The parts: :mod:`graders.judge.disk_model` (the files and names), :mod:`~graders.judge.
processes` (descriptors and working directories), :mod:`~graders.judge.disk_model` (paths as the
kernel resolves them), :mod:`~graders.judge.file_operations` and
:mod:`~graders.judge.replay` (what each operation does),
:mod:`~graders.judge.crash_points` (one state a kill leaves), :mod:`~graders.judge.replay` (which
operations matter to ``checkpoint.json``). This module walks the run and keeps the old import
paths.

The model that replays a recorded run: each operation applied in turn, data writes whole or
torn (only part of their bytes kept, cut at any of :func:`cut_points`), every other call through
:data:`graders.judge.file_operations.OPERATIONS`.

Binding analysis: which operations may change what ``/work/checkpoint.json`` is or holds,
and which files become it at some point of a run (a temp file renamed over it later).

What judging one run may cost the grading process, and the run that would cost more.

Every crash state keeps its own copy of ``checkpoint.json``: a run that rewrites a checkpoint of
megabytes in many small writes makes thousands of states of megabytes each. Before the replay,
:func:`check_replay_budget` adds up what those copies would hold (cheaply bounded first, exactly
when the bound is not enough); a run over :data:`REPLAY_BUDGET` is the submission's failure, said
in :class:`OverBudget`'s message, never a grading worker that runs out of memory.
"""

from __future__ import annotations

from graders.judge.crash_points import PADDING, Moment
from graders.judge.disk_model import (
    CHECKPOINT_PATH,
    ROOTS,
    UNFOLLOWED,
    Description,
    DiskModel,
    Node,
)
from graders.judge.file_operations import OPERATIONS, two_paths
from graders.judge.trace import Op

__all__ = ["Moment", "replay", "CHECKPOINT_PATH", "ROOTS", "DATA_WRITES", "ReplayModel",
           "cut_points", "SECTOR", "PAGE", "SYNCS", "BINDING", "touches",
           "touches_checkpoint", "paths_of", "bound_to_checkpoint", "REPLAY_BUDGET",
           "OverBudget", "check_replay_budget", "over_budget_message"]


# -- replay model ----------------------------------------------------------------------------------


#: The system calls that write data into a file.
DATA_WRITES = frozenset({"write", "pwrite64", "writev", "pwritev", "pwritev2", "sendfile",
                         "copy_file_range", "splice"})
#: A disk's sector and a memory page: where real disks and page caches cut a write.
SECTOR, PAGE = 512, 4096
#: The bytes the torn states of one write may hold in all (each is a whole checkpoint.json).
_TORN_BUDGET = 4 << 20


def cut_points(start: int, total: int, size: int) -> list[int]:
    """How many bytes a torn ``total``-byte write at file offset ``start`` may keep, in order:
    the first byte, each 512-byte sector and 4 KiB page boundary it crosses, the middle, and all
    but the last byte. ``size`` is the file's size once written: a very large file keeps the
    page boundaries only, or some of them, so that the states of one write stay within a
    budget (never fewer than the first byte, the middle and the last)."""
    if total < 2:
        return []
    must = {1, total // 2, total - 1}
    room = max(0, _TORN_BUDGET // max(1, size) - len(must))
    sectors = range((start // SECTOR + 1) * SECTOR, start + total, SECTOR)
    bounds = list(sectors)
    if len(bounds) > room:
        bounds = [b for b in bounds if b % PAGE == 0]
    if len(bounds) > room:
        step = len(bounds) / room if room else 0
        bounds = [bounds[int(i * step)] for i in range(room)] if room else []
    return sorted(must | {b - start for b in bounds})


class ReplayModel(DiskModel):
    """A :class:`DiskModel` that applies recorded operations."""

    def apply(self, op: Op, *, keep: int | None = None) -> None:
        """Apply ``op``; for a data write, ``keep`` bytes only (a torn write)."""
        if op.error is not None or op.ret is None:
            return
        for arg in op.args:
            if isinstance(arg, dict) and arg.get("token") == "AT_FDCWD" and arg.get("path"):
                self.set_cwd(op.pid, arg["path"].decode("utf-8", "surrogateescape"))
        call = op.call
        handler = OPERATIONS.get(call)
        if call in DATA_WRITES:
            self._data_write(op, keep)
        elif handler is not None:
            handler(self, op)

    def data_of(self, op: Op) -> tuple[bytes | None, int | None]:
        """(bytes written, explicit offset or None) for a data write; bytes None = unknown."""
        args, n = op.args, op.ret or 0
        if op.call in ("write", "pwrite64"):
            data = args[1] if len(args) > 1 and isinstance(args[1], bytes) else None
            offset = args[3] if op.call == "pwrite64" and len(args) > 3 else None
            return (data[:n] if data is not None and len(data) >= n else None), offset
        if op.call in ("writev", "pwritev", "pwritev2"):
            iov = args[1].get("list", []) if len(args) > 1 and isinstance(args[1], dict) else []
            data = b"".join(item["struct"].get("iov_base", b"") for item in iov
                            if isinstance(item, dict) and "struct" in item
                            and isinstance(item["struct"].get("iov_base"), bytes))
            offset = args[3] if op.call != "writev" and len(args) > 3 else None
            return (data[:n] if len(data) >= n else None), offset
        if op.call == "sendfile":
            source = self.desc(op.pid, args[1] if len(args) > 1 else None)
            if source is None or source.node.unknown:
                return None, None
            ptr = args[2] if len(args) > 2 else None
            if isinstance(ptr, dict) and ptr.get("before"):
                start = ptr["before"][0]
            else:
                start = source.offset
                source.offset += n
            return bytes(source.node.data[start:start + n]), None
        if op.call == "copy_file_range":
            source = self.desc(op.pid, args[0] if args else None)
            if source is None or source.node.unknown:
                return None, None
            off_in = args[1] if len(args) > 1 else None
            if isinstance(off_in, dict) and off_in.get("before"):
                start = off_in["before"][0]
            else:
                start = source.offset
                source.offset += n
            off_out = args[3] if len(args) > 3 else None
            out_offset = off_out["before"][0] if isinstance(off_out, dict) and off_out.get(
                "before") else None
            return bytes(source.node.data[start:start + n]), out_offset
        return None, None

    def target_of(self, op: Op) -> Description | None:
        """The description a data write writes through."""
        args = op.args
        index = {"copy_file_range": 2, "splice": 2}.get(op.call, 0)
        return self.desc(op.pid, args[index] if len(args) > index else None)

    def _payload(self, op: Op) -> tuple[bytes | None, int | None]:
        """``data_of(op)``, computed once per operation (it moves a copy's source offset)."""
        cached = getattr(self, "_cached", None)
        if cached is not None and cached[0] is op:
            return cached[1], cached[2]
        data, offset = self.data_of(op)
        self._cached = (op, data, offset)
        return data, offset

    def into_checkpoint(self, op: Op) -> bool:
        """Whether data write ``op`` writes into the file checkpoint.json now names."""
        desc = self.target_of(op)
        node = self.paths.get(CHECKPOINT_PATH)
        return (desc is not None and node is not None and desc.node is node
                and node.kind == "file" and self.lost is None)

    def write_start(self, op: Op) -> int:
        """The file offset data write ``op`` starts at."""
        desc = self.target_of(op)
        _data, offset = self._payload(op)
        if offset is not None or desc is None:
            return offset or 0
        return len(desc.node.data) if desc.append else desc.offset

    def torn(self, op: Op, keep: int, before: Moment) -> Moment:
        """The moment part way through write ``op``: ``keep`` of its bytes written."""
        moment = Moment(op.index, "during", op, before.kind, before.data, before.listing,
                        before.elsewhere, {"bytes": op.ret, "kept": keep},
                        unfollowed=before.unfollowed)
        if not self.into_checkpoint(op):
            return moment  # a write into another file: checkpoint.json is as it was
        node = self.paths[CHECKPOINT_PATH]
        data, _offset = self._payload(op)
        payload = (data if data is not None else b"\0" * (op.ret or 0))[:keep]
        start = self.write_start(op)
        content = bytearray(node.data)
        if start > len(content):
            content.extend(b"\0" * (start - len(content)))
        content[start:start + len(payload)] = payload
        if data is None or node.unknown:
            moment.kind, moment.data = "unknown", None
            moment.unfollowed = self.unknown_words() or (
                f"{UNFOLLOWED} ({op.call}: bytes the grader could not read)")
        else:
            moment.kind, moment.data = "file", bytes(content)
        return moment

    def _data_write(self, op: Op, keep: int | None) -> None:
        desc = self.target_of(op)
        if desc is None:
            self._unknown_target(op)
            return
        data, offset = self._payload(op)
        if data is None:
            self.unfollowed.append(op)
            data = b"\0" * (op.ret or 0)
            self.write_at(desc, data if keep is None else data[:keep], offset,
                          unknown=f"{op.call}: bytes the grader could not read")
            return
        self.write_at(desc, data if keep is None else data[:keep], offset)

    def _unknown_target(self, op: Op) -> None:
        """A write through a descriptor the model cannot place: lost, if it names a file of the
        working folders that the model does not hold."""
        index = {"copy_file_range": 2, "splice": 2}.get(op.call, 0)
        arg = op.args[index] if len(op.args) > index else None
        if not isinstance(arg, dict) or arg.get("deleted") or not arg.get("path"):
            return
        path = arg["path"].decode("utf-8", "surrogateescape")
        if self.modeled(path) and path not in self.paths:
            self.lose(f"{op.call} into {path}, a file the grader did not see made")


# -- binding ---------------------------------------------------------------------------------------


#: The system calls that push data to the disk.
SYNCS = frozenset({"fsync", "fdatasync", "sync_file_range", "sync", "syncfs"})
#: The system calls that create, move or remove a name.
BINDING = frozenset({"rename", "renameat", "renameat2", "link", "linkat", "symlink",
                     "symlinkat", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "mknod",
                     "mknodat"})


def touches(model: ReplayModel, op: Op, idents: set[int]) -> bool:
    """Whether ``op`` writes into (or syncs) a node whose creation number is in ``idents``,
    or syncs the working directory: a moment before a sync is one a power cut can hit."""
    if op.error is not None or op.ret is None:
        return False
    if op.call in SYNCS:
        desc = model.desc(op.pid, op.args[0] if op.args else None)
        return op.call in ("sync", "syncfs") or (desc is not None and (
            desc.node.ident in idents or desc.node is model.paths.get("/work")))
    if op.call not in DATA_WRITES:
        return False
    desc = model.target_of(op)
    return desc is not None and desc.node.ident in idents


def touches_checkpoint(model: ReplayModel, op: Op) -> bool:
    """Whether ``op`` may change what ``/work/checkpoint.json`` is or holds."""
    if op.error is not None or op.ret is None:
        return False
    node = model.paths.get(CHECKPOINT_PATH)
    if op.call in DATA_WRITES or op.call in ("ftruncate", "fallocate", "mmap"):
        arg = op.args[4] if op.call == "mmap" and len(op.args) > 4 else (
            op.args[0] if op.args else None)
        desc = model.target_of(op) if op.call in DATA_WRITES else model.desc(op.pid, arg)
        return desc is not None and desc.node is node and node is not None
    if op.call in ("openat", "open", "creat", "openat2"):
        path = (op.ret_path or b"").decode("utf-8", "surrogateescape")
        return path == CHECKPOINT_PATH or (node is None and path == CHECKPOINT_PATH)
    if op.call == "truncate":
        return model.absolute(op.pid, None, op.args[0], follow_last=True) == CHECKPOINT_PATH
    if op.call in BINDING:
        return any(path == CHECKPOINT_PATH or CHECKPOINT_PATH.startswith(path + "/")
                   for path in paths_of(model, op))
    return False


def paths_of(model: ReplayModel, op: Op) -> list[str]:
    """The absolute paths a binding operation names."""
    a = op.args
    try:
        if op.call in ("rename", "link"):
            return list(two_paths(model, op, at=False))
        if op.call in ("renameat", "renameat2", "linkat"):
            if op.call == "linkat" and not a[1]:  # AT_EMPTY_PATH: the descriptor's own file
                return [model.absolute(op.pid, a[2], a[3])]
            return list(two_paths(model, op, at=True))
        if op.call in ("symlink",):
            return [model.absolute(op.pid, None, a[1])]
        if op.call in ("symlinkat",):
            return [model.absolute(op.pid, a[1], a[2])]
        if op.call in ("unlink", "rmdir", "mkdir", "mknod", "truncate"):
            return [model.absolute(op.pid, None, a[0])]
        if op.call in ("unlinkat", "mkdirat", "mknodat"):
            return [model.absolute(op.pid, a[0], a[1])]
    except (IndexError, AttributeError, TypeError):
        return []
    return []


def bound_to_checkpoint(ops: list[Op]) -> set[int]:
    """Which nodes (by creation order) are ``/work/checkpoint.json`` at some point of the run."""
    model = ReplayModel(ops)
    bound: set[int] = set()
    for op in ops:
        if op.call != "marker":
            model.apply(op)
            node = model.paths.get(CHECKPOINT_PATH)
            if node is not None:
                bound.add(node.ident)
    return bound


# -- replay ----------------------------------------------------------------------------------------


# the names this module had before it was split, for code that still imports them from here
_Model = ReplayModel
_Node = Node
_BINDING = BINDING


def replay(ops: list[Op]) -> tuple[list[Moment], list[Op]]:
    """Every moment worth checking, in order, and the writes the model could not follow.

    A moment is taken before each operation that may change ``/work/checkpoint.json`` (what it
    holds or what the name points to) or a file that becomes it later (a temp file renamed over
    it), part way through each such write (see the module docstring), at each grader call
    marker, and at the end.
    """
    bound = bound_to_checkpoint(ops)
    model = ReplayModel(ops)
    moments: list[Moment] = []
    previous = 0  # the JSON of the checkpoint the last call found (padding left out)
    for op in ops:
        if op.call == "marker":
            moments.append(model.moment(op.index, "call", op))
            if moments[-1].data is not None:
                previous = len(moments[-1].data.rstrip(PADDING))
            continue
        if touches_checkpoint(model, op) or touches(model, op, bound):
            before = model.moment(op.index, "before", op)
            moments.append(before)
            if op.call in DATA_WRITES and (op.ret or 0) > 1 and op.error is None:
                moments += _torn(model, op, before, previous)
        model.apply(op)
    moments.append(model.moment(len(ops), "end", None))
    return moments, model.unfollowed


def _torn(model: ReplayModel, op: Op, before: Moment, previous: int) -> list[Moment]:
    """The distinct states write ``op`` leaves cut part way (just the middle for a write into
    another file: checkpoint.json is then as it was). ``previous``: where the JSON of the
    checkpoint the last call found ended, a cut of its own (see
    :func:`graders.judge.crash_points.tear_limit`)."""
    total = op.ret or 0
    if not model.into_checkpoint(op):
        return [model.torn(op, total // 2, before)]
    start = model.write_start(op)
    size = max(len(model.paths[CHECKPOINT_PATH].data), start + total)
    cuts = cut_points(start, total, size)
    if 0 < previous - start < total:
        cuts = sorted({*cuts, previous - start})
    seen = {(before.kind, before.data)}
    found = []
    for keep in cuts:
        moment = model.torn(op, keep, before)
        if (moment.kind, moment.data) in seen:
            continue  # the same state as one already taken: judged once
        seen.add((moment.kind, moment.data))
        found.append(moment)
    return found


# -- budget ----------------------------------------------------------------------------------------


#: Bytes of checkpoint.json the crash states of one run may hold together.
REPLAY_BUDGET = 256 << 20


class OverBudget(RuntimeError):
    """Judging this run would cost more than one run may; ``str()`` says so to the student."""


def over_budget_message(what: str) -> str:
    """The student's message for a run stopped or refused as over budget (``what`` it did)."""
    return (f"Your code {what}. The grader bounds what one run may cost it (calls, bytes "
            "written, copies of checkpoint.json kept), and a run of the lesson's loop stays far "
            "below that bound; this one went over it, so nothing of it was graded.")


def _written(ops: list[Op]) -> int:
    """An upper bound of any file's size in the run: every byte written, every size set."""
    total = 0
    for op in ops:
        if op.error is not None or op.ret is None:
            continue
        if op.call in DATA_WRITES and op.ret > 0:
            total += op.ret
        elif op.call in ("ftruncate", "truncate") and len(op.args) > 1 \
                and isinstance(op.args[1], int):
            total += max(0, op.args[1])
        elif op.call == "fallocate" and len(op.args) > 3 and all(
                isinstance(a, int) for a in op.args[2:4]):
            total += max(0, op.args[2]) + max(0, op.args[3])
    return total


def check_replay_budget(ops: list[Op], budget: int = REPLAY_BUDGET) -> None:
    """Raise :class:`OverBudget` when the crash states of ``ops`` would hold more than
    ``budget`` bytes of checkpoint.json between them."""
    if (2 * len(ops) + 1) * _written(ops) <= budget:
        return
    model = ReplayModel()
    total = largest = 0
    for op in ops:
        node = model.paths.get(CHECKPOINT_PATH)
        size = len(node.data) if node is not None and node.kind == "file" else 0
        largest = max(largest, size)
        total += size
        if op.call in DATA_WRITES:
            total += size + (op.ret or 0) // 2
        if total > budget:
            raise OverBudget(over_budget_message(
                f"rewrote checkpoint.json (up to {largest:,} bytes) in {len(ops):,} file "
                f"operations: checking every state a crash could leave would hold more than "
                f"{budget >> 20} MB of copies of it"))
        if op.call != "marker":
            model.apply(op)
