"""Replay recorded file operations on a model of the sandbox's files: every state a kill can leave.

The sandbox's writable places (``/work`` and ``/tmp``) start empty. Applying the recorded
operations one by one, the model knows at every point what ``/work/checkpoint.json`` is: a
file with these bytes, nothing, a FIFO, a link. A process killed just before operation ``i``
leaves the state after operations ``0..i-1``; one killed in the middle of a write leaves part
of that write's bytes (here: half of them) on top of it. That is the record-and-replay approach of
ALICE (Pillai et al., OSDI '14): one run, every crash state, no second run to compare with.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from dataclasses import dataclass, field

from graders.judge.trace import Op

__all__ = ["Moment", "replay", "CHECKPOINT_PATH", "ROOTS"]

CHECKPOINT_PATH = "/work/checkpoint.json"
ROOTS = ("/work", "/tmp")

_DATA_WRITES = frozenset({"write", "pwrite64", "writev", "pwritev", "pwritev2", "sendfile",
                          "copy_file_range", "splice"})
_SYNCS = frozenset({"fsync", "fdatasync", "sync_file_range", "sync", "syncfs"})
_BINDING = frozenset({"rename", "renameat", "renameat2", "link", "linkat", "symlink",
                      "symlinkat", "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "mknod",
                      "mknodat"})


class _Node:
    __slots__ = ("kind", "data", "target", "unknown", "ident", "durable")

    def __init__(self, ident: int, kind: str, target: str | None = None) -> None:
        self.ident = ident  # creation order within one model: the same node in every replay
        self.kind = kind
        self.data = bytearray()
        self.target = target
        self.unknown = False
        self.durable = b""  # what a power cut keeps: the bytes as of the last fsync


@dataclass
class _Desc:
    node: _Node
    offset: int = 0
    append: bool = False


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
        return self.kind == other.kind and self.data == other.data


def _flags(token) -> set[str]:
    return set(str(token).split("|")) if isinstance(token, str) else set()


class _Model:
    def __init__(self) -> None:
        self._created = itertools.count(1)
        self.paths: dict[str, _Node] = {root: self.node("dir") for root in ROOTS}
        self.descs: dict[tuple[int, int], _Desc] = {}
        self.cwd: dict[int, str] = {}
        self.last_cwd = "/work"
        self.unfollowed: list[Op] = []

    def node(self, kind: str, target: str | None = None) -> _Node:
        """A new node, numbered in this model's creation order (no state shared across threads)."""
        return _Node(next(self._created), kind, target)

    # -- paths -----------------------------------------------------------------------------

    def cwd_of(self, pid: int) -> str:
        return self.cwd.get(pid, self.last_cwd)

    def absolute(self, pid: int, base, path: bytes | str, *, follow_last: bool = False) -> str:
        text = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path
        if not text.startswith("/"):
            if isinstance(base, dict) and base.get("path"):
                root = base["path"].decode("utf-8", "surrogateescape")
            else:
                root = self.cwd_of(pid)
            text = f"{root}/{text}"
        text = re.sub(r"^/proc/(?:self|thread-self|\d+)/cwd(?=/|$)", self.cwd_of(pid), text)
        text = re.sub(r"^/proc/(?:self|thread-self|\d+)/root(?=/|$)", "", text) or "/"
        text = posixpath.normpath(text)
        return self._resolve_links(text, follow_last)

    def _resolve_links(self, path: str, follow_last: bool) -> str:
        for _ in range(16):
            parts = path.split("/")
            changed = False
            last = len(parts) if follow_last else len(parts) - 1
            for i in range(2, last + 1):
                prefix = "/".join(parts[:i])
                node = self.paths.get(prefix)
                if node is not None and node.kind == "symlink":
                    target = node.target or ""
                    if not target.startswith("/"):
                        target = posixpath.join(posixpath.dirname(prefix), target)
                    path = posixpath.normpath("/".join([target, *parts[i:]]))
                    changed = True
                    break
            if not changed:
                return path
        return path

    @staticmethod
    def modeled(path: str) -> bool:
        return any(path == r or path.startswith(r + "/") for r in ROOTS)

    # -- descriptors -----------------------------------------------------------------------

    def desc(self, pid: int, arg) -> _Desc | None:
        if not isinstance(arg, dict) or arg.get("fd") is None:
            return None
        fd = arg["fd"]
        path = (arg.get("path") or b"").decode("utf-8", "surrogateescape")
        found = self.descs.get((pid, fd))
        deleted = path.endswith(" (deleted)")
        bare = path[: -len(" (deleted)")] if deleted else path
        if found is not None and (deleted or self.paths.get(bare) is found.node
                                  or not self.modeled(bare)):
            return found
        # a descriptor inherited across fork keeps its number: share that description
        for (_other_pid, other_fd), other in list(self.descs.items()):
            if other_fd == fd and not deleted and self.paths.get(bare) is other.node:
                self.descs[(pid, fd)] = other
                return other
        if self.modeled(bare) and not deleted:
            node = self.paths.get(bare)
            if node is not None:
                desc = _Desc(node, offset=len(node.data), append=False)
                self.descs[(pid, fd)] = desc
                return desc
        return None

    # -- the checkpoint --------------------------------------------------------------------

    def checkpoint(self) -> tuple[str, bytes | None]:
        node = self.paths.get(CHECKPOINT_PATH)
        if node is None:
            return "absent", None
        if node.kind != "file":
            return node.kind, None
        if node.unknown:
            return "unknown", None
        return "file", bytes(node.data)

    def listing(self) -> tuple[dict, list]:
        files: dict = {}
        elsewhere = []
        for path, node in self.paths.items():
            if path == CHECKPOINT_PATH or not path.startswith("/work/"):
                continue
            rest = path[len("/work/"):]
            if "/" not in rest:
                files[rest] = "dir/" if node.kind == "dir" else len(node.data)
            elif rest.rsplit("/", 1)[-1] == "checkpoint.json":
                elsewhere.append(rest)
        return dict(sorted(files.items())), sorted(elsewhere)

    def moment(self, position: int, how: str, op: Op | None) -> Moment:
        kind, data = self.checkpoint()
        files, elsewhere = self.listing()
        return Moment(position, how, op, kind, data, files, elsewhere)

    # -- applying one operation --------------------------------------------------------------

    def write_at(self, desc: _Desc, data: bytes, offset: int | None, *, unknown=False) -> None:
        node = desc.node
        if node.kind != "file":
            return
        if offset is None:
            start = len(node.data) if desc.append else desc.offset
        else:
            start = offset
        if start > len(node.data):
            node.data.extend(b"\0" * (start - len(node.data)))
        node.data[start:start + len(data)] = data
        if unknown:
            node.unknown = True
        if offset is None:
            desc.offset = start + len(data)

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

    def target_of(self, op: Op) -> _Desc | None:
        args = op.args
        index = {"copy_file_range": 2, "splice": 2}.get(op.call, 0)
        return self.desc(op.pid, args[index] if len(args) > index else None)

    def apply(self, op: Op, *, keep: int | None = None) -> None:
        """Apply ``op``; for a data write, ``keep`` bytes only (a torn write)."""
        if op.error is not None or op.ret is None:
            return
        for arg in op.args:
            if isinstance(arg, dict) and arg.get("token") == "AT_FDCWD" and arg.get("path"):
                cwd = arg["path"].decode("utf-8", "surrogateescape")
                self.cwd[op.pid] = self.last_cwd = cwd
        call = op.call
        handler = getattr(self, f"_{call}", None)
        if call in _DATA_WRITES:
            self._data_write(op, keep)
        elif handler is not None:
            handler(op)

    def _payload(self, op: Op) -> tuple[bytes | None, int | None]:
        """``data_of(op)``, computed once per operation (it moves a copy's source offset)."""
        cached = getattr(self, "_cached", None)
        if cached is not None and cached[0] is op:
            return cached[1], cached[2]
        data, offset = self.data_of(op)
        self._cached = (op, data, offset)
        return data, offset

    def torn(self, op: Op, keep: int, before: Moment) -> Moment:
        """The moment halfway through write ``op``: ``keep`` of its bytes written."""
        moment = Moment(op.index, "during", op, before.kind, before.data, before.listing,
                        before.elsewhere, {"bytes": op.ret, "kept": keep})
        desc = self.target_of(op)
        node = self.paths.get(CHECKPOINT_PATH)
        if desc is None or desc.node is not node or node is None or node.kind != "file":
            return moment  # a write into another file: checkpoint.json is as it was
        data, offset = self._payload(op)
        payload = (data if data is not None else b"\0" * (op.ret or 0))[:keep]
        start = offset if offset is not None else (
            len(node.data) if desc.append else desc.offset)
        content = bytearray(node.data)
        if start > len(content):
            content.extend(b"\0" * (start - len(content)))
        content[start:start + len(payload)] = payload
        moment.kind = "unknown" if data is None or node.unknown else "file"
        moment.data = None if moment.kind == "unknown" else bytes(content)
        return moment

    def _data_write(self, op: Op, keep: int | None) -> None:
        desc = self.target_of(op)
        if desc is None:
            return
        data, offset = self._payload(op)
        if data is None:
            self.unfollowed.append(op)
            data = b"\0" * (op.ret or 0)
            self.write_at(desc, data if keep is None else data[:keep], offset, unknown=True)
            return
        self.write_at(desc, data if keep is None else data[:keep], offset)

    def _open_common(self, op: Op, flags: set[str]) -> None:
        if op.ret_path is None or op.ret is None or op.ret < 0:
            return
        path = op.ret_path.decode("utf-8", "surrogateescape")
        if "O_PATH" in flags:
            return
        deleted = path.endswith(" (deleted)")
        if deleted:
            path = path[: -len(" (deleted)")]
        if not self.modeled(path):
            self.descs.pop((op.pid, op.ret), None)
            return
        node = None if deleted else self.paths.get(path)
        if node is None:
            node = self.node("file")
            if not deleted and "O_TMPFILE" not in flags:
                self.paths[path] = node
        if "O_TRUNC" in flags and node.kind == "file" and (
                "O_WRONLY" in flags or "O_RDWR" in flags):
            node.data = bytearray()
            node.unknown = False
        self.descs[(op.pid, op.ret)] = _Desc(node, 0, "O_APPEND" in flags)

    def _openat(self, op: Op) -> None:
        self._open_common(op, _flags(op.args[2] if len(op.args) > 2 else ""))

    def _open(self, op: Op) -> None:
        self._open_common(op, _flags(op.args[1] if len(op.args) > 1 else ""))

    def _openat2(self, op: Op) -> None:
        how = op.args[2] if len(op.args) > 2 and isinstance(op.args[2], dict) else {}
        self._open_common(op, _flags((how.get("struct") or {}).get("flags", "")))

    def _creat(self, op: Op) -> None:
        self._open_common(op, {"O_CREAT", "O_WRONLY", "O_TRUNC"})

    def _ftruncate(self, op: Op) -> None:
        desc = self.desc(op.pid, op.args[0] if op.args else None)
        length = op.args[1] if len(op.args) > 1 and isinstance(op.args[1], int) else None
        if desc is not None and length is not None and desc.node.kind == "file":
            self._resize(desc.node, length)

    def _truncate(self, op: Op) -> None:
        path = self.absolute(op.pid, None, op.args[0], follow_last=True)
        node = self.paths.get(path)
        length = op.args[1] if len(op.args) > 1 and isinstance(op.args[1], int) else None
        if node is not None and length is not None and node.kind == "file":
            self._resize(node, length)

    def _fallocate(self, op: Op) -> None:
        desc = self.desc(op.pid, op.args[0] if op.args else None)
        if desc is None or len(op.args) < 4 or "KEEP_SIZE" in str(op.args[1]):
            return
        end = op.args[2] + op.args[3]
        if end > len(desc.node.data):
            self._resize(desc.node, end)

    @staticmethod
    def _resize(node: _Node, length: int) -> None:
        if length < len(node.data):
            del node.data[length:]
        else:
            node.data.extend(b"\0" * (length - len(node.data)))

    def _lseek(self, op: Op) -> None:
        desc = self.desc(op.pid, op.args[0] if op.args else None)
        if desc is not None:
            desc.offset = op.ret

    def _chdir(self, op: Op) -> None:
        path = self.absolute(op.pid, None, op.args[0], follow_last=True)
        self.cwd[op.pid] = self.last_cwd = path

    def _fchdir(self, op: Op) -> None:
        arg = op.args[0] if op.args else None
        if isinstance(arg, dict) and arg.get("path"):
            self.cwd[op.pid] = self.last_cwd = arg["path"].decode("utf-8", "surrogateescape")

    def _two_paths(self, op: Op, at: bool) -> tuple[str, str]:
        a = op.args
        if at:
            return (self.absolute(op.pid, a[0], a[1]), self.absolute(op.pid, a[2], a[3]))
        return self.absolute(op.pid, None, a[0]), self.absolute(op.pid, None, a[1])

    def _move(self, old: str, new: str) -> None:
        node = self.paths.pop(old, None)
        if node is None:
            return
        moved = {p: n for p, n in self.paths.items() if p.startswith(old + "/")}
        for p in moved:
            del self.paths[p]
        self.paths[new] = node
        for p, n in moved.items():
            self.paths[new + p[len(old):]] = n

    def _rename(self, op: Op) -> None:
        self._move(*self._two_paths(op, at=False))

    def _renameat(self, op: Op) -> None:
        self._move(*self._two_paths(op, at=True))

    def _renameat2(self, op: Op) -> None:
        old, new = self._two_paths(op, at=True)
        if "RENAME_EXCHANGE" in str(op.args[4] if len(op.args) > 4 else ""):
            a, b = self.paths.get(old), self.paths.get(new)
            if a is not None and b is not None:
                self.paths[old], self.paths[new] = b, a
            return
        self._move(old, new)

    def _link(self, op: Op) -> None:
        old, new = self._two_paths(op, at=False)
        if old in self.paths:
            self.paths[new] = self.paths[old]

    def _linkat(self, op: Op) -> None:
        a = op.args
        new = self.absolute(op.pid, a[2], a[3])
        if "AT_EMPTY_PATH" in str(a[4] if len(a) > 4 else "") and isinstance(a[0], dict):
            desc = self.desc(op.pid, a[0])
            if desc is not None:
                self.paths[new] = desc.node
            return
        old = self.absolute(op.pid, a[0], a[1], follow_last="AT_SYMLINK_FOLLOW" in str(
            a[4] if len(a) > 4 else ""))
        if old in self.paths:
            self.paths[new] = self.paths[old]

    def _symlink(self, op: Op) -> None:
        target = op.args[0].decode("utf-8", "surrogateescape")
        self.paths[self.absolute(op.pid, None, op.args[1])] = self.node("symlink", target)

    def _symlinkat(self, op: Op) -> None:
        target = op.args[0].decode("utf-8", "surrogateescape")
        self.paths[self.absolute(op.pid, op.args[1], op.args[2])] = self.node("symlink", target)

    def _unlink(self, op: Op) -> None:
        self.paths.pop(self.absolute(op.pid, None, op.args[0]), None)

    def _unlinkat(self, op: Op) -> None:
        self.paths.pop(self.absolute(op.pid, op.args[0], op.args[1]), None)

    def _rmdir(self, op: Op) -> None:
        self.paths.pop(self.absolute(op.pid, None, op.args[0]), None)

    def _mkdir(self, op: Op) -> None:
        self.paths[self.absolute(op.pid, None, op.args[0])] = self.node("dir")

    def _mkdirat(self, op: Op) -> None:
        self.paths[self.absolute(op.pid, op.args[0], op.args[1])] = self.node("dir")

    def _mknod(self, op: Op) -> None:
        kind = "fifo" if "S_IFIFO" in str(op.args[1]) else "special"
        self.paths[self.absolute(op.pid, None, op.args[0])] = self.node(kind)

    def _mknodat(self, op: Op) -> None:
        kind = "fifo" if "S_IFIFO" in str(op.args[2]) else "special"
        self.paths[self.absolute(op.pid, op.args[0], op.args[1])] = self.node(kind)

    def touches(self, op: Op, idents: set[int]) -> bool:
        """Whether ``op`` writes into (or syncs) a node whose creation number is in ``idents``,
        or syncs the working directory: a moment before a sync is one a power cut can hit."""
        if op.error is not None or op.ret is None:
            return False
        if op.call in _SYNCS:
            desc = self.desc(op.pid, op.args[0] if op.args else None)
            return op.call in ("sync", "syncfs") or (desc is not None and (
                desc.node.ident in idents or desc.node is self.paths.get("/work")))
        if op.call not in _DATA_WRITES:
            return False
        desc = self.target_of(op)
        return desc is not None and desc.node.ident in idents

    def touches_checkpoint(self, op: Op) -> bool:
        """Whether ``op`` may change what ``/work/checkpoint.json`` is or holds."""
        if op.error is not None or op.ret is None:
            return False
        node = self.paths.get(CHECKPOINT_PATH)
        if op.call in _DATA_WRITES or op.call in ("ftruncate", "fallocate"):
            desc = self.target_of(op) if op.call in _DATA_WRITES else self.desc(
                op.pid, op.args[0] if op.args else None)
            return desc is not None and desc.node is node and node is not None
        if op.call in ("openat", "open", "creat", "openat2"):
            path = (op.ret_path or b"").decode("utf-8", "surrogateescape")
            return path == CHECKPOINT_PATH or (node is None and path == CHECKPOINT_PATH)
        if op.call == "truncate":
            return self.absolute(op.pid, None, op.args[0], follow_last=True) == CHECKPOINT_PATH
        if op.call in _BINDING:
            return any(path == CHECKPOINT_PATH or CHECKPOINT_PATH.startswith(path + "/")
                       for path in self.paths_of(op))
        return False

    def paths_of(self, op: Op) -> list[str]:
        """The absolute paths a binding operation names."""
        a = op.args
        try:
            if op.call in ("rename", "link"):
                return list(self._two_paths(op, at=False))
            if op.call in ("renameat", "renameat2", "linkat"):
                if op.call == "linkat" and not isinstance(a[1], bytes):
                    return [self.absolute(op.pid, a[2], a[3])]
                return list(self._two_paths(op, at=True))
            if op.call in ("symlink",):
                return [self.absolute(op.pid, None, a[1])]
            if op.call in ("symlinkat",):
                return [self.absolute(op.pid, a[1], a[2])]
            if op.call in ("unlink", "rmdir", "mkdir", "mknod"):
                return [self.absolute(op.pid, None, a[0])]
            if op.call in ("unlinkat", "mkdirat", "mknodat"):
                return [self.absolute(op.pid, a[0], a[1])]
        except (IndexError, AttributeError, TypeError):
            return []
        return []


