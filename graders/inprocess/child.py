"""Inside one forked child: the submission's loop, instrumented, killed at its crash point.

Only the crash harness uses this module (through the runner, or directly in in-process mode). The
child never decides anything: it runs the submission in a fresh working directory and writes what
happened, line by line with unbuffered ``os.write``, into files in its harness directory, so the
record survives the child's SIGKILL. The deciding process reads those files and the disk.

POSIX only (fork, SIGKILL, RLIMIT_FSIZE, SIGXFSZ).
"""

from __future__ import annotations

import gc
import io
import json
import os
import select
import signal
import sys
import time
import warnings

# Bound now, before any submission code runs, so a submission that patches ``os``, ``json`` or
# ``signal`` in the runner cannot change what the harness does.
_fork = os.fork
_kill = os.kill
_killpg = os.killpg
_getpid = os.getpid
_setpgid = os.setpgid
_waitpid = os.waitpid
_wait4 = getattr(os, "wait4", None)
_exit = os._exit
_write = os.write
_open = os.open
_read = os.read
_close = os.close
_dup2 = os.dup2
_chdir = os.chdir
_stat = os.stat
_fspath = os.fspath
_abspath = os.path.abspath
_dirname = os.path.dirname
_basename = os.path.basename
_dumps = json.dumps
_monotonic = time.monotonic
_sleep = time.sleep
_signal = signal.signal
_addaudithook = sys.addaudithook
_SIGKILL = signal.SIGKILL
_pidfd_open = getattr(os, "pidfd_open", None)
try:
    import resource

    _setrlimit = resource.setrlimit
    _getrlimit = resource.getrlimit
    _RLIMIT_FSIZE = resource.RLIMIT_FSIZE
    _RLIM_INFINITY = resource.RLIM_INFINITY
except ImportError:  # not POSIX
    resource = None

__all__ = ["CHECKPOINT", "EVENTS", "LEDGER", "STDOUT", "STDERR", "fork_child", "wait_child",
           "run_children", "summarize_exception", "Kit"]

CHECKPOINT = "checkpoint.json"
EVENTS = "events.jsonl"
LEDGER = "ledger.jsonl"
STDOUT = "stdout.txt"
STDERR = "stderr.txt"

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_MODE_WRITE = set("wax+")


def _line(fields: dict) -> bytes:
    """One JSON line; whatever the student handed us that JSON cannot hold becomes its repr."""
    try:
        text = _dumps(fields, default=repr)
    except (TypeError, ValueError):  # circular, or keys JSON cannot hold
        text = _dumps({k: v if isinstance(v, (int, str)) else repr(v) for k, v in fields.items()})
    return (text + "\n").encode("utf-8", "surrogateescape")


def summarize_exception(exc: BaseException, filenames, source_lines=None) -> dict:
    """Describe ``exc`` for a student: type, message, and the last line of *their* code it passed.

    ``filenames`` are the file names the submission's code objects carry; ``source_lines``, if
    given, maps a file name to its lines (for sources that exist only in memory).
    """
    import traceback  # only when something went wrong: it is slow to import

    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if f.filename in filenames]
    summary = {"type": type(exc).__name__, "message": str(exc)[:1000]}
    if frames and frames[-1].filename == __file__:
        summary["harness"] = "".join(traceback.format_exception(exc))[-3000:]
    if isinstance(exc, SyntaxError) and exc.filename in filenames:
        summary.update(line=exc.lineno, code=(exc.text or "").strip(), function=None)
    elif theirs:
        last = theirs[-1]
        code = last.line
        if not code and source_lines and last.filename in source_lines:
            lines = source_lines[last.filename]
            if last.lineno and 0 < last.lineno <= len(lines):
                code = lines[last.lineno - 1]
        summary.update(line=last.lineno, code=(code or "").strip(), function=last.name)
    return summary


