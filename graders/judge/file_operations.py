"""How each system call other than a data write changes the model of the sandbox's files:
opens, truncates, seeks, working-directory changes, renames, links, removals, new folders and
special files. ``OPERATIONS`` maps a call's name to its effect on a :class:`DiskModel`.
"""

from __future__ import annotations

from collections.abc import Callable

from graders.judge.disk_model import Description, DiskModel
from graders.judge.trace import Op

__all__ = ["OPERATIONS", "two_paths"]


def _flags(token) -> set[str]:
    return set(str(token).split("|")) if isinstance(token, str) else set()


def two_paths(model: DiskModel, op: Op, at: bool) -> tuple[str, str]:
    """The two absolute paths of a rename or link (``at``: the ``*at`` form, with directories)."""
    a = op.args
    if at:
        return (model.absolute(op.pid, a[0], a[1]), model.absolute(op.pid, a[2], a[3]))
    return model.absolute(op.pid, None, a[0]), model.absolute(op.pid, None, a[1])


# -- opens -------------------------------------------------------------------------------------

def _open_common(model: DiskModel, op: Op, flags: set[str]) -> None:
    if op.ret_path is None or op.ret is None or op.ret < 0:
        return
    path = op.ret_path.decode("utf-8", "surrogateescape")
    if "O_PATH" in flags:
        return
    deleted = path.endswith(" (deleted)")
    if deleted:
        path = path[: -len(" (deleted)")]
    if not model.modeled(path):
        model.descs.pop((op.pid, op.ret), None)
        return
    node = None if deleted else model.paths.get(path)
    if node is None:
        node = model.node("file")
        if not deleted and "O_TMPFILE" not in flags:
            model.paths[path] = node
    if "O_TRUNC" in flags and node.kind == "file" and (
            "O_WRONLY" in flags or "O_RDWR" in flags):
        node.data = bytearray()
        node.unknown = False
    model.descs[(op.pid, op.ret)] = Description(node, 0, "O_APPEND" in flags)


def _openat(model: DiskModel, op: Op) -> None:
    _open_common(model, op, _flags(op.args[2] if len(op.args) > 2 else ""))


def _open(model: DiskModel, op: Op) -> None:
    _open_common(model, op, _flags(op.args[1] if len(op.args) > 1 else ""))


def _openat2(model: DiskModel, op: Op) -> None:
    how = op.args[2] if len(op.args) > 2 and isinstance(op.args[2], dict) else {}
    _open_common(model, op, _flags((how.get("struct") or {}).get("flags", "")))


def _creat(model: DiskModel, op: Op) -> None:
    _open_common(model, op, {"O_CREAT", "O_WRONLY", "O_TRUNC"})


# -- sizes and offsets -------------------------------------------------------------------------

def _ftruncate(model: DiskModel, op: Op) -> None:
    desc = model.desc(op.pid, op.args[0] if op.args else None)
    length = op.args[1] if len(op.args) > 1 and isinstance(op.args[1], int) else None
    if desc is not None and length is not None and desc.node.kind == "file":
        model.resize(desc.node, length)


def _truncate(model: DiskModel, op: Op) -> None:
    path = model.absolute(op.pid, None, op.args[0], follow_last=True)
    node = model.paths.get(path)
    length = op.args[1] if len(op.args) > 1 and isinstance(op.args[1], int) else None
    if node is not None and length is not None and node.kind == "file":
        model.resize(node, length)


def _fallocate(model: DiskModel, op: Op) -> None:
    desc = model.desc(op.pid, op.args[0] if op.args else None)
    if desc is None or len(op.args) < 4 or "KEEP_SIZE" in str(op.args[1]):
        return
    end = op.args[2] + op.args[3]
    if end > len(desc.node.data):
        model.resize(desc.node, end)


def _lseek(model: DiskModel, op: Op) -> None:
    desc = model.desc(op.pid, op.args[0] if op.args else None)
    if desc is not None:
        desc.offset = op.ret


# -- working directory ---------------------------------------------------------------------------

def _chdir(model: DiskModel, op: Op) -> None:
    path = model.absolute(op.pid, None, op.args[0], follow_last=True)
    model.cwd[op.pid] = model.last_cwd = path


