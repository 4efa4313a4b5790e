"""Runs INSIDE the sandbox: load a submission and run its loop against the grader's proxies.

Standard library only; started as ``python -I -S _bootstrap.py FD SOURCE MODE``. Nothing here is
trusted: the submission shares this process and may change any of it. What it can reach is the
socket ``FD`` to the grading process, which plays the fake model and tools and decides nothing
from what this process says about itself beyond the calls it makes.

Frames on the socket: from here a header ``CKL1 {"seq", "op", "len"}\n`` written with ``write``
(the trace records it: that is how a call is placed among the file operations), then ``len``
bytes of JSON sent with ``sendmsg`` (not traced); back, one line of JSON.
"""

import json
import os
import socket
import sys
import traceback

_FD = int(sys.argv[1])
_SOURCE = sys.argv[2]
_MODE = sys.argv[3]  # "loop" or "missing_fields"
_SOCKET = socket.socket(fileno=_FD)
_seq = 0
_buffer = b""


class FakeModelError(Exception):
    """The fake model refused the call (shaped like the Messages API's 400)."""


class ToolError(Exception):
    """The fake tool refused the call."""


def _send(op, **fields):
    """One frame: a short header by ``write`` (the trace's marker), the body by ``sendmsg``."""
    global _seq
    _seq += 1
    body = json.dumps(fields).encode()
    header = json.dumps({"seq": _seq, "op": op, "len": len(body)}).encode()
    data = memoryview(b"CKL1 " + header + b"\n")
    while data:
        data = data[os.write(_FD, data):]
    view = memoryview(body)
    while view:
        view = view[_SOCKET.sendmsg([view]):]


def _receive():
    global _buffer
    while b"\n" not in _buffer:
        chunk = _SOCKET.recv(1 << 16)
        if not chunk:
            os._exit(70)
        _buffer += chunk
    line, _buffer = _buffer.split(b"\n", 1)
    return json.loads(line)


def call_model(*, tools=None, messages=None, **ignored):
    _send("model", tools=tools, messages=messages)
    reply = _receive()
    if "error" in reply:
        raise FakeModelError(reply["error"])
    return reply["response"]


def execute_tool(name, input):  # noqa: A002 - the contract's own parameter name
    _send("tool", name=name, input=input)
    reply = _receive()
    if "error" in reply:
        raise ToolError(reply["error"])
    return reply["result"]


def _where(exc):
    """(line, code) of the deepest frame in the submission's own source."""
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


def main():
    with open(_SOURCE, encoding="utf-8") as f:
        source = f.read()
    namespace = {"__name__": "submission", "__builtins__": __builtins__}
    try:
        code = compile(source, "<your answer cells>", "exec")
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
        _send("load_error", error=_error(exc))
        _receive()
        return
    if _MODE == "missing_fields":
        value = namespace.get("MISSING_FIELDS", _describe)
        description = {"defined": False} if value is _describe else _describe(value)
        _send("described", description=description)
        _receive()
        return
    missing = [n for n in ("save_checkpoint", "run_agent") if n not in namespace]
    if missing:
        _send("load_error", missing=missing)
        _receive()
        return
    save = namespace["save_checkpoint"]
    if callable(save):
        count = [0]

        def save_checkpoint(state, *args, **kwargs):
            count[0] += 1
            n = count[0]
            _send("save_start", n=n)
            try:
                return save(state, *args, **kwargs)
            finally:
                _send("save_end", n=n)

        namespace["save_checkpoint"] = save_checkpoint
    _send("loaded")
    start = _receive()
    try:
        namespace["run_agent"](start["task"], start["tools"], call_model, execute_tool)
    except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
        _send("raised", error=_error(exc, "run_agent"))
    else:
        _send("finished")
    _receive()


main()
os._exit(0)