class _Recorder:
    """The child's instrumentation: counters, the event and ledger files, the kill points."""

    def __init__(self, plan: dict, hdir: str, cwd: str) -> None:
        self.plan = plan
        self.kind = plan["kind"]
        self.index = plan.get("index")
        self.dry = plan.get("dry", False)
        self.cwd = cwd
        self.hdir = hdir
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC
        self.events_fd = _open(os.path.join(hdir, EVENTS), flags, 0o644)
        self.ledger_fd = _open(os.path.join(hdir, LEDGER), flags, 0o644)
        self.model_calls = 0
        self.tool_calls = 0
        self.saves = 0
        self.current_save = 0
        self.busy = False
        self.armed = False
        self.save_opens: list[str] = []
        self.save_renames = 0

    # -- records ---------------------------------------------------------------------------

    def event(self, _event: str, **fields) -> None:
        if self.armed:
            return  # under the lowered file-size limit our own writes would be cut off too
        fields["e"] = _event
        _write(self.events_fd, _line(fields))

    def ledger(self, **fields) -> None:
        _write(self.ledger_fd, _line(fields))

    def die(self, why: str) -> None:
        self.event("kill", why=why)
        _kill(_getpid(), _SIGKILL)

    # -- the audit hook: file operations, torn writes, kills before a rename ---------------

    def _name(self, path) -> str | None:
        try:
            path = _fspath(path)
            if isinstance(path, bytes):
                path = os.fsdecode(path)
        except TypeError:
            return None
        full = _abspath(path)
        if full == self.cwd:
            return None  # NamedTemporaryFile audits its directory first
        if _dirname(full) == self.cwd:
            return _basename(full)
        return full

    def audit(self, event: str, args: tuple) -> None:
        if self.busy:
            return
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                return
            writes = bool(flags & _WRITE_FLAGS) if isinstance(flags, int) else False
            if isinstance(mode, str) and _MODE_WRITE.intersection(mode):
                writes = True
            if writes:
                name = self._name(path)
                if name is not None:
                    self.on_open_write(name)
        elif event == "os.rename":
            src, dst = self._name(args[0]), self._name(args[1])
            self.on_rename(src, dst)
        elif event == "os.remove":
            name = self._name(args[0])
            if name is not None:
                self.event("remove", n=self.current_save, path=name)

    def on_open_write(self, name: str) -> None:
        n = self.current_save
        self.event("open_w", n=n, path=name)
        if not n:
            return
        first = not self.save_opens
        self.save_opens.append(name)
        if self.kind == "torn_write" and n == self.index and not self.armed:
            target = self.plan["tear_target"]
            if (target == "checkpoint" and name == CHECKPOINT) or (target == "first" and first):
                self.arm(name)

    def on_rename(self, src, dst) -> None:
        n = self.current_save
        self.event("rename", n=n, src=src, dst=dst)
        if not n:
            return
        at = self.save_renames
        self.save_renames += 1
        if self.kind == "killed_before_rename" and n == self.index and at == self.plan["rename_at"]:
            self.die("before_rename")

    def arm(self, name: str) -> None:
        limit = max(1, int(self.plan["tear_limit"]))
        self.event("tear", n=self.current_save, path=name, limit=limit,
                   expected=self.plan.get("tear_expected"))
        _setrlimit(_RLIMIT_FSIZE, (limit, _getrlimit(_RLIMIT_FSIZE)[1]))
        self.armed = True

    def disarm(self) -> bool:
        if not self.armed:
            return False
        _setrlimit(_RLIMIT_FSIZE, (_RLIM_INFINITY, _getrlimit(_RLIMIT_FSIZE)[1]))
        self.armed = False
        return True

    # -- wrappers around what the submission is given -------------------------------------

    def wrap_save(self, save):
        recorder = self

        def save_checkpoint(*args, **kwargs):
            recorder.saves += 1
            n = recorder.current_save = recorder.saves
            recorder.save_opens = []
            recorder.save_renames = 0
            state = args[0] if args else kwargs.get("state")
            pending = None
            try:
                pending = state.get("pendingToolUse")
            except Exception:  # noqa: BLE001 - whatever the student passed
                pending = "<unreadable>"
            recorder.event("save_start", n=n, pending=pending,
                           model_calls=recorder.model_calls, tool_calls=recorder.tool_calls)
            if recorder.kind == "torn_write" and n == recorder.index:
                if recorder.plan["tear_target"] == "start":
                    recorder.arm("")
            try:
                result = save(*args, **kwargs)
            except BaseException as exc:
                recorder.disarm()
                recorder.current_save = 0
                recorder.event("save_raised", n=n, error=type(exc).__name__)
                raise
            if recorder.disarm():
                recorder.die("tear_survived")
            recorder.current_save = 0
            fields = {}
            if recorder.dry:
                fields = recorder.snapshot(n, recorder.save_opens)
            recorder.event("save_end", n=n, **fields)
            return result

        save_checkpoint.__wrapped__ = save
        return save_checkpoint

    def snapshot(self, n: int, opened: list[str]) -> dict:
        """Copy checkpoint.json as save ``n`` left it into the harness dir (dry run only)."""
        self.busy = True
        sizes = {}
        try:
            for name in dict.fromkeys(opened):
                try:
                    sizes[name] = _stat(name if os.path.isabs(name) else
                                        os.path.join(self.cwd, name)).st_size
                except OSError:
                    sizes[name] = None
            try:
                src = _open(os.path.join(self.cwd, CHECKPOINT), os.O_RDONLY)
            except OSError:
                return {"sizes": sizes, "snapshot": False}
            dst = _open(os.path.join(self.hdir, f"snap-{n}"), os.O_WRONLY | os.O_CREAT, 0o644)
            while chunk := _read(src, 1 << 16):
                _write(dst, chunk)
            _close(src)
            _close(dst)
            return {"sizes": sizes, "snapshot": True}
        finally:
            self.busy = False

    def wrap_model(self, call_model):
        recorder = self

        def model(*args, **kwargs):
            recorder.model_calls += 1
            k = recorder.model_calls
            recorder.event("model_start", k=k, n=recorder.current_save)
            if recorder.kind == "killed_during_model_call" and k == recorder.index:
                recorder.die("model_call")
            response = call_model(*args, **kwargs)
            fields = {}
            try:
                fields["stop"] = response.get("stop_reason")
                fields["tokens"] = response["usage"]["output_tokens"]
                fields["tool"] = next((b["name"] for b in response["content"]
                                       if b.get("type") == "tool_use"), None)
            except Exception:  # noqa: BLE001 - only decoration for the timeline
                pass
            recorder.event("model_end", k=k, **fields)
            return response

        return model

    def wrap_tool(self, execute_tool):
        recorder = self

        def tool(*args, **kwargs):
            recorder.tool_calls += 1
            k = recorder.tool_calls
            name = args[0] if args else kwargs.get("name")
            tool_input = args[1] if len(args) > 1 else kwargs.get("input")
            recorder.ledger(index=k, name=name, input=tool_input)
            recorder.event("tool_start", k=k, name=name, n=recorder.current_save)
            try:
                result = execute_tool(*args, **kwargs)
            except BaseException as exc:
                recorder.ledger(index=k, error=f"{type(exc).__name__}: {exc}"[:500])
                raise
            recorder.ledger(index=k, result=result)
            if recorder.kind == "killed_during_tool" and k == recorder.index:
                recorder.die("tool")
            recorder.event("tool_end", k=k)
            return result

        return tool


