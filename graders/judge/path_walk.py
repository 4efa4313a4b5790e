"""Resolve a path the way the kernel does, on the model of the sandbox's files.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Located", "walk", "SYSTEM_LINKS"]

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