def _bound_to_checkpoint(ops: list[Op]) -> set[int]:
    """Which nodes (by creation order) are ``/work/checkpoint.json`` at some point of the run."""
    model = _Model()
    bound: set[int] = set()
    for op in ops:
        if op.call != "marker":
            model.apply(op)
            node = model.paths.get(CHECKPOINT_PATH)
            if node is not None:
                bound.add(node.ident)
    return bound


def replay(ops: list[Op]) -> tuple[list[Moment], list[Op]]:
    """Every moment worth checking, in order, and the writes the model could not follow.

    A moment is taken before each operation that may change ``/work/checkpoint.json`` (what it
    holds or what the name points to) or a file that becomes it later (a temp file renamed over
    it), halfway through each such write, at each grader call marker, and at the end.
    """
    bound = _bound_to_checkpoint(ops)
    model = _Model()
    moments: list[Moment] = []
    for op in ops:
        if op.call == "marker":
            moments.append(model.moment(op.index, "call", op))
            continue
        if model.touches_checkpoint(op) or model.touches(op, bound):
            moments.append(model.moment(op.index, "before", op))
            if op.call in _DATA_WRITES and (op.ret or 0) > 1 and op.error is None:
                moments.append(model.torn(op, (op.ret or 0) // 2, moments[-1]))
        model.apply(op)
    moments.append(model.moment(len(ops), "end", None))
    return moments, model.unfollowed
