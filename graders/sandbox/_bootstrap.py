"""Runs INSIDE the sandbox: load a submission and run its loop against the grader's proxies.

Standard library only; started as ``python -I -S _bootstrap.py FD SOURCE MODE``. Nothing here is
trusted: the submission shares this process and may change any of it. What it can reach is the
socket ``FD`` to the grading process, which plays the fake model and tools and decides nothing
from what this process says about itself beyond the calls it makes.

Frames on the socket: from here a header ``CKL1 {"op", "len", "sha256", "pid", "k"}\\n`` written
with one ``write`` (the trace records it: that is how a call is placed among the file
operations), then ``len`` bytes of JSON sent with ``sendmsg`` (not traced; ``sha256`` is their
digest, so the traced header stands for this very body); back, one line of JSON. The grading
process numbers the frames itself, in the order it receives them, and accepts one only where the
trace shows this header written; ``pid`` and ``k`` (this process's count) only keep headers apart.

``call_model`` and ``execute_tool`` may be called from any thread and from forked children: one
frame and its reply cross the socket at a time, under a lock of this process's threads and an
``flock`` of this file shared by its processes (a forked child opens its own, so the two
exclude each other). MODE ``restart`` first puts back the files of a crash state, listed in
``seed.json`` beside SOURCE (with ``leftovers.py``, also beside it), then runs as ``loop``.
"""

import _socket
import _thread
import fcntl
import json
import os
import sys

# What the process imports before the submission's code is part of every run's cost (each
# module's files are opened under the observer): the C modules themselves, not ``socket``
# (hundreds of enum constants), ``hashlib`` (OpenSSL's library) or ``threading`` (its lock is
# ``_thread``'s); ``traceback`` only on error.
try:
    from _sha2 import sha256 as _sha256  # Python 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256

# The bubblewrap tier starts this Python with no LANG, so that the programs before it (prlimit,
# setpriv) load no locale (a hundred traced calls each run), and with -X utf8=0: Python then
# takes C.UTF-8 for LC_CTYPE itself and says so in LC_CTYPE, which is put back here as LANG,
# the environment the submission and its children see in every tier.
if "LANG" not in os.environ and os.environ.get("LC_CTYPE") == "C.UTF-8":
    os.environ["LANG"] = "C.UTF-8"
    del os.environ["LC_CTYPE"]

_FD = int(sys.argv[1])
_SOURCE = sys.argv[2]
_MODE = sys.argv[3]  # "loop", "restart" or "missing_fields"
_SOCKET = _socket.socket(fileno=_FD)


class FakeModelError(Exception):
    """The fake model refused the call (shaped like the Messages API's 400)."""


class ToolError(Exception):
    """The fake tool refused the call."""


class _Channel:
    """One process's side of the socket: a lock for its threads, an flock for its processes."""

    def __init__(self):
        self.lock = _thread.allocate_lock()
        self.fd = os.open(__file__, os.O_RDONLY | os.O_CLOEXEC)
        self.buffer = b""
        self.count = 0


_channel = _Channel()


def _after_fork():
    # the parent's locks may be held by one of its threads: the child gets its own, and its own
    # open file (an flock belongs to the open file, which a fork shares)
    global _channel
    inherited = _channel.fd
    _channel = _Channel()
    os.close(inherited)


os.register_at_fork(after_in_child=_after_fork)


def _exchange(op, fields, reply=True):
    """Send one frame; with ``reply``, wait for its answer (one line of JSON) and return it."""
    body = json.dumps(fields).encode()
    channel = _channel
    with channel.lock:
        fcntl.flock(channel.fd, fcntl.LOCK_EX)
        try:
            channel.count += 1
            header = json.dumps({"op": op, "len": len(body),
                                 "sha256": _sha256(body).hexdigest(),
                                 "pid": os.getpid(), "k": channel.count}).encode()
            data = memoryview(b"CKL1 " + header + b"\n")
            while data:
                data = data[os.write(_FD, data):]
            view = memoryview(body)
            while view:
                view = view[_SOCKET.sendmsg([view]):]
            return _receive(channel) if reply else None
        finally:
            fcntl.flock(channel.fd, fcntl.LOCK_UN)