class Kit:
    """A scenario's task, tools, fresh fake model and fresh fake tools, made before forking."""

    def __init__(self, scenario) -> None:
        self.task = scenario.task
        self.tools = scenario.tools  # a fresh copy: the submission may change its own
        self.model = scenario.model()
        self.executor = scenario.executor()


def _redirect_output(hdir: str) -> None:
    null = _open(os.devnull, os.O_RDONLY)
    _dup2(null, 0)
    _close(null)
    for fd, name in ((1, STDOUT), (2, STDERR)):
        out = _open(os.path.join(hdir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        _dup2(out, fd)
        _close(out)
    # New objects on the new fds: in a kernel, sys.stdout talks to Jupyter's sockets.
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True,
                                  errors="backslashreplace")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True,
                                  errors="backslashreplace")


def _child(namespace: dict, scenario, plan: dict, cwd: str, hdir: str, filenames,
           source_lines, close_fds, functions, own_group) -> None:
    """The body of a forked child. Never returns."""
    code = 3
    recorder = None
    try:
        if own_group:
            try:
                _setpgid(0, 0)
            except OSError:
                pass
        for fd in close_fds:
            try:
                _close(fd)
            except OSError:
                pass
        gc.disable()  # a short life: no collections, no copy-on-write faults they would cause
        _redirect_output(hdir)
        _chdir(cwd)
        if plan.get("base"):
            # A temp file made outside the working directory lands on its filesystem, wherever
            # the harness runs, so os.replace behaves the same in every grading environment.
            os.environ["TMPDIR"] = plan["base"]
            if "tempfile" in sys.modules:
                sys.modules["tempfile"].tempdir = None
        _signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; we want the kernel's kill
        _signal(signal.SIGINT, signal.SIG_DFL)
        recorder = _Recorder(plan, hdir, cwd)
        call_model = recorder.wrap_model(scenario.model)
        execute_tool = recorder.wrap_tool(scenario.executor)
        run_agent, save = functions or (namespace["run_agent"], namespace["save_checkpoint"])
        namespace["save_checkpoint"] = recorder.wrap_save(save)
        if recorder.dry or recorder.kind in ("torn_write", "killed_before_rename"):
            _addaudithook(recorder.audit)
        recorder.event("start", kind=plan["kind"], index=plan.get("index"))
        state = run_agent(scenario.task, scenario.tools, call_model, execute_tool)
        recorder.event("finished", returned=type(state).__name__)
        code = 0
    except BaseException as exc:  # noqa: BLE001 - everything the student's code raises
        if recorder is not None:
            recorder.disarm()
            try:
                recorder.event("raised", **summarize_exception(exc, filenames, source_lines))
            except BaseException:  # noqa: BLE001
                pass
        code = 1
    finally:
        _exit(code)


