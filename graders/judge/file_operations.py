"""How each system call other than a data write changes the model of the sandbox's files:
opens, descriptors (duplicated, closed, inherited), processes started, truncates, seeks,
working-directory changes, renames, links, removals, new folders and special files, shared
memory maps (a rename or link between ``/work`` and ``/tmp`` fails with EXDEV, as between the
two filesystems they are in the model, even where the run's own folders shared one: the uid tier
without Landlock). ``OPERATIONS`` maps a call's name to its effect on a :class:`DiskModel`.
"""

from __future__ import annotations

from collections.abc import Callable

from graders.judge.disk_model import Description, DiskModel, Located, Node
from graders.judge.trace import Op

__all__ = ["OPERATIONS", "two_paths", "flags_of", "located"]


def flags_of(token) -> set[str]:
    """A flag argument (``"O_WRONLY|O_CREAT"``) as a set of names."""
    return set(str(token).split("|")) if isinstance(token, str) else set()


def _arg(op: Op, i: int, default=None):
    return op.args[i] if len(op.args) > i else default


def _words(op: Op, path, problem: str) -> str:
    shown = path.decode("utf-8", "replace") if isinstance(path, bytes) else str(path)
    return f"{op.call} of {shown}: {problem}"


def located(model: DiskModel, op: Op, base, path, *, follow_last: bool = False) -> Located:
    """Where ``path`` of ``op`` leads; a path the model cannot follow makes the model lost."""
    where = model.locate(op.pid, base, path, follow_last=follow_last)
    if where.problem is not None:
        model.lose(_words(op, path, where.problem))
    return where


def two_paths(model: DiskModel, op: Op, at: bool) -> tuple[str, str]:
    """The two absolute paths of a rename or link (``at``: the ``*at`` form, with directories);
    "" for a path the model cannot follow."""
    a = op.args
    if at:
        return (model.absolute(op.pid, a[0], a[1]), model.absolute(op.pid, a[2], a[3]))
    return model.absolute(op.pid, None, a[0]), model.absolute(op.pid, None, a[1])


# -- opens -------------------------------------------------------------------------------------

def _open_common(model: DiskModel, op: Op, flags: set[str], base, path) -> None:
    if op.ret_path is None or op.ret is None or op.ret < 0:
        return
    files = model.process(op.pid).files
    where = op.ret_path.decode("utf-8", "surrogateescape")
    if not model.modeled(where):
        files.pop(op.ret, None)
        return
    node: Node | None = None
    if op.ret_deleted:
        if "O_TMPFILE" not in flags and path is not None:  # reopened through /proc/self/fd/N
            node = model.locate(op.pid, base, path, follow_last=True).node
        if node is None:
            node = model.node("file")
            if "O_TMPFILE" not in flags:
                node.unknown = f"an open of {where}, a deleted file the grader cannot tell"
    else:
        node = model.paths.get(where)
        if node is None:
            node = model.node("file")
            model.bind(where, node)
    if "O_TRUNC" in flags and node.kind == "file" and ("O_WRONLY" in flags or "O_RDWR" in flags):
        node.data = bytearray()
        node.unknown = ""
        node.changed()
    sync = "all" if "O_SYNC" in flags else "data" if "O_DSYNC" in flags else ""
    files[op.ret] = Description(node, 0, "O_APPEND" in flags, sync)


def _openat(model: DiskModel, op: Op) -> None:
    _open_common(model, op, flags_of(_arg(op, 2, "")), _arg(op, 0), _arg(op, 1))


def _open(model: DiskModel, op: Op) -> None:
    _open_common(model, op, flags_of(_arg(op, 1, "")), None, _arg(op, 0))


def _openat2(model: DiskModel, op: Op) -> None:
    how = _arg(op, 2) if isinstance(_arg(op, 2), dict) else {}
    _open_common(model, op, flags_of((how.get("struct") or {}).get("flags", "")), _arg(op, 0),
                 _arg(op, 1))


def _creat(model: DiskModel, op: Op) -> None:
    _open_common(model, op, {"O_CREAT", "O_WRONLY", "O_TRUNC"}, None, _arg(op, 0))


# -- descriptors and processes -------------------------------------------------------------------

def _dup(model: DiskModel, op: Op, new_fd: int | None) -> None:
    if new_fd is None or new_fd < 0:
        return
    desc = model.desc(op.pid, _arg(op, 0))
    files = model.process(op.pid).files
    if desc is None:
        files.pop(new_fd, None)
    else:
        files[new_fd] = desc  # one open file description, two descriptors: one offset


def _dup_ret(model: DiskModel, op: Op) -> None:
    _dup(model, op, op.ret)