def _fchdir(model: DiskModel, op: Op) -> None:
    arg = op.args[0] if op.args else None
    if isinstance(arg, dict) and arg.get("path"):
        model.cwd[op.pid] = model.last_cwd = arg["path"].decode("utf-8", "surrogateescape")


# -- names: renames, links, removals, new entries ------------------------------------------------

def _rename(model: DiskModel, op: Op) -> None:
    model.move(*two_paths(model, op, at=False))


def _renameat(model: DiskModel, op: Op) -> None:
    model.move(*two_paths(model, op, at=True))


def _renameat2(model: DiskModel, op: Op) -> None:
    old, new = two_paths(model, op, at=True)
    if "RENAME_EXCHANGE" in str(op.args[4] if len(op.args) > 4 else ""):
        a, b = model.paths.get(old), model.paths.get(new)
        if a is not None and b is not None:
            model.paths[old], model.paths[new] = b, a
        return
    model.move(old, new)


def _link(model: DiskModel, op: Op) -> None:
    old, new = two_paths(model, op, at=False)
    if old in model.paths:
        model.paths[new] = model.paths[old]


def _linkat(model: DiskModel, op: Op) -> None:
    a = op.args
    new = model.absolute(op.pid, a[2], a[3])
    if "AT_EMPTY_PATH" in str(a[4] if len(a) > 4 else "") and isinstance(a[0], dict):
        desc = model.desc(op.pid, a[0])
        if desc is not None:
            model.paths[new] = desc.node
        return
    old = model.absolute(op.pid, a[0], a[1], follow_last="AT_SYMLINK_FOLLOW" in str(
        a[4] if len(a) > 4 else ""))
    if old in model.paths:
        model.paths[new] = model.paths[old]


def _symlink(model: DiskModel, op: Op) -> None:
    target = op.args[0].decode("utf-8", "surrogateescape")
    model.paths[model.absolute(op.pid, None, op.args[1])] = model.node("symlink", target)


def _symlinkat(model: DiskModel, op: Op) -> None:
    target = op.args[0].decode("utf-8", "surrogateescape")
    model.paths[model.absolute(op.pid, op.args[1], op.args[2])] = model.node("symlink", target)


def _unlink(model: DiskModel, op: Op) -> None:
    model.paths.pop(model.absolute(op.pid, None, op.args[0]), None)


def _unlinkat(model: DiskModel, op: Op) -> None:
    model.paths.pop(model.absolute(op.pid, op.args[0], op.args[1]), None)


def _rmdir(model: DiskModel, op: Op) -> None:
    model.paths.pop(model.absolute(op.pid, None, op.args[0]), None)


def _mkdir(model: DiskModel, op: Op) -> None:
    model.paths[model.absolute(op.pid, None, op.args[0])] = model.node("dir")


def _mkdirat(model: DiskModel, op: Op) -> None:
    model.paths[model.absolute(op.pid, op.args[0], op.args[1])] = model.node("dir")


def _mknod(model: DiskModel, op: Op) -> None:
    kind = "fifo" if "S_IFIFO" in str(op.args[1]) else "special"
    model.paths[model.absolute(op.pid, None, op.args[0])] = model.node(kind)


def _mknodat(model: DiskModel, op: Op) -> None:
    kind = "fifo" if "S_IFIFO" in str(op.args[2]) else "special"
    model.paths[model.absolute(op.pid, op.args[0], op.args[1])] = model.node(kind)


OPERATIONS: dict[str, Callable[[DiskModel, Op], None]] = {
    "openat": _openat, "open": _open, "openat2": _openat2, "creat": _creat,
    "ftruncate": _ftruncate, "truncate": _truncate, "fallocate": _fallocate, "lseek": _lseek,
    "chdir": _chdir, "fchdir": _fchdir,
    "rename": _rename, "renameat": _renameat, "renameat2": _renameat2,
    "link": _link, "linkat": _linkat, "symlink": _symlink, "symlinkat": _symlinkat,
    "unlink": _unlink, "unlinkat": _unlinkat, "rmdir": _rmdir,
    "mkdir": _mkdir, "mkdirat": _mkdirat, "mknod": _mknod, "mknodat": _mknodat,
}
