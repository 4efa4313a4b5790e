"""The child's instrumentation: counters, the event and ledger files, the kill points.

A :class:`Recorder` lives in one forked child. It wraps what the submission is given
(``save_checkpoint``, ``call_model``, ``execute_tool``) to count saves and calls and kill the child
at its crash point, and its audit hook sees every file the submission opens for writing or renames
during a save: there it tears the write (a lowered ``RLIMIT_FSIZE``) or kills the child before the
rename. Every record is one JSON line written with unbuffered ``os.write``, so it survives SIGKILL.

POSIX only (SIGKILL, RLIMIT_FSIZE).
"""

from __future__ import annotations

import json
import os
import signal

from graders.inprocess.support import CHECKPOINT, EVENTS, LEDGER

# Bound now, before any submission code runs, so a submission that patches ``os``, ``json`` or
# ``signal`` in the runner cannot change what the harness does.
_kill = os.kill
_getpid = os.getpid
_write = os.write
_open = os.open
_read = os.read
_close = os.close
_stat = os.stat
_fspath = os.fspath
_abspath = os.path.abspath
_dirname = os.path.dirname
_basename = os.path.basename
_dumps = json.dumps
_SIGKILL = signal.SIGKILL
try:
    import resource

    _setrlimit = resource.setrlimit
    _getrlimit = resource.getrlimit
    _RLIMIT_FSIZE = resource.RLIMIT_FSIZE
    _RLIM_INFINITY = resource.RLIM_INFINITY
except ImportError:  # not POSIX
    resource = None

__all__ = ["Recorder"]

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_MODE_WRITE = set("wax+")


def _line(fields: dict) -> bytes:
    """One JSON line; whatever the student handed us that JSON cannot hold becomes its repr."""
    try:
        text = _dumps(fields, default=repr)
    except (TypeError, ValueError):  # circular, or keys JSON cannot hold
        text = _dumps({k: v if isinstance(v, (int, str)) else repr(v) for k, v in fields.items()})
    return (text + "\n").encode("utf-8", "surrogateescape")


class Recorder:
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
                fields = recorder.copy_checkpoint(n, recorder.save_opens)
            recorder.event("save_end", n=n, **fields)
            return result

        save_checkpoint.__wrapped__ = save
        return save_checkpoint

    def copy_checkpoint(self, n: int, opened: list[str]) -> dict:
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
                return {"sizes": sizes, "copied": False}
            dst = _open(os.path.join(self.hdir, f"saved-{n}"), os.O_WRONLY | os.O_CREAT, 0o644)
            while chunk := _read(src, 1 << 16):
                _write(dst, chunk)
            _close(src)
            _close(dst)
            return {"sizes": sizes, "copied": True}
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
