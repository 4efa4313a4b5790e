"""A model of the sandbox's writable files (``/work`` and ``/tmp``): nodes (inodes), the names
bound to them (a node may have several: hard links), the processes with their descriptors and
working directories, and what ``/work/checkpoint.json`` is at any point.

The operations that change it live in :mod:`graders.judge.file_operations` (names, opens,
descriptors, sizes) and :mod:`graders.judge.replay` (data writes, and applying any
operation); paths are resolved as the kernel does by :mod:`graders.judge.disk_model`.

Where the model cannot follow an operation that may change names (a path through a process it
cannot tell, a descriptor it never saw opened), it says so (``lost``) and from then on calls
what checkpoint.json holds unknown; where it cannot follow what a file holds (a shared writable
memory map, a splice), that file is unknown (``Node.unknown``). Either way every crash state
affected fails, with the operation named, and never passes unchecked.

Resolve a path the way the kernel does, on the model of the sandbox's files.

One component at a time from the root, the process's working directory or a directory
descriptor: ``.`` and ``..`` (after a symbolic link, ``..`` is the parent of where the link
led), the model's symbolic links (and the system's ``/bin``, ``/lib``, ``/dev/fd``...), and
``/proc``: ``/proc/self``, ``/proc/thread-self`` and ``/proc/<pid>`` (a pid as the sandbox numbers
it) with their ``cwd``, ``root`` and ``fd/N``. ``/proc/<pid>/fd/N`` leads into directory N, or,
as the last component of a call that follows it, to the open file itself (named or not: an
``O_TMPFILE`` file has no name).

Where the kernel's answer depends on what the model does not know (a pid it cannot map, a
descriptor it never saw opened, a loop of links), the result says so in words, and the caller
treats the operation as one the grader could not follow.

Processes as the kernel keeps them for file operations: each one's table of open descriptors
and its working directory, and what a new process or thread shares with the one that started it.

A descriptor names an open file description (the file, the offset, append and sync modes);
``dup``, ``dup2``, ``dup3`` and ``fcntl(F_DUPFD)`` make another descriptor for the SAME
description (one offset for both), and ``close`` of one leaves the others. A process started by
``fork``/``clone`` gets a copy of its parent's table (the copies share the descriptions) and of
its working directory; a thread (``CLONE_FILES``, ``CLONE_FS``) shares both.

strace prints a child's first calls before its parent's ``clone`` returns, so who started whom
is read from the whole trace first (:func:`starts_of`), and a process is made the first time it
is seen, from its parent as it was then.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from graders.judge.crash_points import Moment
from graders.judge.trace import STARTS, Op

__all__ = ["CHECKPOINT_PATH", "ROOTS", "Node", "Description", "DiskModel", "UNFOLLOWED", "Located",
           "walk", "SYSTEM_LINKS", "Start", "Process", "starts_of"]


# -- path walk -------------------------------------------------------------------------------------


#: Symbolic links of the sandbox's read-only system that lead somewhere a path may go on from.
SYSTEM_LINKS = {"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64", "/sbin": "usr/sbin",
                "/lib32": "usr/lib32", "/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
                "/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2"}
_MAX_LINKS = 40  # the kernel's own limit of symbolic links in one lookup (ELOOP)
_PID, _FD = "\0pid", "\0fd"  # inside /proc/<pid> and /proc/<pid>/fd: "\0pid:<host pid>"


@dataclass
class Located:
    """Where a path leads: ``path`` (absolute, every link resolved but perhaps the last) and the
    ``node`` there, if any; for ``/proc/<pid>/fd/N`` of a file, ``node`` is that open file and
    ``path`` one of its names (None when it has none). ``problem`` says why the model cannot tell
    (then ``path`` and ``node`` are None)."""

    path: str | None
    node: Any = None  # a graders.judge.disk_model.Node
    problem: str | None = None


def _text(path) -> str:
    return path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else str(path)


def _start(model, pid: int, base, text: str) -> str | Located:
    if text.startswith("/"):
        return "/"
    if isinstance(base, dict) and base.get("token") != "AT_FDCWD" and base.get("fd") not in (
            None, -100):
        if base.get("path") and not base.get("deleted"):
            return _text(base["path"])
        desc = model.process(pid).files.get(base["fd"])
        where = model.name_of(desc.node) if desc is not None else None
        if where is None:
            return Located(None, problem=f"a path relative to descriptor {base['fd']}, which the "
                           "grader never saw opened on a folder")
        return where
    if isinstance(base, dict) and base.get("path"):
        return _text(base["path"])
    return model.process(pid).cwd


def walk(model, pid: int, base, path, follow_last: bool = False) -> Located:
    """Resolve ``path`` for process ``pid`` of ``model`` (a
    :class:`graders.judge.disk_model.DiskModel`), relative to ``base`` (a directory descriptor
    argument, ``{"fd", "path"}``, or None for the working directory)."""
    if not isinstance(path, (bytes, str)):
        return Located(None)
    text = _text(path)
    start = _start(model, pid, base, text)
    if isinstance(start, Located):
        return start
    cur = "/"  # a base folder is walked again: it may be /proc/<pid>/fd/N or /proc/self/cwd
    parts = [p for p in f"{start}/{text}".split("/") if p not in ("", ".")]
    hops = 0
    while parts:
        name = parts.pop(0)
        last = not parts
        if name == "..":
            cur = _parent(cur)
            continue
        if cur.startswith("\0"):
            step = _in_proc(model, pid, cur, name, last, follow_last)
            if isinstance(step, Located):
                return step
            cur = step
            continue
        if cur == "/proc" and (name in ("self", "thread-self") or name.isdigit()):
            host = pid if not name.isdigit() else model.inside.get(int(name))
            if host is None:
                return Located(None, problem=f"a path through /proc/{name}, a process the grader "
                               "cannot tell")
            cur = f"{_PID}:{host}"
            continue
        nxt = "/" + name if cur == "/" else f"{cur}/{name}"
        node = model.paths.get(nxt)
        target = node.target if node is not None and node.kind == "symlink" else (
            SYSTEM_LINKS.get(nxt) if node is None else None)
        if target is not None and (not last or follow_last):
            hops += 1
            if hops > _MAX_LINKS:
                return Located(None, problem=f"a path through a loop of symbolic links ({text})")
            parts = [p for p in target.split("/") if p not in ("", ".")] + parts
            cur = "/" if target.startswith("/") else cur
            continue
        cur = nxt
    if cur.startswith("\0"):
        return Located(None, problem=f"a path that ends inside /proc ({text})")
    return Located(cur, model.paths.get(cur))


def _parent(cur: str) -> str:
    if cur.startswith(_FD):
        return _PID + cur[len(_FD):]
    if cur.startswith(_PID):
        return "/proc"
    return cur.rsplit("/", 1)[0] or "/"


def _in_proc(model, pid: int, cur: str, name: str, last: bool,
             follow_last: bool) -> str | Located:
    """One step inside ``/proc/<pid>`` (``cur`` is ``"\\0pid:<host>"`` or ``"\\0fd:<host>"``)."""
    host = int(cur.rsplit(":", 1)[1])
    if cur.startswith(_PID):
        if name == "cwd":
            return model.process(host).cwd
        if name == "root":
            return "/"
        if name == "fd":
            return f"{_FD}:{host}"
        return Located(f"/proc/{host}/{name}")  # /proc/self/status...: nothing the model holds
    fd = int(name) if name.isdigit() else None
    desc = model.process(host).files.get(fd) if fd is not None else None
    if desc is None:
        return Located(None, problem=f"a path through /proc/.../fd/{name}, a descriptor the "
                       "grader never saw opened")
    where = model.name_of(desc.node)
    if desc.node.kind == "dir":
        if where is None:
            return Located(None, problem=f"a path through descriptor {name}, a folder with no "
                           "name")
        return where
    if last and follow_last:
        return Located(where, desc.node)
    return Located(f"/proc/{host}/fd/{name}")  # the link itself, or a file used as a folder


# -- processes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    """How a process or thread was started: by ``parent``, with ``flags``, known inside its
    sandbox as pid ``inside``."""

    parent: int
    flags: str
    inside: int | None


@dataclass
class Process:
    """One process (or thread): its descriptor table and its working directory.

    ``files`` maps a descriptor number to its open file description
    (:class:`graders.judge.disk_model.Description`); ``fs`` holds one item, the working
    directory, in a list that the threads sharing it share.
    """

    files: dict = field(default_factory=dict)
    fs: list = field(default_factory=lambda: ["/work"])

    @property
    def cwd(self) -> str:
        """The working directory."""
        return self.fs[0]

    @cwd.setter
    def cwd(self, path: str) -> None:
        self.fs[0] = path

    def started(self, flags: str) -> Process:
        """The process or thread this one starts with ``flags``."""
        files = self.files if "CLONE_FILES" in flags else dict(self.files)
        fs = self.fs if "CLONE_FS" in flags else [self.fs[0]]
        return Process(files, fs)


def starts_of(ops: list[Op]) -> dict[int, Start]:
    """Every process started in ``ops``: its pid (as ``Op.pid`` numbers it) -> how."""
    found: dict[int, Start] = {}
    for op in ops:
        if op.call in STARTS and op.error is None and op.ret is not None and op.ret > 0:
            flags, inside = (op.args + ["", None])[:2] if isinstance(op.args, list) else ("", None)
            found.setdefault(op.ret, Start(op.pid, str(flags or ""), inside))
    return found


# -- disk model ------------------------------------------------------------------------------------


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
                 "_contents")

    def __init__(self, ident: int, kind: str, target: str | None = None) -> None:
        self.ident = ident  # creation order within one model: the same node in every replay
        self.kind = kind
        self.data = bytearray()
        self.target = target
        self.unknown = ""
        self.durable = b""  # what a power cut keeps: the bytes as of the last fsync
        self.links = 0
        self.version = 0
        self._contents: tuple[int, bytes] | None = None

    def changed(self) -> None:
        """Note a change of ``data``."""
        self.version += 1

    def contents(self) -> bytes:
        """``data`` as bytes (one object per version: moments that share a state share it)."""
        if self._contents is None or self._contents[0] != self.version:
            self._contents = (self.version, bytes(self.data))
        return self._contents[1]


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

    def set_cwd(self, pid: int, path: str) -> None:
        """Process ``pid`` (and the threads sharing its working directory) now work in ``path``."""
        self.process(pid).cwd = path
        self.last_cwd = path

    # -- paths -----------------------------------------------------------------------------

    def locate(self, pid: int, base, path, *, follow_last: bool = False) -> Located:
        """Where ``path`` leads for ``pid``, relative to ``base`` (a directory descriptor
        argument) or the working directory (see :func:`graders.judge.disk_model.walk`)."""
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
        return "file", node.contents()

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