def _fcntl(model: DiskModel, op: Op) -> None:
    cmd = str(_arg(op, 1, ""))
    if cmd in ("F_DUPFD", "F_DUPFD_CLOEXEC"):
        _dup(model, op, op.ret)
    elif cmd == "F_SETFL":
        desc = model.desc(op.pid, _arg(op, 0))
        if desc is not None:  # Linux changes O_APPEND here, never O_SYNC or O_DSYNC
            desc.append = "O_APPEND" in flags_of(_arg(op, 2, ""))


def _close(model: DiskModel, op: Op) -> None:
    arg = _arg(op, 0)
    if isinstance(arg, dict) and arg.get("fd") is not None:
        model.process(op.pid).files.pop(arg["fd"], None)


def _memfd_create(model: DiskModel, op: Op) -> None:
    """A file in memory with no name: what it holds is known from its writes (a copy from it,
    ``sendfile``, is then followed)."""
    if op.ret is not None and op.ret >= 0:
        model.process(op.pid).files[op.ret] = Description(model.node("file"))


def _start(model: DiskModel, op: Op) -> None:
    if op.ret is not None and op.ret > 0:
        model.process(op.ret)  # made from its parent as it is now, unless it already ran


def _mmap(model: DiskModel, op: Op) -> None:
    flags, prot = flags_of(_arg(op, 3, "")), flags_of(_arg(op, 2, ""))
    if "MAP_SHARED" not in flags and "MAP_SHARED_VALIDATE" not in flags:
        return
    desc = model.desc(op.pid, _arg(op, 4))
    if desc is not None and "PROT_WRITE" in prot and desc.node.kind == "file":
        desc.node.unknown = "a write through a shared memory map (mmap), which leaves no trace"


def _io_submit(model: DiskModel, op: Op) -> None:
    model.lose("an asynchronous write (io_submit), whose order the grader cannot tell")


# -- sizes and offsets -------------------------------------------------------------------------

def _ftruncate(model: DiskModel, op: Op) -> None:
    desc = model.desc(op.pid, _arg(op, 0))
    length = _arg(op, 1)
    if desc is not None and isinstance(length, int) and desc.node.kind == "file":
        model.resize(desc.node, length)


def _truncate(model: DiskModel, op: Op) -> None:
    node = located(model, op, None, _arg(op, 0), follow_last=True).node
    length = _arg(op, 1)
    if node is not None and isinstance(length, int) and node.kind == "file":
        model.resize(node, length)


def _fallocate(model: DiskModel, op: Op) -> None:
    desc = model.desc(op.pid, _arg(op, 0))
    if desc is None or len(op.args) < 4 or desc.node.kind != "file":
        return
    mode, start, length = str(op.args[1]), op.args[2], op.args[3]
    node = desc.node
    if "COLLAPSE_RANGE" in mode or "INSERT_RANGE" in mode:
        node.unknown = "a fallocate that moves a file's bytes"
        return
    end = start + length
    if "PUNCH_HOLE" in mode or "ZERO_RANGE" in mode:
        kept = len(node.data)
        if end > kept and "KEEP_SIZE" not in mode:
            model.resize(node, end)
        stop = min(end, len(node.data))
        if stop > start:
            node.data[start:stop] = b"\0" * (stop - start)
            node.changed()
        return
    if end > len(node.data) and "KEEP_SIZE" not in mode:
        model.resize(node, end)


def _lseek(model: DiskModel, op: Op) -> None:
    desc = model.desc(op.pid, _arg(op, 0))
    if desc is not None:
        desc.offset = op.ret


# -- working directory ---------------------------------------------------------------------------

def _chdir(model: DiskModel, op: Op) -> None:
    where = located(model, op, None, _arg(op, 0), follow_last=True)
    if where.path is not None:
        model.set_cwd(op.pid, where.path)


def _fchdir(model: DiskModel, op: Op) -> None:
    arg = _arg(op, 0)
    if isinstance(arg, dict) and arg.get("path"):
        model.set_cwd(op.pid, arg["path"].decode("utf-8", "surrogateescape"))


# -- names: renames, links, removals, new entries ------------------------------------------------

def _rename_paths(model: DiskModel, op: Op, bases: tuple, names: tuple) -> None:
    old = located(model, op, bases[0], names[0])
    new = located(model, op, bases[1], names[1])
    if old.path is None or new.path is None or model.across(old.path, new.path):
        return
    if old.path not in model.paths:
        if model.modeled(old.path):
            model.lose(_words(op, names[0], "a file the grader did not see made"))
        return
    if "RENAME_EXCHANGE" in flags_of(_arg(op, 4, "")):
        model.exchange(old.path, new.path)
    elif model.modeled(new.path):
        model.move(old.path, new.path)
    else:
        model.unbind(old.path)


