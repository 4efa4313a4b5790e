"""Record one run of a submission inside this process: the in-process recorder.

:func:`record_in_process` does what :func:`graders.sandbox.record` does, without a sandbox, a
tracer, a second process, fork, signals or ``resource``: it loads the submission in a namespace
of its own, calls ``run_agent`` with the grader's ``call_model`` and ``execute_tool`` (served
from the scenario's fake model and tools, as the grading process serves them), and records every
file operation as the OS call it is (:mod:`graders.inprocess.patching`). The result is the same
:class:`~graders.judge.recording.Recording` the judge reads from a sandboxed run, with its
operations in ``ops``; the judge builds every crash and power-cut state from it by replay.

Pure Python: it runs wherever Python 3.11 runs (Linux, macOS, Windows, Pyodide). Where threads
exist the submission runs in a thread of its own, stopped when its time is up; where they do not
(Pyodide) it runs in the caller's, stopped at its next file operation or call once its time is
up. It trusts the submission: a self-check, never a grade.
"""

from __future__ import annotations

import builtins
import json
import os
import threading
import time
import traceback

from graders.inprocess.patching import Output, recording
from graders.inprocess.run_state import ProcessExit, RunState, Stop
from graders.inprocess.scratch import TMP, WORK, Scratch
from graders.inprocess.support import scratch_dir
from graders.judge.recording import Reading, Recording
from graders.recording.calls import CallServer
from graders.recording.leftovers import put_back
from graders.recording.readings import listing

try:  # the channel's CallServer.handle takes a Frame where framing has one
    from graders.recording.framing import Frame as _Frame
except ImportError:
    _Frame = None

__all__ = ["record_in_process", "FakeModelError", "ToolError", "DEFAULT_TIMEOUT"]

#: Seconds one run may take, loading included (as in the sandbox).
DEFAULT_TIMEOUT = 10.0
_FILENAME = "<your answer cells>"
#: One recorded run at a time in a process: the recorder's patches and the working directory
#: are the process's.
_ONE_AT_A_TIME = threading.Lock()
_READ_CAP = 8 << 20
_open, _read, _close, _lstat, _scandir = os.open, os.read, os.close, os.lstat, os.scandir
_chdir, _getcwd = os.chdir, os.getcwd


class FakeModelError(Exception):
    """The fake model refused the call (shaped like the Messages API's 400)."""


class ToolError(Exception):
    """The fake tool refused the call."""


class _Replies:
    """Where the :class:`~graders.recording.calls.CallServer` puts its answers (its socket)."""

    def __init__(self) -> None:
        self.last: dict = {}

    def sendall(self, data: bytes) -> None:
        self.last = json.loads(data)


