"""Read a recorded system-call trace (``strace -f -yy -xx --pidns-translation``) into file
operations, in order.

Only what can change a file, or what a file operation later depends on, is kept: opens, writes
of every kind, truncations, renames, links, unlinks, directory and FIFO creation, syncs, seeks,
``chdir``, descriptors duplicated and closed, processes and threads started, shared writable
memory maps, and the grader's call markers (a ``write`` of a ``CKL1`` frame on the grader's
socket). Each becomes an :class:`Op` with resolved paths where strace gave them (``-yy`` prints
the path behind every file descriptor, as the traced process saw it inside its sandbox).

The layout of ``Op.args``, which any other observer that fills ``Recording.ops`` must follow
(the in-process recorder does): strings and paths are ``bytes`` exactly as passed; numbers are
``int``; flag sets and symbolic constants are ``str`` as strace prints them (``"O_WRONLY|O_CREAT"``,
``"AT_FDCWD"``, ``"RENAME_EXCHANGE"``, ``"F_DUPFD_CLOEXEC"``; ``0`` for no flags is the int ``0``);
a file descriptor is ``{"fd": n, "path": b"/work/x"}``, with ``"deleted": True`` when the kernel
shows the file as deleted (an unlinked or ``O_TMPFILE`` file: the path is then the kernel's name
for it, such as ``b"/work/#2"``, without strace's ``(deleted)``), and ``"token": "AT_FDCWD"`` for
the working directory (its path is the process's working directory). ``Op.ret_path`` (and
``Op.ret_deleted``) describe the descriptor a call returns the same way. Per call:

- ``openat(dirfd, path, flags[, mode])``, ``open(path, flags[, mode])``, ``creat(path, mode)``,
  ``openat2(dirfd, path, {"struct": {"flags": ...}}, size)``: ``ret`` the new fd, ``ret_path``
  the file it opened (``O_TMPFILE``: the unnamed file, ``ret_deleted`` True).
- ``write(fd, data, count)``, ``pwrite64(fd, data, count, offset)``, ``writev(fd, {"list":
  [{"struct": {"iov_base": data, "iov_len": n}}, ...]}, iovcnt)``, ``pwritev``/``pwritev2`` (the
  same, then ``offset``): ``ret`` the bytes written; ``sendfile(out_fd, in_fd, {"list": [off],
  "before": [off]} or 0, count)``, ``copy_file_range(fd_in, off_in, fd_out, off_out, len,
  flags)``, ``splice(...)``.
- ``dup(fd)``: ``ret`` the new fd; ``dup2(fd, newfd)``, ``dup3(fd, newfd, flags)``; ``fcntl(fd,
  cmd, arg)``: kept for every ``cmd``, ``ret`` the new fd for ``"F_DUPFD"``/``"F_DUPFD_CLOEXEC"``,
  ``arg`` the flag set for ``"F_SETFL"``; ``close(fd)``.
- ``clone``, ``clone3``, ``fork``, ``vfork``: ``args`` are ``[flags, pid_inside]``: the ``CLONE_*``
  flags as one string (``""`` for ``fork``, ``"CLONE_VM|CLONE_VFORK"`` for ``vfork``) and the
  child's pid as the traced processes number it inside their sandbox (None when unknown);
  ``ret`` is the child's pid as ``Op.pid`` numbers processes (strace's own numbering).
- ``mmap(addr, length, prot, flags, fd, offset)``; ``io_submit(ctx, nr, iocbs)``.
- ``rename(old, new)``, ``renameat(olddirfd, old, newdirfd, new)``, ``renameat2(..., flags)``,
  ``link(old, new)``, ``linkat(olddirfd, old, newdirfd, new, flags)`` (``old`` is ``b""`` with
  ``"AT_EMPTY_PATH"``), ``symlink(target, path)``, ``symlinkat(target, dirfd, path)``,
  ``unlink(path)``, ``unlinkat(dirfd, path, flags)``, ``mkdir(path, mode)``, ``mkdirat(dirfd,
  path, mode)``, ``rmdir(path)``, ``mknod(path, mode, dev)``, ``mknodat(dirfd, path, mode, dev)``.
- ``ftruncate(fd, length)``, ``truncate(path, length)``, ``fallocate(fd, mode, offset, len)``,
  ``lseek(fd, offset, whence)`` (``ret`` the new offset), ``chdir(path)``, ``fchdir(fd)``.
- ``fsync(fd)``, ``fdatasync(fd)``, ``sync_file_range(fd, offset, nbytes, flags)``, ``sync()``,
  ``syncfs(fd)``.

Which trace marker is which call: the grading process's numbers put on the trace's markers.

The grading process numbers every frame it receives, 1, 2, 3, ... in arrival order
(``Recording.frames``, each with the header the submission wrote); the trace shows each header a
process of the submission wrote on the grader's socket (a marker). A frame is accepted only where
the trace shows that very header, in the same order: the header carries the digest of the
frame's body, so its marker stands for that call and no other. A frame with no marker (sent
where the observer does not look) or a marker with no frame is the submission's failure: the
grader cannot place that call among its file operations.

A recording whose observer numbered the markers itself (``Recording.ops``, the in-process
recorder) is taken as it is; one with no frames at all (written by hand, in tests) keeps the
numbers its markers carry.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from graders.judge.recording import Recording

__all__ = ["Op", "parse_trace", "MARKER", "STARTS", "IncompleteRecording", "number_markers",
           "frame_words"]


# -- trace -----------------------------------------------------------------------------------------


#: The first bytes of every frame the sandboxed bootstrap writes to the grader's socket.
MARKER = b"CKL1 "

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^([a-z0-9_]+)\((.*)$", re.S)
_RESUMED = re.compile(r"^<\.\.\. ([a-z0-9_]+) resumed>(.*)$", re.S)
_PADDED_RESULT = re.compile(r"^\)\s+=\s+")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)(?:<(.*)>(\(deleted\))?)?(?:\s+([A-Z][A-Z0-9_]+))?"
                     r"[^)]*$", re.S)
#: strace's note of a pid in its own numbering: ``= 3 /* 19009 in strace's PID NS */``
_HOST_PID = re.compile(r"/\* (\d+) in strace's PID NS \*/\s*$")
_DELETED = "(deleted)"
_HEX = re.compile(r"(?:\\x[0-9a-f]{2})+")


@dataclass
class Op:
    """One recorded operation.

    Attributes:
        index: its place in the trace (0, 1, 2, ...).
        pid: the process (as the host numbers it).
        call: the system call's name (``"write"``, ``"renameat2"``, ...), or ``"marker"``.
        ret: what it returned (a byte count, an fd, 0), or None when unknown.
        error: the errno name when it failed (``"EXDEV"``), else None.
        args: the decoded arguments: strings are ``bytes``, fds are ``{"fd": n, "path": ...}``.
        ret_path: the path behind a returned file descriptor (``openat``), if any.
        frame: for a marker, the JSON header of the grader frame (``{"seq", "op", ...}``).
        ret_deleted: whether the file behind the returned descriptor has no name (``O_TMPFILE``,
            or already unlinked).
    """

    index: int
    pid: int
    call: str
    ret: int | None
    error: str | None
    args: list = field(default_factory=list)
    ret_path: bytes | None = None
    frame: dict | None = None
    ret_deleted: bool = False


def _unhex(text: str) -> bytes:
    out = bytearray()
    i = 0
    n = len(text)
    while i < n:
        m = _HEX.match(text, i)
        if m:
            out += bytes.fromhex(m.group(0).replace("\\x", ""))
            i = m.end()
        else:
            out += text[i].encode("latin-1", "replace")
            i += 1
    return bytes(out)


class _Args:
    """A small tokenizer for strace's argument syntax (strings are all hex with ``-xx``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def parse(self) -> list:
        items = []
        while self.i < len(self.text):
            self._skip()
            if self.i >= len(self.text):
                break
            items.append(self._value())
            self._skip()
            if self.i < len(self.text) and self.text[self.i] == ",":
                self.i += 1
        return items

    def _skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \n":
            self.i += 1

    def _string(self) -> bytes:
        j = self.text.find('"', self.i + 1)  # with -xx every byte is \xNN: no quote inside
        if j < 0:
            j = len(self.text)
        inner = self.text[self.i + 1:j]
        try:
            value = bytes.fromhex(inner.replace("\\x", ""))
        except ValueError:
            value = _unhex(inner)
        self.i = j + 1
        if self.text.startswith("...", self.i):
            self.i += 3
        return value

    def _bracketed(self, open_: str, close: str):
        depth = 0
        j = self.i
        while j < len(self.text):
            c = self.text[j]
            if c == '"':
                j += 1
                while j < len(self.text) and self.text[j] != '"':
                    j += 1
            elif c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = self.text[self.i + 1:j]
        self.i = j + 1
        return inner

    def _value(self):
        c = self.text[self.i]
        if c == '"':
            return self._string()
        if c == "[":
            inner = self._bracketed("[", "]")
            rest = self.text[self.i:]
            if rest.startswith(" => ["):  # sendfile's "[0] => [12]"
                self.i += 4
                after = self._bracketed("[", "]")
                return {"list": _Args(after).parse(), "before": _Args(inner).parse()}
            return {"list": _Args(inner).parse()}
        if c == "{":
            inner = self._bracketed("{", "}")
            return {"struct": _struct(inner)}
        j = self.i
        while j < len(self.text) and self.text[j] not in ",<":
            j += 1
        token = self.text[self.i:j].strip()
        self.i = j
        if self.i < len(self.text) and self.text[self.i] == "<":
            path = self._annotation()
            fd = {"fd": _int(token), "path": path, "token": token}
            if self.text.startswith(_DELETED, self.i):  # "3</work/#2>(deleted)"
                self.i += len(_DELETED)
                fd["deleted"] = True
            return fd
        number = _int(token)
        return token if number is None else number

    def _annotation(self) -> bytes:
        # from one ">" to the next (str.find, not a loop over characters: these are long with
        # -xx), counting the "<" between; the ">" of "[8875->8874]" closes nothing
        text = self.text
        depth = 1
        j = self.i + 1
        while True:
            close = text.find(">", j)
            if close < 0:
                close = len(text)
                break
            depth += text.count("<", j, close)
            j = close + 1
            if text[close - 1] != "-":
                depth -= 1
                if depth == 0:
                    break
        inner = text[self.i + 1:close]
        self.i = close + 1
        return _annotation_path(inner)


