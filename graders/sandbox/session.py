"""One sandboxed run's lifecycle: its files, its process tree, the serving loop, the ending.

:class:`Session` makes the run's directory (the bootstrap and the submission, readable by the
sandbox's user), starts strace over bubblewrap over the bootstrap with one end of a socket, serves
its frames until the run is over, out of time or over budget, then ends every process it started
and fills in the :class:`~graders.judge.recording.Recording`. Two kinds of run beside the plain
one: a restart (:meth:`Session.seed`: the folder holds a crash state's files before the code is
loaded) and a full disk (:meth:`Session.fill_disk_at`: writes start failing at one call).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import graders.recording.leftovers as leftovers
import graders.sandbox.box as box
import graders.sandbox.filters as filters
import graders.sandbox.uid_budget as uid_budget
import graders.sandbox.uid_tier as uid_tier
import graders.sandbox.uid_walls as uid_walls
import graders.sandbox.uids as uids
from graders.judge.recording import Reading, Recording
from graders.recording import run_folders
from graders.recording.calls import CallServer
from graders.recording.framing import FrameReader
from graders.recording.readings import listing, read_safely
from graders.sandbox.box import TMP, TRACE_CAP, WORK, command, cpu_limit, find_tools
from graders.sandbox.fill_disk import limit_file_size

__all__ = ["Session", "TRACE_BUDGET"]

_OUTPUT_TAIL = 4000
#: Bytes of trace one run may leave the grading process (every byte written, four times over, as
#: hex; an honest run leaves under 10 MB): more is the submission's failure, stopped as over budget.
TRACE_BUDGET = 24 << 20
_BOOTSTRAP = Path(__file__).with_name("_bootstrap.py")
_LEFTOVERS = Path(leftovers.__file__)


class Session:
    """One run: the process tree, the socket, the log."""

    def __init__(self, source: str, scenario, *, mode: str, sandbox: bool, timeout: float,
                 keep: bool) -> None:
        self.scenario = scenario
        self.mode = mode
        self.sandbox = sandbox
        self.timeout = timeout
        self.keep = keep
        chosen = box.tier() if sandbox else None
        self.tier = chosen if isinstance(chosen, box.Tier) else None
        self.uid_tier = self.tier is not None and self.tier.name == "uid"
        # 0700 (mkdtemp's own mode): no other user reaches the submission or its trace
        root = self.tier.work_root if self.uid_tier else box.scratch_root()
        self.folder = run_folders.make("run", root)  # held: a sweep never takes it from a live run
        self.run_dir = self.folder.path
        grader = self.run_dir / "grader"
        grader.mkdir()
        shutil.copyfile(_BOOTSTRAP, grader / "_bootstrap.py")
        (grader / "submission.py").write_text(source, encoding="utf-8")
        for path in (grader, grader / "_bootstrap.py", grader / "submission.py"):
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        self.work = self.run_dir / "work"
        self.tmp: Path | None = None
        self.tmp_parent: Path | None = None
        self.tmp_folder: run_folders.RunFolder | None = None
        if not sandbox:
            self.work.mkdir()
        self.trace = self.run_dir / "trace"
        self.rec = Recording(scenario=getattr(scenario, "name", None), mode=mode,
                             sandboxed=sandbox)
        self.rec.tier = self.tier.name if self.tier else "none"
        self.calls = CallServer(scenario, self.rec, None, self.reading)
        self.frames = FrameReader(self.rec.protocol)
        self.child_pid: int | None = None
        self.outputs = {"stdout": b"", "stderr": b""}
        self.held = self.proc = self.sock = self.info_r = self.watcher = None
        self.reserved = TRACE_BUDGET + (8 << 20) if self.uid_tier else 0

    # -- the process -----------------------------------------------------------------------

    def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = self.calls.sock = ours
        self.rec.socket_inode = os.fstat(theirs.fileno()).st_ino
        info_r, info_w = os.pipe()
        self.info_r = info_r
        tools = find_tools()
        if self.sandbox and os.geteuid() == 0:
            self.held = uids.reserve()
        uid = self.held.uid if self.held else os.geteuid()
        observer = uid if self.uid_tier and self.tier.observer_uid else os.geteuid()
        self.trace = uid_tier.new_trace(self.run_dir, observer, self.reserved)
        extra, env, cwd = self._tier_setup(uid)
        cmd = command(tools, run_dir=self.run_dir, trace=self.trace, fd=theirs.fileno(),
                      info_fd=info_w if self.sandbox else None, mode=self.mode,
                      sandbox=self.sandbox, uid=uid, chosen=self.tier,
                      cpu=cpu_limit(self.timeout), **extra)
        self.started = time.monotonic()
        keep_open = (theirs.fileno(), info_w, *[v for v in extra.values() if isinstance(v, int)])
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                pass_fds=keep_open, start_new_session=True, cwd=cwd, env=env)
        finally:
            theirs.close()
            os.close(info_w)
            for value in extra.values():
                if isinstance(value, int):
                    os.close(value)

    def _tier_setup(self, uid: int) -> tuple[dict, dict, Path]:
        """(command's extra arguments, environment, working directory) of this run's tier."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
        if not self.sandbox:
            return {}, env, self.work
        if not self.uid_tier:
            read, write = os.pipe()  # bubblewrap reads the filter from this pipe
            os.write(write, filters.compiled(network=True))
            os.close(write)
            return {"seccomp_fd": read}, env, self.run_dir
        uid_tier.become_subreaper()
        uid_tier.end_uid(uid, known_alive=False)  # what a crashed grader's run of it left
        self.work, self.tmp, self.tmp_folder = uid_tier.prepare(self.run_dir, self.tier.tmp_root,
                                                                uid)
        self.tmp_parent = self.tmp_folder.path
        spec = uid_tier.confine_spec(self.run_dir / "grader", self.work, self.tmp,
                                     filters.compiled(network=False),
                                     exdev=not self.tier.renames_fail)
        uid_tier.prepare_files(self.run_dir / "grader", uid)
        self.watcher = uid_budget.Watcher(uid, (self.work, self.tmp),
                                          uid_tier.SHARED_TEMP).start()
        return {"spec": spec}, box.uid_environment(self.work, self.tmp), self.work

    def where(self) -> Path | None:
        """The submission's working directory as this process can read it."""
        if not self.sandbox or self.uid_tier:
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

    def reading(self) -> Reading:
        """``checkpoint.json`` as it is on the sandbox's disk now, with what lies beside it."""
        where = self.where()
        if where is None:
            return Reading("unreadable", detail="the sandbox's files could not be reached")
        reading = read_safely(where)
        reading.listing = listing(where)
        return reading

    # -- the conversation ------------------------------------------------------------------

    def serve(self) -> None:
        """Serve the run's frames and keep its output's tail, until it is over, out of time or
        over budget."""
        deadline = self.started + self.timeout
        streams = {self.proc.stdout.fileno(): "stdout", self.proc.stderr.fileno(): "stderr"}
        open_fds = [self.sock.fileno(), *streams]
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                self.rec.ended = "hung"
                self.rec.detail = (f"still running after {self.timeout:g} s, so it was stopped")
                return
            if self._trace_over_budget():
                return
            ready, _, _ = select.select(open_fds, [], [], min(left, 0.25))
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
                if self.frames.feed(chunk):
                    self.rec.protocol.append("more than 32 MiB written to the grader's socket")
                    self.rec.ended = "died"
                    self.rec.detail = "flooded the grader's channel, so it was stopped"
                    return
                if self._handle_frames():
                    return
        if self.rec.ended is None:
            self.rec.ended = "died"

    def _handle_frames(self) -> bool:
        """Handle every complete frame in the buffer; True when the run is over."""
        return any(self.calls.handle(frame) for frame in self.frames.frames())

    def _trace_over_budget(self) -> bool:
        """Stop the run (True) once its trace or its files (uid tier) are over budget."""
        if self.watcher is not None and self.watcher.over:
            return self.calls.over_budget(self.watcher.over)
        try:
            size = os.stat(self.trace).st_size
        except OSError:
            return False
        if size <= TRACE_BUDGET:
            return False
        self.calls.over_budget(f"wrote so much that the grader's record of it passed "
                               f"{TRACE_BUDGET >> 20} MB (every byte written, four times over)")
        return True

    # -- the two other kinds of run ----------------------------------------------------------

    def seed(self, entries: list[dict]) -> None:
        """Run as a restart: the bootstrap puts ``entries`` (``{"path", "kind", "data",
        "target"}``, paths under ``/work`` and ``/tmp``, data in base64) back before it loads
        the code. Call before :meth:`start`."""
        if not self.sandbox:  # unconfined, /tmp is the machine's own: put back /work only
            entries = [e for e in entries if e["path"].startswith(WORK + "/")]
        path = self.run_dir / "grader" / "seed.json"
        path.write_text(json.dumps(entries), encoding="utf-8")
        shutil.copyfile(_LEFTOVERS, path.with_name("leftovers.py"))
        for written in (path, path.with_name("leftovers.py")):
            os.chmod(written, 0o644)
        self.mode = "restart"

    def fill_disk_at(self, op: str, index: int) -> None:
        """Fill the disk when call ``index`` of kind ``op`` has been served, before its answer.

        How: the file-size limit (RLIMIT_FSIZE) of every process of the submission is lowered,
        from outside, to half the size of checkpoint.json at that moment
        (:mod:`graders.sandbox.fill_disk`). A write that crosses it writes what fits and returns
        a short count, and the next one fails (EFBIG; Python ignores the SIGXFSZ that comes with
        it), exactly as a full disk cuts a write short and then fails (ENOSPC). It works the same
        in every tier, fills nothing the machine shares, and writes nothing into the sandbox.
        """
        self.calls.before_reply = lambda call: (
            self._lower_file_size(call) if (call.op, call.index) == (op, index) else None)

    def _lower_file_size(self, call) -> None:
        size = call.reading.size if call.reading is not None else None
        limit = max(1, (size or 0) // 2)
        done, error = limit_file_size(self.proc.pid, limit)
        self.rec.filled = {"seq": call.seq, "limit": limit, "processes": done, "error": error}

    # -- the end -----------------------------------------------------------------------------
    def stop(self) -> None:
        """End every process of the run, close what is open, and fill in the recording."""
        if self.proc is None:  # it never started: close what start opened
            self._close_channel()
            self._remove_folders()
            return
        observer_killed = (self.uid_tier and self.tier.observer_uid
                           and self.proc.poll() is not None and self.proc.returncode < 0
                           and self.proc.returncode != -signal.SIGXFSZ)
        self._end_processes()
        if self.watcher is not None and self.watcher.stop():
            self.calls.over_budget(self.watcher.over)
        self._drain_outputs()
        self._close_channel()
        self._finish_recording()
        if observer_killed:
            self.rec.ended = "died"
            self.rec.detail = ("stopped the grader's observer (strace) before the run ended, so "
                               "its file operations could not all be recorded")
        if self.uid_tier and self.tier.landlock < 2:
            uid_walls.withhold_outside_reads(self.rec, (self.work, self.tmp, self.run_dir))
        if self.uid_tier or not self.sandbox:
            self._name_folders_as_the_model_does()
        if self.uid_tier:  # gone with the run, as the bubblewrap tier's tmpfs mounts are
            uid_tier.remove_residue(self.held.uid)
            uid_walls.remove_ipc(self.held.uid)
        self._remove_folders()

    def _close_channel(self) -> None:
        if self.sock is not None:
            self.sock.close()
        if self.info_r is not None:
            os.close(self.info_r)

    def _remove_folders(self) -> None:
        if self.held is not None:
            self.held.release()
        if self.tmp_folder is not None:
            self.tmp_folder.remove()
        if self.keep:
            self.rec.kept = str(self.run_dir)
            self.folder.keep()
        else:
            self.folder.remove()

    def _name_folders_as_the_model_does(self) -> None:
        """The real folders named ``/work``, ``/tmp`` and ``/grader`` (as in the bubblewrap tier)
        in what the judge and the student read: all three in the uid tier; unconfined (strace
        alone), the working folder only, its temp folder being the machine's own ``/tmp``."""
        folders = {str(self.work): WORK}
        if self.uid_tier:
            folders.update({str(self.tmp): TMP, str(self.run_dir / "grader"): box.GRADER})
        rec = self.rec
        rec.trace = uid_tier.model_paths(rec.trace, folders)
        rec.stdout_tail = uid_tier.model_paths(rec.stdout_tail, folders)
        rec.stderr_tail = uid_tier.model_paths(rec.stderr_tail, folders)
        for record in (rec.error, rec.load):
            if isinstance(record, dict) and isinstance(record.get("message"), str):
                record["message"] = uid_tier.model_paths(record["message"], folders)

    def _end_processes(self) -> None:
        # uid tier: every process of the run's uid, killed by a process of that uid; strace
        # then sees its tracees gone and exits.
        if self.uid_tier and self.held is not None:
            uid_tier.end_uid(self.held.uid, wait_for=self.proc)
        # bubblewrap: the sandbox's own pid 1 first: the kernel then ends every process in its
        # namespace, bubblewrap exits, strace sees it and exits, and each is reaped by its own
        # parent, so nothing is left behind as an orphan. The whole group only if that did not
        # end it.
        if self.sandbox and not self.uid_tier and self.proc.poll() is None:
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

    def _drain_outputs(self) -> None:
        for stream in (self.proc.stdout, self.proc.stderr):
            try:
                rest = stream.read()
            except (OSError, ValueError):
                rest = b""
            name = "stdout" if stream is self.proc.stdout else "stderr"
            self.outputs[name] = (self.outputs[name] + (rest or b""))[-_OUTPUT_TAIL:]
            stream.close()

    def _finish_recording(self) -> None:
        rec = self.rec
        rec.elapsed = round(time.monotonic() - self.started, 6)
        rec.exit_code = self.proc.returncode
        rec.stdout_tail = self.outputs["stdout"].decode("utf-8", "replace")
        rec.stderr_tail = self.outputs["stderr"].decode("utf-8", "replace")
        if self.frames.cut_short() and rec.ended != "hung":
            rec.protocol.append("a grader frame begun and never finished")
        rec.trace = self._read_trace()
        if self.proc.returncode == -signal.SIGXFSZ and not rec.over_budget:
            rec.ended = "died"
            rec.detail = ("wrote so much that the grader could not record it all (over "
                          f"{TRACE_CAP >> 20} MB of file writes, counted four times over)")
            rec.over_budget = "wrote more than the grader's record of one run can hold"
        if rec.ended == "died" and not rec.detail:
            rec.detail = (f"ended the process itself (exit status {self.proc.returncode}) "
                          "before run_agent returned")

    def _read_trace(self) -> str:
        """The trace strace wrote, unless the run went over budget (then nothing is kept)."""
        rec = self.rec
        try:
            size = os.stat(self.trace).st_size
        except OSError as err:
            rec.trace_lost = f"the trace could not be read ({err.strerror or err})"
            return ""
        if size > TRACE_BUDGET and not rec.over_budget:
            self.calls.over_budget(f"wrote so much that the grader's record of it passed "
                                   f"{TRACE_BUDGET >> 20} MB (every byte written, four times over)")
        if rec.over_budget:
            return ""
        try:
            text = self.trace.read_text(encoding="latin-1")
        except OSError as err:
            rec.trace_lost = f"the trace could not be read ({err.strerror or err})"
            return ""
        try:
            st = os.statvfs(self.trace)
            if st.f_bavail * st.f_frsize < (1 << 20) and len(text) > self.reserved:
                rec.trace_lost = "the grading machine's temporary space was full"
        except OSError:
            pass
        return text
