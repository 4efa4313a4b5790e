"""Inside one forked child: the submission's loop, instrumented, killed at its crash point.

Only the crash harness uses this module (through the runner, or directly in in-process mode). The
child never decides anything: it runs the submission in a fresh working directory and writes what
happened, line by line with unbuffered ``os.write``, into files in its harness directory, so the
record survives the child's SIGKILL. The deciding process reads those files and the disk.

The instrumentation is :mod:`graders.inprocess.recorder`; waiting for the children and killing
them is :mod:`graders.inprocess.waiting`.

POSIX only (fork, SIGKILL, RLIMIT_FSIZE, SIGXFSZ).
"""

from __future__ import annotations

import gc
import io
import os
import signal
import sys
import warnings

from graders.inprocess import recorder as _recorder
from graders.inprocess.recorder import Recorder
from graders.inprocess.support import STDERR, STDOUT

# Bound now, before any submission code runs, so a submission that patches ``os``, ``sys`` or
# ``signal`` in the runner cannot change what the harness does.
_fork = os.fork
_setpgid = os.setpgid
_exit = os._exit
_open = os.open
_close = os.close
_dup2 = os.dup2
_chdir = os.chdir
_signal = signal.signal
_addaudithook = sys.addaudithook

__all__ = ["fork_child", "summarize_exception", "Kit"]

# The harness's own code in a child: an exception whose last frame is here is the grader's fault.
_HARNESS_FILES = frozenset({__file__, _recorder.__file__})


def summarize_exception(exc: BaseException, filenames, source_lines=None) -> dict:
    """Describe ``exc`` for a student: type, message, and the last line of *their* code it passed.

    ``filenames`` are the file names the submission's code objects carry; ``source_lines``, if
    given, maps a file name to its lines (for sources that exist only in memory).
    """
    import traceback  # only when something went wrong: it is slow to import

    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if f.filename in filenames]
    summary = {"type": type(exc).__name__, "message": str(exc)[:1000]}
    if frames and frames[-1].filename in _HARNESS_FILES:
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
        recorder = Recorder(plan, hdir, cwd)
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

    With ``own_group`` the child leads its own process group, which
    :func:`graders.inprocess.waiting.wait_child` kills after it ends (in-process mode: this
    process's own group is a kernel's). Without it the child stays in the runner's group, which
    the harness kills when it closes.
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