def fork_child(namespace: dict, scenario, plan: dict, cwd: str, hdir: str, *, filenames=(),
               source_lines=None, close_fds=(), functions=None, own_group=False) -> int:
    """Fork a child that runs the submission under ``plan``; return its pid.

    ``scenario`` is a :class:`Kit`: what the child hands ``run_agent``, built once in this
    process so that every child starts from its own copy (fork copies memory) of the same
    fresh fake model and fake tools.

    The child calls ``namespace["run_agent"]`` (or ``functions[0]``) with its module-global
    ``save_checkpoint`` replaced, in the child only, by a counting wrapper around
    ``namespace["save_checkpoint"]`` (or ``functions[1]``).

    With ``own_group`` the child leads its own process group, which :func:`wait_child` kills
    after it ends (in-process mode: this process's own group is a kernel's). Without it the
    child stays in the runner's group, which the harness kills when it closes.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a kernel's stream may refuse
            pass
    with warnings.catch_warnings():
        # Python 3.12+ warns on fork in a threaded process (a kernel is one); the child only
        # runs the submission and ends with os._exit, and a stray warning would land in the
        # student's cell.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = _fork()
    if pid == 0:
        _child(namespace, scenario, plan, cwd, hdir, frozenset(filenames), source_lines,
               close_fds, functions, own_group)
    if own_group:
        try:
            _setpgid(pid, pid)
        except OSError:
            pass
    return pid


def wait_child(pid: int, timeout: float) -> dict:
    """Wait for child ``pid`` at most ``timeout`` seconds; kill its process group after.

    Returns ``{"exit": code}`` or ``{"signal": number}``, plus ``"hung": True`` when the child was
    killed for running out of time, and ``"elapsed"`` in seconds.
    """
    start = _monotonic()
    reaped = _wait_status(pid, start + timeout)
    hung = reaped is None
    if hung:
        _kill_group(pid)
        reaped = _reap(pid, 0)
    status, cpu = reaped
    elapsed = _monotonic() - start
    try:  # anything the child started and left behind (its group outlives it)
        _killpg(pid, _SIGKILL)
    except OSError:
        pass
    result = {"elapsed": elapsed, "hung": hung, "cpu": cpu}
    if os.WIFSIGNALED(status):
        result["signal"] = os.WTERMSIG(status)
    else:
        result["exit"] = os.waitstatus_to_exitcode(status)
    return result


def _kill_group(pid: int) -> None:
    for kill in (_killpg, _kill):
        try:
            kill(pid, _SIGKILL)
        except OSError:
            pass


def _reap(pid: int, flags: int) -> tuple[int, float | None] | None:
    """(wait status, CPU seconds the child used), or None if WNOHANG found it running."""
    if _wait4 is not None:
        done, status, usage = _wait4(pid, flags)
        cpu = usage.ru_utime + usage.ru_stime
    else:
        done, status = _waitpid(pid, flags)
        cpu = None
    return (status, cpu) if done else None


def _wait_status(pid: int, deadline: float) -> tuple[int, float | None] | None:
    """Reap ``pid``: (wait status, CPU seconds), or None if it still runs at ``deadline``."""
    pidfd = None
    if _pidfd_open is not None:
        try:
            pidfd = _pidfd_open(pid)
        except OSError:
            pidfd = None
    if pidfd is not None:
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            while not poller.poll(max(1, int((deadline - _monotonic()) * 1000))):
                if _monotonic() >= deadline:
                    return None
        finally:
            _close(pidfd)
        return _reap(pid, 0)
    delay = 0.0002  # no pidfd (macOS): poll with a short, growing sleep
    while True:
        reaped = _reap(pid, os.WNOHANG)
        if reaped is not None:
            return reaped
        if _monotonic() >= deadline:
            return None
        _sleep(delay)
        delay = min(delay * 2, 0.01)


def run_children(start, plans, timeout: float, jobs: int = 1):
    """Run ``start(plan) -> pid`` for each plan, ``jobs`` at a time; yield ``(plan, status)``.

    ``status`` is what :func:`wait_child` returns. Children are yielded as they end.
    """
    plans = list(plans)
    if jobs <= 1 or _pidfd_open is None:
        for plan in plans:
            pid = start(plan)
            yield plan, wait_child(pid, timeout)
        return
    running: dict[int, tuple] = {}  # pidfd -> (pid, plan, started)
    poller = select.poll()
    queue = iter(plans)
    try:
        while True:
            while len(running) < jobs:
                plan = next(queue, None)
                if plan is None:
                    break
                pid = start(plan)
                pidfd = _pidfd_open(pid)
                running[pidfd] = (pid, plan, _monotonic())
                poller.register(pidfd, select.POLLIN)
            if not running:
                return
            now = _monotonic()
            first_deadline = min(t + timeout for _, _, t in running.values())
            ready = poller.poll(max(1, int((first_deadline - now) * 1000)))
            done = [fd for fd, _ in ready]
            now = _monotonic()
            done += [fd for fd, (_, _, t) in running.items()
                     if fd not in done and now >= t + timeout]
            for fd in done:
                pid, plan, started = running.pop(fd)
                poller.unregister(fd)
                _close(fd)
                status = wait_child(pid, max(0.0, started + timeout - _monotonic()))
                status["elapsed"] = _monotonic() - started
                yield plan, status
    finally:
        for fd, (pid, _plan, _t) in running.items():
            _kill_group(pid)
            try:
                _waitpid(pid, 0)
            except ChildProcessError:
                pass
            _close(fd)
