"""A model of the sandbox's writable files (``/work`` and ``/tmp``): nodes, the names bound to
them, open descriptors, and what ``/work/checkpoint.json`` is at any point.

The operations that change it live in :mod:`graders.judge.file_operations` (names, opens,
sizes) and :mod:`graders.judge.replay_model` (data writes, and applying any operation).
"""

from __future__ import annotations

import itertools
import posixpath
import re
from dataclasses import dataclass

from graders.judge.moments import Moment
from graders.judge.trace import Op

__all__ = ["CHECKPOINT_PATH", "ROOTS", "Node", "Description", "DiskModel"]

CHECKPOINT_PATH = "/work/checkpoint.json"
ROOTS = ("/work", "/tmp")


class Node:
    """One file, folder, link or special file of the model (what a name or descriptor points to)."""

    __slots__ = ("kind", "data", "target", "unknown", "ident", "durable")

    def __init__(self, ident: int, kind: str, target: str | None = None) -> None:
        self.ident = ident  # creation order within one model: the same node in every replay
        self.kind = kind
        self.data = bytearray()
        self.target = target
        self.unknown = False
        self.durable = b""  # what a power cut keeps: the bytes as of the last fsync


@dataclass
class Description:
    """An open file description: the node, the offset, and whether writes append."""

    node: Node
    offset: int = 0
    append: bool = False


class DiskModel:
    """The files, the names bound to them, each process's working directory and descriptors."""

    def __init__(self) -> None:
        self._created = itertools.count(1)
        self.paths: dict[str, Node] = {root: self.node("dir") for root in ROOTS}
        self.descs: dict[tuple[int, int], Description] = {}
        self.cwd: dict[int, str] = {}
        self.last_cwd = "/work"
        self.unfollowed: list[Op] = []

    def node(self, kind: str, target: str | None = None) -> Node:
        """A new node, numbered in this model's creation order (no state shared across threads)."""
        return Node(next(self._created), kind, target)

    # -- paths -----------------------------------------------------------------------------

    def cwd_of(self, pid: int) -> str:
        """The working directory of process ``pid`` (the last one seen, if it never said)."""
        return self.cwd.get(pid, self.last_cwd)

    def absolute(self, pid: int, base, path: bytes | str, *, follow_last: bool = False) -> str:
        """``path`` as an absolute path, relative to ``base`` (a directory descriptor) or the
        process's working directory, through ``/proc/self`` and the model's symbolic links."""
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
        """Whether ``path`` lies in one of the places the model follows (``ROOTS``)."""
        return any(path == r or path.startswith(r + "/") for r in ROOTS)

    def move(self, old: str, new: str) -> None:
        """Rename ``old`` (and everything under it) to ``new``."""
        node = self.paths.pop(old, None)
        if node is None:
            return
        moved = {p: n for p, n in self.paths.items() if p.startswith(old + "/")}
        for p in moved:
            del self.paths[p]
        self.paths[new] = node
        for p, n in moved.items():
            self.paths[new + p[len(old):]] = n

    # -- descriptors -----------------------------------------------------------------------

    def desc(self, pid: int, arg) -> Description | None:
        """The open description a traced descriptor argument (``{"fd", "path"}``) refers to."""
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
                desc = Description(node, offset=len(node.data), append=False)
                self.descs[(pid, fd)] = desc
                return desc
        return None

    # -- file contents -----------------------------------------------------------------------

    def write_at(self, desc: Description, data: bytes, offset: int | None, *,
                 unknown=False) -> None:
        """Write ``data`` through ``desc``, at ``offset`` or at the description's own offset."""
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

    @staticmethod
    def resize(node: Node, length: int) -> None:
        """Cut ``node`` to ``length`` bytes, or extend it with zero bytes."""
        if length < len(node.data):
            del node.data[length:]
        else:
            node.data.extend(b"\0" * (length - len(node.data)))

    # -- the checkpoint --------------------------------------------------------------------

    def checkpoint(self) -> tuple[str, bytes | None]:
        """What ``/work/checkpoint.json`` is now (its kind) and, for a file, its bytes."""
        node = self.paths.get(CHECKPOINT_PATH)
        if node is None:
            return "absent", None
        if node.kind != "file":
            return node.kind, None
        if node.unknown:
            return "unknown", None
        return "file", bytes(node.data)

    def listing(self) -> tuple[dict, list]:
        """The other entries of ``/work`` (name -> size) and other files named checkpoint.json."""
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
        """The moment a kill now would leave."""
        kind, data = self.checkpoint()
        files, elsewhere = self.listing()
        return Moment(position, how, op, kind, data, files, elsewhere)
