"""Run a submission once, sandboxed and traced, while this process plays the model and the tools.

:func:`record` is the only place where the grading process meets the student's code, and it
meets it only through a socket: every ``call_model`` and ``execute_tool`` of any process of the
submission arrives here, is answered from the scenario's fake model and fake tools, and is logged
with ``checkpoint.json`` as it was on disk at that moment (read from outside the sandbox, never
following a link, never blocking on a FIFO, capped in size). What the submission says about
itself is never taken as a fact: the :class:`~graders.judge.recording.Recording` holds this
process's log and the trace strace wrote, nothing the submission wrote.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from graders.judge.recording import Call, Recording, Snapshot
from graders.sandbox.box import (
    TRACE_CAP,
    WORK,
    command,
    find_tools,
    observer_problem,
    sandbox_problem,
    sandbox_uid,
)

__all__ = ["record", "SandboxUnavailable", "read_safely", "DEFAULT_TIMEOUT"]

#: Seconds one run of a submission may take, loading included.
DEFAULT_TIMEOUT = 10.0
_OUTPUT_TAIL = 4000
_SNAPSHOT_CAP = 8 << 20
_FRAME_CAP = 32 << 20
_BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")


class SandboxUnavailable(RuntimeError):
    """The sandbox (or the observer) cannot run on this machine; the message says why, in a line."""


def read_safely(directory: str | Path, name: str = "checkpoint.json") -> Snapshot:
    """What ``directory/name`` holds, read without following a link or blocking on a FIFO."""
    path = os.path.join(str(directory), name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Snapshot("absent")
    except OSError as err:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return Snapshot("unreadable", detail=err.strerror or str(err))
        return Snapshot(_file_kind(mode), detail=err.strerror or str(err))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return Snapshot(_file_kind(info.st_mode))
        if info.st_size > _SNAPSHOT_CAP:
            return Snapshot("too_big", size=info.st_size)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            if sum(map(len, chunks)) > _SNAPSHOT_CAP:
                return Snapshot("too_big", size=info.st_size)
        return Snapshot("file", data=b"".join(chunks))
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISREG(mode):
        return "file"
    return "special"


def _scratch_root() -> str | None:
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > (256 << 20) and os.access(shm, os.W_OK | os.X_OK):
            return shm
    except (OSError, AttributeError):
        pass
    return None


class _Session:
    """One run: the process tree, the socket, the log."""

    def __init__(self, source: str, scenario, *, mode: str, sandbox: bool, timeout: float,
                 keep: bool) -> None:
        self.scenario = scenario
        self.mode = mode
        self.sandbox = sandbox
        self.timeout = timeout
        self.keep = keep
        self.run_dir = Path(tempfile.mkdtemp(prefix="checkpoint-lab-run-", dir=_scratch_root()))
        grader = self.run_dir / "grader"
        grader.mkdir()
        shutil.copyfile(_BOOTSTRAP, grader / "_bootstrap.py")
        (grader / "submission.py").write_text(source, encoding="utf-8")
        for path in (self.run_dir, grader, grader / "_bootstrap.py", grader / "submission.py"):
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        self.work = self.run_dir / "work"
        if not sandbox:
            self.work.mkdir()
        self.trace = self.run_dir / "trace"
        self.rec = Recording(scenario=getattr(scenario, "name", None), mode=mode,
                             sandboxed=sandbox)
        self.model = scenario.model() if scenario is not None else None
        self.tools = scenario.executor() if scenario is not None else None
        self.child_pid: int | None = None
        self.buffer = b""
        self.outputs = {"stdout": b"", "stderr": b""}

    # -- the process -----------------------------------------------------------------------

    def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        self.rec.socket_inode = os.fstat(theirs.fileno()).st_ino
        info_r, info_w = os.pipe()
        self.info_r = info_r
        tools = find_tools()
        uid = sandbox_uid()
        cmd = command(tools, run_dir=self.run_dir, trace=self.trace, fd=theirs.fileno(),
                      info_fd=info_w if self.sandbox else None, mode=self.mode,
                      sandbox=self.sandbox, uid=uid)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        self.started = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(), info_w), start_new_session=True,
                cwd=self.work if not self.sandbox else self.run_dir, env=env)
        finally:
            theirs.close()
            os.close(info_w)

    def where(self) -> Path | None:
        """The submission's working directory as this process can read it."""
        if not self.sandbox:
            return self.work
        if self.child_pid is None:
            try:
                data = b""
                while True:
                    ready, _, _ = select.select([self.info_r], [], [], 0.5)
                    if not ready:
                        break
                    chunk = os.read(self.info_r, 4096)
                    if not chunk:
                        break
                    data += chunk
                    if b"}" in data:
                        break
                self.child_pid = int(json.loads(data.decode())["child-pid"])
            except (OSError, ValueError, KeyError):
                return None
        return Path(f"/proc/{self.child_pid}/root{WORK}")

    def snapshot(self) -> Snapshot:
        where = self.where()
        if where is None:
            return Snapshot("unreadable", detail="the sandbox's files could not be reached")
        snap = read_safely(where)
        snap.listing = _listing(where)
        return snap

    # -- the conversation ------------------------------------------------------------------

    def serve(self) -> None:
        deadline = self.started + self.timeout
        streams = {self.proc.stdout.fileno(): "stdout", self.proc.stderr.fileno(): "stderr"}
        open_fds = [self.sock.fileno(), *streams]
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                self.rec.ended = "hung"
                self.rec.detail = (f"still running after {self.timeout:g} s, so it was stopped")
                return
            ready, _, _ = select.select(open_fds, [], [], left)
            for fd in ready:
                if fd in streams:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        open_fds.remove(fd)
                        continue
                    name = streams[fd]
                    self.outputs[name] = (self.outputs[name] + chunk)[-_OUTPUT_TAIL:]
                    continue
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    open_fds.remove(fd)
                    continue
                self.buffer += chunk
                if len(self.buffer) > _FRAME_CAP:
                    self.rec.protocol.append("more than 32 MiB written to the grader's socket")
                    self.rec.ended = "died"
                    self.rec.detail = "flooded the grader's channel, so it was stopped"
                    return
                if self.frames():
                    return
        if self.rec.ended is None:
            self.rec.ended = "died"

    def frames(self) -> bool:
        """Handle every complete frame in the buffer; True when the run is over."""
        while True:
            start = self.buffer.find(b"CKL1 ")
            if start < 0:
                if len(self.buffer) > 4:
                    self.rec.protocol.append("bytes that are not a grader frame")
                    self.buffer = self.buffer[-4:]
                return False
            if start > 0:
                self.rec.protocol.append("bytes that are not a grader frame")
                self.buffer = self.buffer[start:]
            end = self.buffer.find(b"\n")
            if end < 0:
                return False
            try:
                header = json.loads(self.buffer[5:end])
                length = int(header["len"])
                op = str(header["op"])
                seq = int(header["seq"])
            except (ValueError, KeyError, TypeError):
                self.rec.protocol.append("a malformed grader frame")
                self.buffer = self.buffer[end + 1:]
                continue
            if len(self.buffer) < end + 1 + length:
                return False
            body = self.buffer[end + 1:end + 1 + length]
            self.buffer = self.buffer[end + 1 + length:]
            try:
                fields = json.loads(body)
                if not isinstance(fields, dict):
                    raise ValueError
            except ValueError:
                self.rec.protocol.append("a malformed grader frame")
                continue
            if self.handle(seq, op, fields):
                return True

    def reply(self, payload: dict) -> None:
        data = json.dumps(payload).encode() + b"\n"
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def handle(self, seq: int, op: str, fields: dict) -> bool:
        rec = self.rec
        if op == "loaded":
            rec.loaded = True
            self.reply({"task": self.scenario.task, "tools": self.scenario.tools})
        elif op == "load_error":
            rec.ended = "not_loaded"
            rec.load = {k: fields.get(k) for k in ("error", "missing")}
            self.reply({})
            return True
        elif op == "described":
            rec.ended = "finished"
            rec.described = fields.get("description")
            self.reply({})
            return True
        elif op in ("model", "tool"):
            call = Call(seq=seq, op=op, index=sum(1 for c in rec.calls if c.op == op) + 1,
                        snapshot=self.snapshot())
            if op == "model":
                try:
                    response = self.model(tools=fields.get("tools"),
                                          messages=fields.get("messages"))
                    call.stop_reason = response.get("stop_reason")
                    self.reply({"response": response})
                except Exception as err:  # noqa: BLE001 - the fake model's refusal, passed on
                    call.error = f"{type(err).__name__}: {err}"
                    self.reply({"error": str(err)})
            else:
                call.name, call.input = fields.get("name"), fields.get("input")
                try:
                    call.result = self.tools(call.name, call.input)
                    self.reply({"result": call.result})
                except Exception as err:  # noqa: BLE001 - the fake tool's refusal, passed on
                    call.error = f"{type(err).__name__}: {err}"
                    self.reply({"error": str(err)})
            rec.calls.append(call)
        elif op in ("save_start", "save_end"):
            rec.markers.append({"seq": seq, "op": op, "n": fields.get("n")})
        elif op in ("finished", "raised"):
            rec.ended = op
            rec.error = fields.get("error") if op == "raised" else None
            rec.final = self.snapshot()
            self.reply({})
            return True
        else:
            rec.protocol.append(f"an unknown grader frame {op[:40]!r}")
        return False

    # -- the end -----------------------------------------------------------------------------

    def stop(self) -> None:
        # The sandbox's own pid 1 first: the kernel then ends every process in its namespace,
        # bubblewrap exits, strace sees it and exits, and each is reaped by its own parent, so
        # nothing is left behind as an orphan. The whole group only if that did not end it.
        if self.sandbox and self.proc.poll() is None:
            self.where()
            if self.child_pid is not None:
                try:
                    os.kill(self.child_pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                rest = stream.read()
            except (OSError, ValueError):
                rest = b""
            name = "stdout" if stream is self.proc.stdout else "stderr"
            self.outputs[name] = (self.outputs[name] + (rest or b""))[-_OUTPUT_TAIL:]
            stream.close()
        self.sock.close()
        os.close(self.info_r)
        rec = self.rec
        rec.elapsed = round(time.monotonic() - self.started, 6)
        rec.exit_code = self.proc.returncode
        rec.stdout_tail = self.outputs["stdout"].decode("utf-8", "replace")
        rec.stderr_tail = self.outputs["stderr"].decode("utf-8", "replace")
        try:
            rec.trace = self.trace.read_text(encoding="latin-1")
        except OSError:
            rec.trace = ""
        if self.proc.returncode == -signal.SIGXFSZ:
            rec.ended = "died"
            rec.detail = ("wrote so much that the grader could not record it all (over "
                          f"{TRACE_CAP >> 20} MB of file writes, counted four times over)")
            rec.protocol.append("a record too big to keep")
        if rec.ended == "died" and not rec.detail:
            rec.detail = (f"ended the process itself (exit status {self.proc.returncode}) "
                          "before run_agent returned")
        if not self.keep:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        else:
            rec.kept = str(self.run_dir)


def _listing(where: Path) -> dict[str, int | str]:
    files: dict[str, int | str] = {}
    try:
        with os.scandir(where) as entries:
            for i, entry in enumerate(entries):
                if i >= 50:
                    break
                if entry.name == "checkpoint.json":
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                files[entry.name] = "dir/" if stat.S_ISDIR(st.st_mode) else st.st_size
    except OSError:
        pass
    return files


def record(source: str, scenario=None, *, mode: str = "loop", sandbox: bool = True,
           timeout: float = DEFAULT_TIMEOUT, keep: bool = False) -> Recording:
    """Run ``source`` once on ``scenario`` (a fake_llm Scenario) in the sandbox, traced.

    ``mode`` is ``"loop"`` (call ``run_agent``) or ``"missing_fields"`` (only load the code and
    describe its ``MISSING_FIELDS``). With ``sandbox=False`` the code runs traced but as this
    user, unconfined: for trusted code only. Raises :class:`SandboxUnavailable` when what is
    needed is missing; never raises for anything the submission does.
    """
    problem = sandbox_problem() if sandbox else observer_problem()
    if problem:
        raise SandboxUnavailable(problem)
    session = _Session(source, scenario, mode=mode, sandbox=sandbox, timeout=timeout, keep=keep)
    try:
        session.start()
        session.serve()
    finally:
        session.stop()
    return session.rec
