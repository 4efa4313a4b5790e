"""A model of the sandbox's writable files (``/work`` and ``/tmp``): nodes (inodes), the names
bound to them (a node may have several: hard links), the processes with their descriptors and
working directories, and what ``/work/checkpoint.json`` is at any point.

The operations that change it live in :mod:`graders.judge.file_operations` (names, opens,
descriptors, sizes) and :mod:`graders.judge.replay_model` (data writes, and applying any
operation); paths are resolved as the kernel does by :mod:`graders.judge.path_walk`.

Where the model cannot follow an operation that may change names (a path through a process it
cannot tell, a descriptor it never saw opened), it says so (``lost``) and from then on calls
what checkpoint.json holds unknown; where it cannot follow what a file holds (a shared writable
memory map, a splice), that file is unknown (``Node.unknown``). Either way every crash state
affected fails, with the operation named, and never passes unchecked.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from graders.judge.moments import Moment
from graders.judge.path_walk import Located, walk
from graders.judge.processes import Process, starts_of
from graders.judge.trace import Op

__all__ = ["CHECKPOINT_PATH", "ROOTS", "Node", "Description", "DiskModel", "UNFOLLOWED"]

CHECKPOINT_PATH = "/work/checkpoint.json"
ROOTS = ("/work", "/tmp")
#: How a crash state the model could not follow begins its account of checkpoint.json.
UNFOLLOWED = "is unknown: the grader could not follow one of your file operations"


class Node:
    """One file, folder, link or special file of the model (what a name or descriptor points to).

    ``links`` counts the names bound to it; ``version`` changes with every change of ``data``;
    ``unknown`` says, in words, why what it holds is unknown ("" when it is known).
    """

    __slots__ = ("kind", "data", "target", "unknown", "ident", "durable", "links", "version",
                 "_snap")

    def __init__(self, ident: int, kind: str, target: str | None = None) -> None:
        self.ident = ident  # creation order within one model: the same node in every replay
        self.kind = kind
        self.data = bytearray()
        self.target = target
        self.unknown = ""
        self.durable = b""  # what a power cut keeps: the bytes as of the last fsync
        self.links = 0
        self.version = 0
        self._snap: tuple[int, bytes] | None = None

    def changed(self) -> None:
        """Note a change of ``data``."""
        self.version += 1

    def snapshot(self) -> bytes:
        """``data`` as bytes (one object per version: moments that share a state share it)."""
        if self._snap is None or self._snap[0] != self.version:
            self._snap = (self.version, bytes(self.data))
        return self._snap[1]


@dataclass
class Description:
    """An open file description: the node, the offset, whether writes append, and whether each
    write is durable when it returns (``sync``: ``"data"`` for ``O_DSYNC``, ``"all"`` for
    ``O_SYNC``, ``""`` otherwise)."""

    node: Node
    offset: int = 0
    append: bool = False
    sync: str = ""


class DiskModel:
    """The files, the names bound to them, each process's working directory and descriptors.

    ``ops``, when given, is the whole run the model will be fed, read first for who started
    whom (a child's first calls come before its parent's ``clone`` returns).
    """

    def __init__(self, ops: list[Op] | None = None) -> None:
        self._created = itertools.count(1)
        self.paths: dict[str, Node] = {}
        for root in ROOTS:
            self.bind(root, self.node("dir"))
        self.starts = starts_of(ops) if ops else {}
        self.inside = {s.inside: pid for pid, s in self.starts.items() if s.inside is not None}
        self.procs: dict[int, Process] = {}
        self.last_cwd = "/work"
        self.unfollowed: list[Op] = []
        self.lost: str | None = None

    def node(self, kind: str, target: str | None = None) -> Node:
        """A new node, numbered in this model's creation order (no state shared across threads)."""
        return Node(next(self._created), kind, target)

    # -- processes -------------------------------------------------------------------------

    def process(self, pid: int, _seen: frozenset = frozenset()) -> Process:
        """Process ``pid``, made from its parent as it is now the first time it is seen."""
        proc = self.procs.get(pid)
        if proc is None:
            start = self.starts.get(pid)
            if start is not None and start.parent not in _seen | {pid}:
                proc = self.process(start.parent, _seen | {pid}).started(start.flags)
            else:
                proc = Process(fs=[self.last_cwd])
            self.procs[pid] = proc
        return proc

    def cwd_of(self, pid: int) -> str:
        """The working directory of process ``pid``."""
        return self.process(pid).cwd

    def set_cwd(self, pid: int, path: str) -> None:
        """Process ``pid`` (and the threads sharing its working directory) now work in ``path``."""
        self.process(pid).cwd = path
        self.last_cwd = path

    # -- paths -----------------------------------------------------------------------------

    def locate(self, pid: int, base, path, *, follow_last: bool = False) -> Located:
        """Where ``path`` leads for ``pid``, relative to ``base`` (a directory descriptor
        argument) or the working directory (see :func:`graders.judge.path_walk.walk`)."""
        return walk(self, pid, base, path, follow_last)

    def absolute(self, pid: int, base, path: bytes | str, *, follow_last: bool = False) -> str:
        """``path`` as an absolute path ("" when the model cannot tell where it leads)."""
        return self.locate(pid, base, path, follow_last=follow_last).path or ""

    @staticmethod
    def modeled(path: str) -> bool:
        """Whether ``path`` lies in one of the places the model follows (``ROOTS``)."""
        return any(path == r or path.startswith(r + "/") for r in ROOTS)

    @staticmethod
    def across(a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` lie on the model's two filesystems (``/work``, ``/tmp``): a
        rename or link between them fails with EXDEV in the model, in every tier, whatever the
        grading machine's own folders allowed."""
        roots = {r for path in (a, b) for r in ROOTS if path == r or path.startswith(r + "/")}
        return len(roots) == 2

    def name_of(self, node: Node) -> str | None:
        """A name of ``node`` (folders have one), or None."""
        if node.links == 0:
            return None
        return next((p for p, n in self.paths.items() if n is node), None)

    def bind(self, path: str, node: Node) -> None:
        """Make ``path`` a name of ``node`` (the node it named before loses that name)."""
        old = self.paths.get(path)
        if old is node:
            return
        if old is not None:
            old.links -= 1
        self.paths[path] = node
        node.links += 1

    def unbind(self, path: str) -> Node | None:
        """Remove the name ``path``; the node it named (which lives on while it is open)."""
        node = self.paths.pop(path, None)
        if node is not None:
            node.links -= 1
        return node

    def _subtree(self, path: str) -> list[str]:
        node = self.paths.get(path)
        if node is None or node.kind != "dir":
            return []
        return [p for p in self.paths if p.startswith(path + "/")]

    def move(self, old: str, new: str) -> None:
        """Rename ``old`` (and everything under it) to ``new``. Two names of one node: nothing
        happens (POSIX: the rename succeeds and both names stay)."""
        node = self.paths.get(old)
        if node is None or self.paths.get(new) is node:
            return
        for path in self._subtree(new):
            self.unbind(path)
        moved = [(p, self.unbind(p)) for p in self._subtree(old)]
        self.unbind(old)
        self.bind(new, node)
        for path, child in moved:
            self.bind(new + path[len(old):], child)

    def exchange(self, a: str, b: str) -> None:
        """Swap what ``a`` and ``b`` name (``renameat2(RENAME_EXCHANGE)``), folders whole."""
        if a not in self.paths or b not in self.paths:
            return
        under_a = [(p[len(a):], self.unbind(p)) for p in self._subtree(a)]
        under_b = [(p[len(b):], self.unbind(p)) for p in self._subtree(b)]
        node_a, node_b = self.unbind(a), self.unbind(b)
        self.bind(a, node_b)
        self.bind(b, node_a)
        for rest, child in under_b:
            self.bind(a + rest, child)
        for rest, child in under_a:
            self.bind(b + rest, child)

    def lose(self, words: str) -> None:
        """The model could not follow an operation that may change names: from now on what
        checkpoint.json is, is unknown (``words`` name the operation, for the student)."""
        if self.lost is None:
            self.lost = words

    # -- descriptors -----------------------------------------------------------------------

    def desc(self, pid: int, arg) -> Description | None:
        """The open description a traced descriptor argument (``{"fd", "path"}``) refers to.

        The process's own table decides while strace's path for the descriptor agrees with it
        (or says nothing); a descriptor the model never saw opened on a file it knows gets a
        description of its own, at the file's end."""
        if not isinstance(arg, dict) or arg.get("fd") is None:
            return None
        fd, raw = arg["fd"], arg.get("path") or b""
        files = self.process(pid).files
        found = files.get(fd)
        if not raw or (found is not None and self._agrees(found.node, raw, arg)):
            return found
        path = raw.decode("utf-8", "surrogateescape")
        node = None if arg.get("deleted") or not self.modeled(path) else self.paths.get(path)
        if node is None:
            files.pop(fd, None)  # the number now names something the model does not hold
            return None
        # a process whose start the trace did not show (strace without --pidns-translation)
        # inherited its descriptors with their numbers: share that description
        desc = next((other.files[fd] for other in self.procs.values()
                     if other.files.get(fd) is not None and other.files[fd].node is node), None)
        if desc is None:
            desc = Description(node, offset=len(node.data))
        files[fd] = desc
        return desc

    def _agrees(self, node: Node, raw: bytes, arg: dict) -> bool:
        if arg.get("deleted"):  # the name it was opened by is gone: only the table knows it
            return True
        return self.paths.get(raw.decode("utf-8", "surrogateescape")) is node

    # -- file contents -----------------------------------------------------------------------

    def write_at(self, desc: Description, data: bytes, offset: int | None, *,
                 unknown: str = "") -> None:
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
        node.changed()
        if unknown and not node.unknown:
            node.unknown = unknown
        if offset is None:
            desc.offset = start + len(data)

    @staticmethod
    def resize(node: Node, length: int) -> None:
        """Cut ``node`` to ``length`` bytes, or extend it with zero bytes."""
        if length < len(node.data):
            del node.data[length:]
        else:
            node.data.extend(b"\0" * (length - len(node.data)))
        node.changed()

    # -- the checkpoint --------------------------------------------------------------------

    def checkpoint(self) -> tuple[str, bytes | None]:
        """What ``/work/checkpoint.json`` is now (its kind) and, for a file, its bytes."""
        if self.lost is not None:
            return "unknown", None
        node = self.paths.get(CHECKPOINT_PATH)
        if node is None:
            return "absent", None
        if node.kind != "file":
            return node.kind, None
        if node.unknown:
            return "unknown", None
        return "file", node.snapshot()

    def unknown_words(self) -> str | None:
        """Why checkpoint.json is unknown now, in words (None when it is known)."""
        node = self.paths.get(CHECKPOINT_PATH)
        why = self.lost or (node.unknown if node is not None and node.kind == "file" else "")
        return f"{UNFOLLOWED} ({why})" if why else None

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
        return Moment(position, how, op, kind, data, files, elsewhere,
                      unfollowed=self.unknown_words() if kind == "unknown" else None)