def _annotation_path(inner: str) -> bytes:
    # "/dev/null<char 1:3>" -> "/dev/null"; hex strings decoded
    cut = inner.find("<")
    if cut >= 0:
        inner = inner[:cut]
    return _unhex(inner)


def _struct(inner: str) -> dict:
    out = {}
    for key, value in re.findall(r'(\w+)=("(?:[^"]*)"|[^,]+)', inner):
        out[key] = _unhex(value[1:-1]) if value.startswith('"') else value.strip()
    return out


def _int(token: str) -> int | None:
    try:
        return int(token, 0)
    except ValueError:
        return None


_KEEP = frozenset({
    "open", "openat", "openat2", "creat", "write", "pwrite64", "writev", "pwritev", "pwritev2",
    "sendfile", "copy_file_range", "ftruncate", "truncate", "fallocate", "rename", "renameat",
    "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat", "mkdir",
    "mkdirat", "rmdir", "mknod", "mknodat", "fsync", "fdatasync", "lseek", "chdir", "fchdir",
    "sync", "syncfs", "sync_file_range", "splice", "dup", "dup2", "dup3", "fcntl", "close",
    "clone", "clone3", "fork", "vfork", "mmap", "io_submit", "memfd_create",
})
#: The calls that start a process or a thread.
STARTS = frozenset({"clone", "clone3", "fork", "vfork"})