def _receive(channel):
    while b"\n" not in channel.buffer:
        chunk = _SOCKET.recv(1 << 16)
        if not chunk:
            os._exit(70)
        channel.buffer += chunk
    line, channel.buffer = channel.buffer.split(b"\n", 1)
    return json.loads(line)


def call_model(*, tools=None, messages=None, **ignored):
    reply = _exchange("model", {"tools": tools, "messages": messages})
    if "error" in reply:
        raise FakeModelError(reply["error"])
    return reply["response"]


def execute_tool(name, input):  # noqa: A002 - the contract's own parameter name
    reply = _exchange("tool", {"name": name, "input": input})
    if "error" in reply:
        raise ToolError(reply["error"])
    return reply["result"]


def _where(exc):
    """(line, code) of the deepest frame in the submission's own source."""
    import traceback

    line = code = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<your answer cells>":
            line, code = frame.lineno, (frame.line or "").strip()[:120]
    return line, code


def _error(exc, function=None):
    line, code = _where(exc)
    return {"type": type(exc).__name__, "message": str(exc)[:500], "line": line, "code": code,
            "function": function}


def _describe(value):
    description = {"defined": True, "type": type(value).__name__, "repr": repr(value)[:300]}
    if isinstance(value, (set, frozenset, list, tuple)):
        description["items"] = [{"str": item} if isinstance(item, str) else
                                {"repr": repr(item)[:100]} for item in value]
    return description


def _seed():
    """Put back the files a crash left (``seed.json`` beside SOURCE) before the submission is
    loaded, as a restarted process finds them, with ``leftovers.py`` beside this file (the
    in-process recorder's own ``graders/recording/leftovers.py``, copied here by the sandbox)."""
    here = os.path.dirname(_SOURCE)
    with open(os.path.join(here, "seed.json"), encoding="utf-8") as f:
        entries = json.load(f)
    shared = {"__name__": "leftovers"}
    with open(os.path.join(here, "leftovers.py"), encoding="utf-8") as f:
        exec(compile(f.read(), "leftovers.py", "exec"), shared)
    roots = {"/work": os.getcwd(), "/tmp": os.environ.get("TMPDIR") or "/tmp"}
    shared["put_back"](entries, roots, os.getpid())


def main():
    if _MODE == "restart":
        _seed()
    with open(_SOURCE, encoding="utf-8") as f:
        source = f.read()
    namespace = {"__name__": "submission", "__builtins__": __builtins__}
    try:
        code = compile(source, "<your answer cells>", "exec")
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
        _exchange("load_error", {"error": _error(exc)})
        return
    if _MODE == "missing_fields":
        value = namespace.get("MISSING_FIELDS", _describe)
        description = {"defined": False} if value is _describe else _describe(value)
        _exchange("described", {"description": description})
        return
    missing = [n for n in ("save_checkpoint", "run_agent") if n not in namespace]
    if missing:
        _exchange("load_error", {"missing": missing})
        return
    save = namespace["save_checkpoint"]
    if callable(save):
        count = [0]
        count_lock = _thread.allocate_lock()

        def save_checkpoint(state, *args, **kwargs):
            with count_lock:
                count[0] += 1
                n = count[0]
            _exchange("save_start", {"n": n}, reply=False)
            try:
                return save(state, *args, **kwargs)
            finally:
                _exchange("save_end", {"n": n}, reply=False)

        namespace["save_checkpoint"] = save_checkpoint
    start = _exchange("loaded", {})
    try:
        namespace["run_agent"](start["task"], start["tools"], call_model, execute_tool)
    except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
        _exchange("raised", {"error": _error(exc, "run_agent")})
    else:
        _exchange("finished", {})


main()
os._exit(0)
