"""Binding analysis: which operations may change what ``/work/checkpoint.json`` is or holds,
and which files become it at some point of a run (a temp file renamed over it later).
"""

from __future__ import annotations

from graders.judge.disk_model import CHECKPOINT_PATH
from graders.judge.file_operations import two_paths
from graders.judge.replay_model import DATA_WRITES, ReplayModel
from graders.judge.trace import Op

__all__ = ["SYNCS", "BINDING", "touches", "touches_checkpoint", "paths_of",
           "bound_to_checkpoint"]

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