def _hexed(text: str) -> str:
    return "".join(f"\\x{b:02x}" for b in text.encode())


#: Calls whose files are known from their descriptors' paths: kept only when a path is one of
#: the sandbox's writable places (or a socket: the grader's markers).
_FD_CALLS = frozenset({"openat", "open", "creat", "openat2", "lseek", "write", "pwrite64",
                       "writev", "pwritev", "pwritev2", "fsync", "fdatasync", "ftruncate",
                       "fallocate", "dup", "dup2", "dup3", "fcntl", "close", "mmap"})
_OPENS = frozenset({"openat", "open", "creat", "openat2"})
_MODELED_MARKS = (_hexed("/work"), _hexed("/tmp"), _hexed("/memfd:"), "UNIX", "(deleted)",
                  "O_TMPFILE")


def _frame(args: list) -> dict | None:
    data = args[1] if len(args) > 1 and isinstance(args[1], bytes) else b""
    if not data.startswith(MARKER):
        return None
    end = data.find(b"\n")
    try:
        return json.loads(data[len(MARKER):end if end >= 0 else None])
    except ValueError:
        return None


def parse_trace(text: str, socket_inode: int | None = None) -> list[Op]:
    """The file operations (and grader call markers) of a trace, in the order they completed.

    ``socket_inode`` is the inode of the sandbox's end of the grader's socket: only writes on it
    are call markers. Lines this parser does not understand are skipped.
    """
    pending: dict[int, tuple[str, str]] = {}
    ops: list[Op] = []
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        pid, body = int(m.group(1)), m.group(2)
        if body.startswith("+++") or body.startswith("---"):
            continue
        resumed = _RESUMED.match(body)
        if resumed:
            if pid not in pending:
                continue
            name, head = pending.pop(pid)
            # strace pads a resumed call's result into a column: ")          = 5<...>"
            body = f"{name}({head}{_PADDED_RESULT.sub(') = ', resumed.group(2), count=1)}"
        elif body.endswith("<unfinished ...>"):
            call = _CALL.match(body)
            if call:
                pending[pid] = (call.group(1), call.group(2)[: -len("<unfinished ...>")].rstrip())
            continue
        call = _CALL.match(body)
        if not call or call.group(1) not in _KEEP:
            continue
        name, rest = call.group(1), call.group(2)
        if name in _FD_CALLS:
            where = (rest[rest.rfind(") = "):] if name in _OPENS
                     else rest[:rest.find(">") + 1])
            if not any(mark in where for mark in _MODELED_MARKS):
                continue  # a file of the system (Python's own modules, libraries): not modeled
        result = _RESULT.search(rest)
        if not result:
            continue
        ret_text, ret_path, errno = result.group(1), result.group(2), result.group(4)
        ret = None if ret_text == "?" else int(ret_text)
        if name in STARTS:
            args = _started(name, rest, ret)
            host = _HOST_PID.search(rest)
            ret = int(host.group(1)) if host and ret is not None and ret > 0 else ret
        else:
            args = _Args(rest[:result.start()]).parse()
        op = Op(len(ops), pid, name, ret, errno if ret is not None and ret < 0 else None, args,
                _annotation_path(ret_path) if ret_path else None,
                ret_deleted=result.group(3) is not None)
        if name == "write" and args and isinstance(args[0], dict):
            frame = _frame(args)
            if frame is not None and _on_socket(args[0], socket_inode):
                op.call, op.frame = "marker", frame
            elif str(args[0].get("path", b"")).startswith(("b'UNIX", "b'pipe", "b'TCP")):
                continue
        ops.append(op)
    for i, op in enumerate(ops):
        op.index = i
    return ops


