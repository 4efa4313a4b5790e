"""The crash harness: run a submission against a scenario and kill it at every crash point.

A source submission is loaded once into a fresh ``python`` process, the *runner*
(:mod:`graders.inprocess.runner`), which forks one child per crash point. Each child runs
``run_agent``
in a fresh temporary working directory and is killed at its crash point; this process (never
the runner, never a child) then reads what is on disk and the tool ledger, and the checker turns
it into a :class:`~graders.judge.verdict.Verdict`.

    from graders import Submission, run_matrix
    for verdict in run_matrix(Submission.from_file("answer.py"), "support-tickets"):
        print(verdict)

Each function opens and closes its own runner. To make several calls with one runner (and one
dry run per scenario), use a :class:`Harness`::

    with Harness(sub) as h:
        points = h.crash_points("support-tickets")
        obs = h.run_point("support-tickets", "killed_during_tool_2")

POSIX only: on other platforms every run is reported as skipped ("needs Linux or macOS").
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from graders.inprocess import child as _child
from graders.inprocess.collect import collect
from graders.inprocess.runner import _warm_up
from graders.judge.checkpoint_rules import check, load_error_verdict, skipped_verdict
from graders.judge.crash_points import KINDS, NO_CRASH, CrashPoint, derive_points
from graders.judge.observation import Observation
from graders.judge.verdict import Verdict
from graders.submission import Submission, _missing_message
from graders.text import file_tail

__all__ = ["Harness", "HarnessError", "dry_run", "crash_points", "run_point", "run_matrix",
           "DEFAULT_TIMEOUT", "unsupported_reason"]

#: Seconds a child may run before it is killed and reported as a hang.
DEFAULT_TIMEOUT = 5.0
_STARTUP_ALLOWANCE = 10.0
_SCRATCH_NEEDED = 256 * 1024 * 1024


class HarnessError(Exception):
    """The harness itself could not do what was asked (an unknown scenario or crash point, a
    runner that could not start). Never raised for anything a submission does."""


class _RunnerDied(HarnessError):
    """The runner ended (or stopped answering) in the middle of the crash runs."""


def unsupported_reason() -> str | None:
    """Why crash runs cannot happen on this platform, or None if they can."""
    needed = [hasattr(os, "fork"), hasattr(signal, "SIGKILL"), hasattr(signal, "SIGXFSZ"),
              _child.resource is not None]
    if all(needed):
        return None
    return ("The crash harness needs Linux or macOS: it forks the run, kills it with SIGKILL and "
            "tears writes with RLIMIT_FSIZE, none of which this platform has. Nothing was run; "
            "use WSL, a Linux container or Binder to run the crash points.")


def _scratch() -> str | None:
    """Where the runs' working directories go: tmpfs if there is one, where fsync costs nothing.

    A killed process keeps what the page cache holds, so a crash run cannot tell whether the
    submission called fsync anyway; on a disk, each fsync would cost milliseconds.
    """
    shm = "/dev/shm"
    try:
        stat = os.statvfs(shm)
    except (OSError, AttributeError):
        return None
    free = stat.f_bavail * stat.f_frsize
    # A container's /dev/shm may be 64 MB: a full one would fail the student's saves.
    if free >= _SCRATCH_NEEDED and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return None


def _scenario(scenario):
    import fake_llm

    if isinstance(scenario, str):
        try:
            return fake_llm.load_scenario(scenario)
        except fake_llm.FakeLLMError as err:
            raise HarnessError(str(err)) from None
    return scenario


def _runner_path() -> str:
    roots = [str(Path(__file__).resolve().parents[2])]
    spec = importlib.util.find_spec("fake_llm")
    if spec is not None and spec.submodule_search_locations:
        roots.append(str(Path(next(iter(spec.submodule_search_locations))).resolve().parent))
    roots += [p for p in sys.path if p and os.path.isabs(p) and os.path.exists(p)]
    return os.pathsep.join(dict.fromkeys(roots))


class _RunnerBackend:
    """A runner process, spoken to through two pipes."""

    def __init__(self, submission: Submission, root: Path) -> None:
        self.submission = submission
        to_runner_r, self._to_runner = os.pipe()
        self._from_runner, from_runner_w = os.pipe()
        env = dict(os.environ, PYTHONPATH=_runner_path(), PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTHONSTARTUP", None)
        self.out_path = root / "runner.out"
        with open(self.out_path, "wb") as out:
            try:
                self.proc = subprocess.Popen(
                    [sys.executable, "-S", "-u", "-m", "graders.inprocess.runner",
                     str(to_runner_r), str(from_runner_w)],
                    stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                    pass_fds=(to_runner_r, from_runner_w), start_new_session=True, env=env,
                    cwd=root,
                )
            finally:
                os.close(to_runner_r)
                os.close(from_runner_w)
        self._buffer = b""
        self.dead: str | None = None

    def _send(self, message: dict) -> None:
        data = memoryview((json.dumps(message) + "\n").encode())
        try:
            while data:
                data = data[os.write(self._to_runner, data):]
        except BrokenPipeError:
            self.dead = "ended"

    def _receive(self, deadline: float) -> dict | None:
        """The next reply, or None if the runner ended or ``deadline`` passed."""
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.dead = "hung"
                return None
            ready, _, _ = select.select([self._from_runner], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_runner, 1 << 16)
            if not chunk:
                self.dead = "ended"
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def load(self, timeout: float) -> dict:
        sub = self.submission
        ready = self._receive(time.monotonic() + _STARTUP_ALLOWANCE)
        if ready is None or not ready.get("ready"):
            raise HarnessError(f"the runner process did not start (its output: "
                               f"{file_tail(self.out_path)!r})")
        self._send({"op": "load", "source": sub.source, "filename": sub.filename,
                    "name": "submission"})
        reply = self._receive(time.monotonic() + timeout)
        if reply is None:
            try:
                status = self.proc.wait(timeout=1.0) if self.dead == "ended" else None
            except subprocess.TimeoutExpired:
                status = None
            return {"ok": False, "stage": self.dead, "exit": status, "timeout": timeout,
                    "output": file_tail(self.out_path)}
        return reply

    def run(self, scenario: str, plans: list[dict], timeout: float, jobs: int):
        self._send({"op": "run", "scenario": scenario, "plans": plans, "timeout": timeout,
                    "jobs": jobs})
        budget = (timeout + 1.0) * len(plans) + _STARTUP_ALLOWANCE
        deadline = time.monotonic() + budget
        while True:
            reply = self._receive(deadline)
            if reply is None:
                raise _RunnerDied(f"the runner process {self.dead} during the crash runs "
                                  f"(its output: {file_tail(self.out_path)!r})")
            if reply.get("done"):
                return
            if "error" in reply:
                raise _RunnerDied(f"the runner failed: {reply['error']}")
            yield reply["id"], reply["status"]

    def close(self) -> None:
        if self.dead is None:
            self._send({"op": "quit"})
            try:
                self.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
        try:  # the runner's session: anything the submission started outlives nothing
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.proc.wait()
        for fd in (self._to_runner, self._from_runner):
            try:
                os.close(fd)
            except OSError:
                pass


class _ForkBackend:
    """In-process mode: this process forks the children itself (a notebook self-check)."""

    def __init__(self, submission: Submission) -> None:
        self.submission = submission
        run_agent = submission.run_agent
        self.namespace = getattr(run_agent, "__globals__", {})
        self.filenames = {getattr(getattr(f, "__code__", None), "co_filename", "")
                          for f in (run_agent, submission.save_checkpoint)}
        self.scenarios: dict[str, Any] = {}

    def load(self, timeout: float) -> dict:
        return {"ok": True}

    def run(self, scenario: str, plans: list[dict], timeout: float, jobs: int):
        if scenario not in self.scenarios:
            self.scenarios[scenario] = _scenario(scenario)
            try:
                _warm_up(self.scenarios[scenario])
            except Exception:  # noqa: BLE001 - only an optimisation
                pass
        kit = _child.Kit(self.scenarios[scenario])
        functions = (self.submission.run_agent, self.submission.save_checkpoint)

        def start(plan):
            for key in ("base", "cwd", "hdir"):
                os.mkdir(plan[key])
            return _child.fork_child(self.namespace, kit, plan, plan["cwd"], plan["hdir"],
                                     filenames=self.filenames, functions=functions,
                                     own_group=True)

        for plan, status in _child.run_children(start, plans, timeout, jobs):
            yield plan["id"], status

    def close(self) -> None:
        pass



def _load_message(reply: dict) -> str:
    from graders.judge.observation import describe_error

    stage = reply.get("stage")
    if stage == "syntax":
        err = reply.get("error") or {}
        where = f" at line {err['line']}" if err.get("line") else ""
        code = f": `{err['code']}`" if err.get("code") else ""
        return (f"Your code has a syntax error{where}{code} ({err.get('message')}), so it "
                "cannot run.")
    if stage == "import":
        err = reply.get("error") or {}
        if err.get("type") == "SystemExit":
            return ("Your code called sys.exit() while it was being loaded, before run_agent was "
                    "ever called. Top-level code runs once when the file is loaded: keep it to "
                    "definitions.")
        return (f"Your code raised {describe_error(err)} while it was being loaded, before "
                "run_agent was ever called. Top-level code runs once when the file is loaded: "
                "keep it to definitions.")
    if stage == "missing":
        return _missing_message(reply.get("missing") or ["run_agent", "save_checkpoint"])
    if stage == "not_callable":
        names = " and ".join(f"`{f}` is {'an' if t[0] in 'aeiou' else 'a'} {t}"
                             for f, t in zip(reply["names"], reply["types"], strict=False))
        return (f"In your code {names}, not a function: the grader calls "
                "`run_agent(task, tools, call_model, execute_tool)`, and `run_agent` saves "
                "through `save_checkpoint(state)`.")
    if stage == "async":
        names = " and ".join(f"`{f}`" for f in reply.get("functions", []))
        return (f"{names} is defined with `async def`, but the course's loop is synchronous: "
                "`call_model` and `execute_tool` return their results directly. Drop `async` "
                "and `await`.")
    if stage == "hung":
        return (f"Your code was still running {reply.get('timeout', 0):g} s after it started "
                "loading: something at the top level never finishes (an infinite loop, or a "
                "call that waits for input). Keep top-level code to definitions.")
    return (f"Your code ended the process while it was being loaded (exit status "
            f"{reply.get('exit')}), before run_agent was ever called: remove the top-level call "
            "to os._exit (or whatever ends the process).")


class Harness:
    """One submission, one runner, a dry run per scenario: run crash points and check them.

    Args:
        submission: the code under test.
        timeout: seconds a child may run before it is reported as a hang.
        jobs: how many children run at once (default: 2 if the machine has 2 cores or more).
        keep_files: keep the temporary directories (their path is ``root``) after ``close``.
        tmpdir: where to make them (default: ``/dev/shm`` if it exists, else the system's
            temporary directory).
    """

    def __init__(self, submission: Submission, *, timeout: float = DEFAULT_TIMEOUT,
                 jobs: int | None = None, keep_files: bool = False,
                 tmpdir: str | None = None) -> None:
        if not isinstance(submission, Submission):
            raise TypeError(f"Harness needs a Submission, not {type(submission).__name__}")
        self.submission = submission
        self.timeout = float(timeout)
        self.jobs = jobs if jobs is not None else min(2, os.cpu_count() or 1)
        self.keep_files = keep_files
        self.tmpdir = tmpdir if tmpdir is not None else _scratch()
        self.root: Path | None = None
        self._backend = None
        self._load: dict | None = None
        self._dry: dict[str, Observation] = {}
        self._points: dict[str, list[CrashPoint]] = {}
        self._scenarios: dict[str, Any] = {}
        self._seq = 0

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the runner (and everything it started) and remove the temporary directories."""
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self.root is not None and not self.keep_files:
            shutil.rmtree(self.root, ignore_errors=True)

    def load_problem(self) -> str | None:
        """Why the submission cannot be run at all (as a student message), or None."""
        if unsupported_reason():
            return None
        if self._load is None:
            problem = self.submission.problem()
            if problem is not None:
                self._load = {"ok": False, "message": problem}
            else:
                if self.root is None:
                    self.root = Path(tempfile.mkdtemp(prefix="checkpoint-lab-",
                                                      dir=self.tmpdir))
                if self.submission.in_process:
                    self._backend = _ForkBackend(self.submission)
                else:
                    self._backend = _RunnerBackend(self.submission, self.root)
                reply = self._backend.load(self.timeout)
                if not reply.get("ok"):
                    reply["message"] = _load_message(reply)
                self._load = reply
        return None if self._load.get("ok") else self._load["message"]

    def scenario(self, scenario):
        """The fake_llm Scenario named ``scenario`` (loaded in this process, for the checker)."""
        name = scenario if isinstance(scenario, str) else scenario.name
        if name not in self._scenarios:
            self._scenarios[name] = _scenario(scenario)
        return self._scenarios[name]

    # -- runs ------------------------------------------------------------------------------

    def _not_run(self, scenario: str, point: str, kind: str) -> Observation | None:
        reason = unsupported_reason()
        if reason:
            return Observation(scenario, point, kind, ended="skipped", detail=reason)
        problem = self.load_problem()
        if problem:
            return Observation(scenario, point, kind, ended="not_loaded", detail=problem)
        return None

    def _run(self, scenario: str, points: list[CrashPoint], *, dry: bool = False):
        """Run ``points``; yield (point, Observation) as each child ends."""
        plans = []
        by_id = {}
        for point in points:
            self._seq += 1
            base = self.root / f"{self._seq:03d}-{point.id}"
            plan = point.plan()
            plan.update(base=str(base), cwd=str(base / "work"), hdir=str(base / "harness"),
                        dry=dry)
            plans.append(plan)
            by_id[point.id] = (point, base)
        for point_id, status in self._statuses(scenario, plans):
            point, base = by_id[point_id]
            status["timeout"] = self.timeout
            obs = collect(scenario, point.id, point.kind, base / "work", base / "harness", status,
                          dry=dry)
            if not self.keep_files:
                shutil.rmtree(base, ignore_errors=True)
            yield point, obs

    def _statuses(self, scenario: str, plans: list[dict]):
        """(point id, wait status) for each plan; if the runner dies, the rest died with it."""
        done: set[str] = set()
        if self._backend is None:  # the last runner died: start a fresh one
            problem = self.load_problem()
            if problem or self._backend is None:
                for plan in plans:
                    yield plan["id"], {"exit": None, "runner_died": problem, "elapsed": 0.0}
                return
        try:
            for point_id, status in self._backend.run(scenario, plans, self.timeout, self.jobs):
                done.add(point_id)
                yield point_id, status
        except _RunnerDied as died:
            self._backend.close()
            self._backend, self._load = None, None  # the next run starts a fresh runner
            for plan in plans:
                if plan["id"] not in done:
                    yield plan["id"], {"exit": None, "runner_died": str(died), "elapsed": 0.0}

    def dry_run(self, scenario) -> Observation:
        """The ``no_crash`` run, with the save trace (and a snapshot after each save)."""
        name = self.scenario(scenario).name
        if name not in self._dry:
            not_run = self._not_run(name, NO_CRASH, NO_CRASH)
            if not_run is not None:
                return not_run
            point = CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash")
            [(_, obs)] = list(self._run(name, [point], dry=True))
            self._dry[name] = obs
        return self._dry[name]

    def crash_points(self, scenario) -> list[CrashPoint]:
        """Every crash point of ``scenario`` for this submission, in timeline order."""
        name = self.scenario(scenario).name
        if name not in self._points:
            dry = self.dry_run(name)
            if dry.ended in ("skipped", "not_loaded"):
                return [CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash")]
            self._points[name] = derive_points(dry)
        return self._points[name]

    def point(self, scenario, point: str | CrashPoint) -> CrashPoint:
        """The crash point with id ``point`` (a CrashPoint is returned as is)."""
        if isinstance(point, CrashPoint):
            return point
        points = self.crash_points(scenario)
        for candidate in points:
            if candidate.id == point:
                return candidate
        known = ", ".join(p.id for p in points)
        raise HarnessError(f"no crash point {point!r} in this run of "
                           f"{self.scenario(scenario).name}; its crash points are: {known}")

    def run_point(self, scenario, point: str | CrashPoint) -> Observation:
        """Run the submission once, killed at ``point``; return what it left on disk."""
        name = self.scenario(scenario).name
        point_id = point.id if isinstance(point, CrashPoint) else point
        not_run = self._not_run(name, point_id, _point_kind(point_id))
        if not_run is not None:
            return not_run
        crash = self.point(name, point)
        if crash.kind == NO_CRASH:
            return self.dry_run(name)
        [(_, obs)] = list(self._run(name, [crash]))
        return obs

    def run_points(self, scenario, points: Iterable[str | CrashPoint]) -> list[Observation]:
        """Run several crash points in one batch (``jobs`` at a time); observations in order.

        Faster than one :meth:`run_point` per point when a widget wants a whole timeline.
        """
        name = self.scenario(scenario).name
        wanted = list(points)
        ids = [p.id if isinstance(p, CrashPoint) else p for p in wanted]
        not_run = self._not_run(name, NO_CRASH, NO_CRASH)
        if not_run is not None:
            return [Observation(name, i, _point_kind(i), ended=not_run.ended, detail=not_run.detail)
                    for i in ids]
        crashes = [self.point(name, p) for p in wanted]
        todo = list({p.id: p for p in crashes if p.kind != NO_CRASH}.values())
        found = {p.id: obs for p, obs in self._run(name, todo)}
        if any(p.kind == NO_CRASH for p in crashes):
            found[NO_CRASH] = self.dry_run(name)
        return [found[i] for i in ids]

    def run_matrix(self, scenario, kinds: Iterable[str] | None = None) -> list[Verdict]:
        """Run every crash point of ``scenario`` (or only those of ``kinds``); check each.

        Returns the verdicts in timeline order. A submission that cannot be loaded gets one
        verdict, with point ``"load"``, saying why.
        """
        sc = self.scenario(scenario)
        kinds = _kinds(kinds)
        reason = unsupported_reason()
        if reason:
            return [skipped_verdict(sc.name, reason)]
        problem = self.load_problem()
        if problem:
            return [load_error_verdict(sc.name, problem)]
        points = [p for p in self.crash_points(sc.name) if p.kind in kinds]
        verdicts: dict[str, Verdict] = {}
        if NO_CRASH in kinds:
            verdicts[NO_CRASH] = check(self.dry_run(sc.name), sc, points[-1])
        todo = [p for p in points if p.kind != NO_CRASH]
        for point, obs in self._run(sc.name, todo):
            verdicts[point.id] = check(obs, sc, point)
        return [verdicts[p.id] for p in points]


def _point_kind(point_id: str) -> str:
    for kind in sorted(KINDS, key=len, reverse=True):
        if point_id.startswith(kind):
            return kind
    return "unknown"


def _kinds(kinds: Iterable[str] | None) -> set[str]:
    if kinds is None:
        return set(KINDS)
    kinds = {kinds} if isinstance(kinds, str) else set(kinds)
    unknown = kinds - set(KINDS)
    if unknown:
        raise HarnessError(f"unknown crash point kind(s) {sorted(unknown)}; "
                           f"the kinds are {', '.join(KINDS)}")
    return kinds


def _harness(sub, timeout: float | None) -> tuple[Harness, bool]:
    if isinstance(sub, Harness):
        return sub, False
    return Harness(sub, timeout=DEFAULT_TIMEOUT if timeout is None else timeout), True


def dry_run(sub: Submission | Harness, scenario, *,
            timeout: float | None = None) -> Observation:
    """The no-crash run of ``sub`` on ``scenario``: an Observation with the save trace."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.dry_run(scenario)
    finally:
        if own:
            harness.close()


def crash_points(sub: Submission | Harness, scenario, *,
                 timeout: float | None = None) -> list[CrashPoint]:
    """The crash points of ``sub`` on ``scenario``, in the order their moments come."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.crash_points(scenario)
    finally:
        if own:
            harness.close()


def run_point(sub: Submission | Harness, scenario, point: str | CrashPoint, *,
              timeout: float | None = None) -> Observation:
    """Run ``sub`` on ``scenario``, killed at ``point`` (an id: ``"killed_during_tool_2"``)."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.run_point(scenario, point)
    finally:
        if own:
            harness.close()


def run_matrix(sub: Submission | Harness, scenario, kinds: Iterable[str] | None = None, *,
               timeout: float | None = None) -> list[Verdict]:
    """Run and check every crash point of ``sub`` on ``scenario``; verdicts in timeline order."""
    harness, own = _harness(sub, timeout)
    try:
        return harness.run_matrix(scenario, kinds)
    finally:
        if own:
            harness.close()