class _Run(RunState):
    """One recorded run: the grader's side of the conversation and the submission's."""

    def __init__(self, scenario, mode: str, scratch: Scratch, seed: list | None = None,
                 fill_at: tuple[str, int] | None = None) -> None:
        super().__init__(scratch)
        self.mode = mode
        self.seed, self.fill_at = seed, fill_at
        self.rec = Recording(scenario=getattr(scenario, "name", None), mode=mode,
                             sandboxed=False)
        self.replies = _Replies()
        self.server = CallServer(scenario, self.rec, self.replies, self.reading)
        self.seq = 0
        self.stdout, self.stderr = Output(), Output()

    # -- the grader's side -----------------------------------------------------------------

    def reading(self) -> Reading:
        """``checkpoint.json`` as it is in the run's working folder now, and its neighbours."""
        reading = _read_checkpoint(self.scratch.work)
        reading.listing = listing(self.scratch.work, _scandir)
        return reading

    def send(self, op: str, **fields) -> dict:
        """One frame to the grader: its marker in the log, then the grader's answer."""
        body = json.dumps(fields)  # as the socket would carry it (raises for what JSON cannot)
        with self.log.lock:
            self.check()
            self.seq += 1
            self.log.marker(self.seq, op, fields)
            self.local.grader = True
            try:
                self._handle(op, json.loads(body))
                if op in ("model", "tool") and self.fill_at is not None:
                    self._fill_disk()
            finally:
                self.local.grader = False
            return self.replies.last

    def _fill_disk(self) -> None:
        """Once call ``fill_at`` is served, before its answer: the disk fills, as the sandbox
        fills it (a file-size limit of half checkpoint.json's size at that moment)."""
        call = self.rec.calls[-1] if self.rec.calls else None
        if call is None or (call.op, call.index) != tuple(self.fill_at):
            return
        reading = call.reading
        size = reading.size if reading is not None and reading.size is not None else len(
            (reading.data if reading is not None else None) or b"")
        self.fsize_limit = max(1, size // 2)
        self.rec.filled = {"seq": call.seq, "limit": self.fsize_limit, "processes": 1,
                           "error": ""}

    def _put_back(self) -> None:
        """A restart: the files a crash left put back before the code is loaded, by the
        function the sandbox's bootstrap runs, with the same file operations, recorded."""
        put_back(self.seed or [], {WORK: WORK, TMP: TMP}, os.getpid())

    def _handle(self, op: str, fields: dict) -> bool:
        if _Frame is not None:
            return self.server.handle(_Frame(self.seq, {"seq": self.seq, "op": op}, op, fields))
        return self.server.handle(self.seq, op, fields)

    # -- the submission's side (what the sandbox's bootstrap does) ---------------------------

    def main(self, source: str) -> None:
        self.threads.add(threading.get_ident())
        try:
            self._load_and_run(source)
        except Stop:
            pass
        except ProcessExit as exit_:
            self.rec.ended = "died"
            self.rec.exit_code = exit_.status
            self.rec.detail = (f"ended the process itself (exit status {exit_.status}) "
                               "before run_agent returned")

    def _load_and_run(self, source: str) -> None:
        if self.seed is not None:
            self._put_back()
        namespace = {"__name__": "submission", "__builtins__": builtins}
        try:
            exec(compile(source, _FILENAME, "exec"), namespace)
        except (Stop, ProcessExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
            self.send("load_error", error=_error(exc))
            return
        if self.mode == "missing_fields":
            self.send("described", description=_describe(namespace))
            return
        missing = [n for n in ("save_checkpoint", "run_agent") if n not in namespace]
        if missing:
            self.send("load_error", missing=missing)
            return
        if callable(namespace["save_checkpoint"]):
            namespace["save_checkpoint"] = self._marked(namespace["save_checkpoint"])
        start = self.send("loaded")
        try:
            namespace["run_agent"](start["task"], start["tools"], self.call_model,
                                   self.execute_tool)
        except (Stop, ProcessExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - reported, whatever it is
            self.send("raised", error=_error(exc, "run_agent"))
        else:
            self.send("finished")

    def _marked(self, save):
        count = [0]
        run = self

        def save_checkpoint(state, *args, **kwargs):
            count[0] += 1
            n = count[0]
            run.send("save_start", n=n)
            try:
                return save(state, *args, **kwargs)
            finally:
                run.send("save_end", n=n)

        return save_checkpoint

    def call_model(self, *, tools=None, messages=None, **ignored):
        reply = self.send("model", tools=tools, messages=messages)
        if "error" in reply:
            raise FakeModelError(reply["error"])
        return reply["response"]

    def execute_tool(self, name, input):  # noqa: A002 - the contract's own parameter name
        reply = self.send("tool", name=name, input=input)
        if "error" in reply:
            raise ToolError(reply["error"])
        return reply["result"]

    # -- running it --------------------------------------------------------------------------

    def execute(self, source: str, timeout: float) -> None:
        """Run ``source`` (in a thread of its own where threads exist) for ``timeout`` s."""
        started = time.monotonic()
        worker = threading.Thread(target=self.main, args=(source,), daemon=True,
                                  name="checkpoint-lab-recorded-run")
        try:
            worker.start()
        except RuntimeError:  # no threads here (Pyodide): stop at the next call once late
            self.deadline = started + timeout
            self.main(source)
        else:
            try:
                worker.join(timeout)
            finally:
                if worker.is_alive():
                    self._stop(worker)
        if self.expired or worker.is_alive():
            self.rec.ended = "hung"
            self.rec.detail = f"still running after {timeout:g} s, so it was stopped"
        elif self.rec.ended is None:
            self.rec.ended = "died"
        self.rec.elapsed = round(time.monotonic() - started, 6)

    def _stop(self, worker: threading.Thread) -> None:
        """End a run past its time: its next recorded call raises, and so does its next line
        of Python where the interpreter lets one thread stop another (CPython)."""
        self.expired = True
        try:
            import ctypes

            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident),
                                                       ctypes.py_object(Stop))
        except (ImportError, AttributeError):
            pass
        worker.join(1.0)


def _where(exc) -> tuple:
    line = code = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == _FILENAME:
            line, code = frame.lineno, (frame.line or "").strip()[:120]
    return line, code


def _error(exc, function=None) -> dict:
    line, code = _where(exc)
    return {"type": type(exc).__name__, "message": str(exc)[:500], "line": line, "code": code,
            "function": function}


def _describe(namespace: dict) -> dict:
    if "MISSING_FIELDS" not in namespace:
        return {"defined": False}
    value = namespace["MISSING_FIELDS"]
    description = {"defined": True, "type": type(value).__name__, "repr": repr(value)[:300]}
    if isinstance(value, (set, frozenset, list, tuple)):
        description["items"] = [{"str": item} if isinstance(item, str) else
                                {"repr": repr(item)[:100]} for item in value]
    return description


def _read_checkpoint(folder: str) -> Reading:
    path = os.path.join(folder, "checkpoint.json")
    try:
        info = _lstat(path)
    except FileNotFoundError:
        return Reading("absent")
    except OSError as err:
        return Reading("unreadable", detail=err.strerror or str(err))
    kind = _kind(info.st_mode)
    if kind != "file":
        return Reading(kind)
    if info.st_size > _READ_CAP:
        return Reading("too_big", size=info.st_size)
    try:
        fd = _open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError as err:
        return Reading("unreadable", detail=err.strerror or str(err))
    try:
        chunks = []
        while chunk := _read(fd, 1 << 20):
            chunks.append(chunk)
        return Reading("file", data=b"".join(chunks))
    finally:
        _close(fd)


def _kind(mode: int) -> str:
    import stat

    for test, name in ((stat.S_ISLNK, "symlink"), (stat.S_ISFIFO, "fifo"),
                       (stat.S_ISDIR, "directory"), (stat.S_ISREG, "file")):
        if test(mode):
            return name
    return "special"


def record_in_process(source: str, scenario=None, *, mode: str = "loop",
                      timeout: float = DEFAULT_TIMEOUT, seed: list | None = None,
                      fill_at: tuple[str, int] | None = None) -> Recording:
    """Run ``source`` once on ``scenario`` in this process, recorded; the judge's Recording.

    ``mode`` is ``"loop"`` (call ``run_agent``) or ``"missing_fields"`` (only load the code and
    describe its ``MISSING_FIELDS``). As :func:`graders.sandbox.record`: ``seed`` makes the run a
    restart (the files of a crash state, ``{"path", "kind", "data", "target"}`` with paths under
    ``/work`` and ``/tmp`` and data in base64, are put back before the code is loaded), and
    ``fill_at`` (``("tool", 2)``) fills the disk once that call is served (``rec.filled``).
    Never raises for anything the submission does.
    """
    with _ONE_AT_A_TIME:
        scratch = Scratch(scratch_dir())
        run = _Run(scenario, mode, scratch, seed, fill_at)
        here = _getcwd()
        try:
            _chdir(scratch.work)
            with recording(run, run.stdout, run.stderr):
                run.execute(source, timeout)
        finally:
            _chdir(here)
            scratch.remove()
    rec = run.rec
    rec.ops = run.log.ops
    rec.stdout_tail, rec.stderr_tail = run.stdout.text, run.stderr.text
    rec.exit_code = 0 if rec.ended in ("finished", "raised", "not_loaded") else rec.exit_code
    return rec