def _started(name: str, rest: str, ret: int | None) -> list:
    """``[flags, pid_inside]`` of a call that starts a process or thread (see the docstring)."""
    flags = re.search(r"flags=([A-Z0-9_|]+)", rest)
    text = flags.group(1) if flags else {"vfork": "CLONE_VM|CLONE_VFORK"}.get(name, "")
    inside = ret if ret is not None and ret > 0 else None
    if inside is not None and not _HOST_PID.search(rest) and "CLONE_NEWPID" in text:
        inside = 1  # the first process of a new pid namespace
    return [text, inside]


def _on_socket(fd: dict, inode: int | None) -> bool:
    path = fd.get("path") or b""
    if not path.startswith(b"UNIX"):
        return False
    if inode is None:
        return True
    m = re.search(rb"\[(\d+)", path)
    return bool(m) and int(m.group(1)) == inode


# -- call markers ----------------------------------------------------------------------------------


class IncompleteRecording(RuntimeError):
    """The grader lost part of a recording (a fault of the grading machine, never the
    submission's): the run is recorded again, and reported as a grader fault if it happens
    twice."""


def frame_words(rec: Recording, seq: int) -> str:
    """Frame ``seq`` in words: ``"tool call 2 (list_tickets)"``, ``"the start of save 3"``."""
    call = next((c for c in rec.calls if c.seq == seq), None)
    if call is not None:
        name = f" ({call.name})" if call.op == "tool" and isinstance(call.name, str) else ""
        return f"{call.op} call {call.index}{name}"
    frame = next((f for f in rec.frames if f["seq"] == seq), {})
    marker = next((m for m in rec.markers if m["seq"] == seq), None)
    if marker is not None:
        edge = "start" if marker["op"] == "save_start" else "end"
        return f"the {edge} of save {marker.get('n')}"
    return {"loaded": "the message that your code was loaded",
            "finished": "the message that run_agent returned",
            "raised": "the message that run_agent raised"}.get(frame.get("op"), "a frame")


