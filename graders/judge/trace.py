"""Read a recorded system-call trace (``strace -f -yy -xx``) into file operations, in order.

Only what can change a file is kept: opens that create or truncate, writes of every kind,
truncations, renames, links, unlinks, directory and FIFO creation, syncs, seeks, ``chdir``, and the
grader's call markers (a ``write`` of a ``CKL1`` frame on the grader's socket). Each becomes an
:class:`Op` with resolved paths where strace gave them (``-yy`` prints the path behind every file
descriptor, as the traced process saw it inside its sandbox).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["Op", "parse_trace", "MARKER"]

#: The first bytes of every frame the sandboxed bootstrap writes to the grader's socket.
MARKER = b"CKL1 "

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^([a-z0-9_]+)\((.*)$", re.S)
_RESUMED = re.compile(r"^<\.\.\. ([a-z0-9_]+) resumed>(.*)$", re.S)
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)(?:<(.*)>)?(?:\s+([A-Z][A-Z0-9_]+))?[^)]*$", re.S)
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
    """

    index: int
    pid: int
    call: str
    ret: int | None
    error: str | None
    args: list = field(default_factory=list)
    ret_path: bytes | None = None
    frame: dict | None = None


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
            return {"fd": _int(token), "path": path, "token": token}
        number = _int(token)
        return token if number is None else number

    def _annotation(self) -> bytes:
        depth = 0
        j = self.i
        while j < len(self.text):
            if self.text[j] == "<":
                depth += 1
            elif self.text[j] == ">" and self.text[j - 1] != "-":  # "[8875->8874]" is inside
                depth -= 1
                if depth == 0:
                    break
            j += 1
        inner = self.text[self.i + 1:j]
        self.i = j + 1
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
    "sync", "syncfs", "sync_file_range",
})


def _hexed(text: str) -> str:
    return "".join(f"\\x{b:02x}" for b in text.encode())


#: Calls whose files are known from their descriptors' paths: kept only when a path is one of
#: the sandbox's writable places (or a socket: the grader's markers).
_FD_CALLS = frozenset({"openat", "open", "creat", "openat2", "lseek", "write", "pwrite64",
                       "writev", "pwritev", "pwritev2", "fsync", "fdatasync", "ftruncate",
                       "fallocate"})
_OPENS = frozenset({"openat", "open", "creat", "openat2"})
_MODELED_MARKS = (_hexed("/work"), _hexed("/tmp"), "UNIX", "(deleted)", "O_TMPFILE")


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
            body = f"{name}({head}{resumed.group(2)}"
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
        ret_text, ret_path, errno = result.group(1), result.group(2), result.group(3)
        ret = None if ret_text == "?" else int(ret_text)
        args = _Args(rest[:result.start()]).parse()
        op = Op(len(ops), pid, name, ret, errno if ret is not None and ret < 0 else None, args,
                _annotation_path(ret_path) if ret_path else None)
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


def _on_socket(fd: dict, inode: int | None) -> bool:
    path = fd.get("path") or b""
    if not path.startswith(b"UNIX"):
        return False
    if inode is None:
        return True
    m = re.search(rb"\[(\d+)", path)
    return bool(m) and int(m.group(1)) == inode