def _rename(model: DiskModel, op: Op) -> None:
    _rename_paths(model, op, (None, None), (_arg(op, 0), _arg(op, 1)))


def _renameat(model: DiskModel, op: Op) -> None:  # renameat and renameat2
    _rename_paths(model, op, (_arg(op, 0), _arg(op, 2)), (_arg(op, 1), _arg(op, 3)))


def _link_node(model: DiskModel, op: Op, node: Node | None, base, name, source) -> None:
    new = located(model, op, base, name)
    if new.path is None or not model.modeled(new.path):
        return
    if node is not None and model.across(model.name_of(node) or "", new.path):
        return
    if node is None:
        model.lose(_words(op, source, "a file the grader did not see made"))
        return
    model.bind(new.path, node)


def _link(model: DiskModel, op: Op) -> None:
    _link_node(model, op, located(model, op, None, _arg(op, 0)).node, None, _arg(op, 1),
               _arg(op, 0))


def _linkat(model: DiskModel, op: Op) -> None:
    flags = flags_of(_arg(op, 4, ""))
    if "AT_EMPTY_PATH" in flags and not _arg(op, 1):
        desc = model.desc(op.pid, _arg(op, 0))  # names the open file itself (O_TMPFILE)
        node = desc.node if desc is not None else None
    else:
        node = located(model, op, _arg(op, 0), _arg(op, 1),
                       follow_last="AT_SYMLINK_FOLLOW" in flags).node
    _link_node(model, op, node, _arg(op, 2), _arg(op, 3), _arg(op, 1) or _arg(op, 0))


def _new_entry(model: DiskModel, op: Op, base, name, node: Node) -> None:
    where = located(model, op, base, name)
    if where.path is not None and model.modeled(where.path):
        model.bind(where.path, node)


def _symlink(model: DiskModel, op: Op) -> None:
    target = _arg(op, 0, b"").decode("utf-8", "surrogateescape")
    _new_entry(model, op, None, _arg(op, 1), model.node("symlink", target))


def _symlinkat(model: DiskModel, op: Op) -> None:
    target = _arg(op, 0, b"").decode("utf-8", "surrogateescape")
    _new_entry(model, op, _arg(op, 1), _arg(op, 2), model.node("symlink", target))


def _remove(model: DiskModel, op: Op, base, name) -> None:
    where = located(model, op, base, name)
    if where.path is not None:
        for path in model._subtree(where.path):
            model.unbind(path)
        model.unbind(where.path)


def _unlink(model: DiskModel, op: Op) -> None:  # unlink and rmdir
    _remove(model, op, None, _arg(op, 0))


def _unlinkat(model: DiskModel, op: Op) -> None:
    _remove(model, op, _arg(op, 0), _arg(op, 1))


def _mkdir(model: DiskModel, op: Op) -> None:
    _new_entry(model, op, None, _arg(op, 0), model.node("dir"))


def _mkdirat(model: DiskModel, op: Op) -> None:
    _new_entry(model, op, _arg(op, 0), _arg(op, 1), model.node("dir"))


def _special(mode) -> str:
    return "fifo" if "S_IFIFO" in str(mode) else "special"


def _mknod(model: DiskModel, op: Op) -> None:
    _new_entry(model, op, None, _arg(op, 0), model.node(_special(_arg(op, 1))))


def _mknodat(model: DiskModel, op: Op) -> None:
    _new_entry(model, op, _arg(op, 0), _arg(op, 1), model.node(_special(_arg(op, 2))))


OPERATIONS: dict[str, Callable[[DiskModel, Op], None]] = {
    "openat": _openat, "open": _open, "openat2": _openat2, "creat": _creat,
    "dup": _dup_ret, "dup2": _dup_ret, "dup3": _dup_ret, "fcntl": _fcntl, "close": _close,
    "clone": _start, "clone3": _start, "fork": _start, "vfork": _start,
    "mmap": _mmap, "io_submit": _io_submit, "memfd_create": _memfd_create,
    "ftruncate": _ftruncate, "truncate": _truncate, "fallocate": _fallocate, "lseek": _lseek,
    "chdir": _chdir, "fchdir": _fchdir,
    "rename": _rename, "renameat": _renameat, "renameat2": _renameat,
    "link": _link, "linkat": _linkat, "symlink": _symlink, "symlinkat": _symlinkat,
    "unlink": _unlink, "unlinkat": _unlinkat, "rmdir": _unlink,
    "mkdir": _mkdir, "mkdirat": _mkdirat, "mknod": _mknod, "mknodat": _mknodat,
}