def number_markers(rec: Recording, ops: list[Op]) -> tuple[list[Op], list[str]]:
    """``ops`` with each call marker numbered as the grading process numbered its frame, and
    what was wrong (the submission's doing, in words); markers with no frame are left out."""
    if rec.ops is not None:
        return ops, _unplaced(rec, ops)
    if not rec.frames:
        return ops, _legacy(rec, ops)
    saves = {m["seq"]: m.get("n") for m in rec.markers}
    markers = [op for op in ops if op.call == "marker"]
    where: dict[str, list[int]] = {}
    for j, op in enumerate(markers):
        where.setdefault(_key(op.frame), []).append(j)
    matched: dict[int, dict] = {}
    unmatched_frames: list[int] = []
    i = 0  # markers before i are matched or passed over: the order must be the same
    for frame in rec.frames:
        places = where.get(_key(frame["header"]), [])
        k = bisect.bisect_left(places, i)
        j = next((places[n] for n in range(k, len(places)) if _whole(markers[places[n]])), None)
        if j is None:
            unmatched_frames.append(frame["seq"])
            continue
        mark = {"seq": frame["seq"], "op": frame["op"]}
        if frame["seq"] in saves:
            mark["n"] = saves[frame["seq"]]
        matched[id(markers[j])] = mark
        i = j + 1
    # markers after the last frame matched are frames the grader never read (the run was over,
    # or stopped): nothing was served for them, nothing is placed by them
    unmatched_markers = i - len(matched)
    kept: list[Op] = []
    for op in ops:
        if op.call == "marker":
            if id(op) not in matched:
                continue
            op.frame = matched[id(op)]
        op.index = len(kept)
        kept.append(op)
    problems = []
    if unmatched_frames:
        problems.append(
            f"the grader received {frame_words(rec, unmatched_frames[0])}"
            + (f" and {len(unmatched_frames) - 1} more frame(s)" if len(unmatched_frames) > 1
               else "")
            + " without the record of your code's system calls showing it sent")
    if unmatched_markers:
        problems.append(f"the record of your code's system calls shows {unmatched_markers} "
                        "frame(s) written to the grader's channel that never arrived whole")
    if problems and rec.trace_lost:
        raise IncompleteRecording(f"the trace is incomplete: {rec.trace_lost}")
    return kept, problems


def _key(header) -> str:
    return json.dumps(header, sort_keys=True, default=repr)


def _whole(op: Op) -> bool:
    """Whether marker ``op`` wrote its whole header line (a frame's header is one write)."""
    data = op.args[1] if len(op.args) > 1 and isinstance(op.args[1], bytes) else b""
    end = data.find(b"\n")
    return end >= 0 and op.ret is not None and op.ret > end


def _unplaced(rec: Recording, ops: list[Op]) -> list[str]:
    """Calls the recorder's own markers do not place (its markers carry trusted numbers)."""
    placed = {(op.frame or {}).get("seq") for op in ops if op.call == "marker"}
    missing = [c for c in rec.calls if c.seq not in placed]
    if missing:
        return [f"the record holds no marker of {frame_words(rec, missing[0].seq)}"]
    return []


def _legacy(rec: Recording, ops: list[Op]) -> list[str]:
    """A recording with no frames: its markers' own numbers (hand-written recordings)."""
    placed = {(op.frame or {}).get("seq") for op in ops if op.call == "marker"}
    missing = [c for c in rec.calls if c.seq not in placed]
    if missing and not rec.protocol:
        raise IncompleteRecording(
            f"the trace holds no record of {len(missing)} of the {len(rec.calls)} calls the "
            "grader served (is the grading machine's temporary space full?)")
    if missing:
        return [f"the trace holds no record of {len(missing)} of the calls the grader served, "
                "so the order of your file operations around them is unknown"]
    return []
