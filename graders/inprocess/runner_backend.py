"""The harness's side of the runner protocol: start the runner, load the code, run crash points.

The runner (:mod:`graders.inprocess.runner`, whose docstring gives the protocol) is a fresh
``python -S -u`` in its own session, spoken to in JSON lines over two pipes; its output goes to
``runner.out``, quoted when it fails to start or dies.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from graders.inprocess.support import HarnessError, RunnerDied
from graders.submission import Submission
from graders.text import file_tail

__all__ = ["RunnerBackend", "runner_path"]

_STARTUP_ALLOWANCE = 10.0


def runner_path() -> str:
    """The runner's PYTHONPATH: this checkout, where fake_llm is, and this process's sys.path."""
    roots = [str(Path(__file__).resolve().parents[2])]
    spec = importlib.util.find_spec("fake_llm")
    if spec is not None and spec.submodule_search_locations:
        roots.append(str(Path(next(iter(spec.submodule_search_locations))).resolve().parent))
    roots += [p for p in sys.path if p and os.path.isabs(p) and os.path.exists(p)]
    return os.pathsep.join(dict.fromkeys(roots))


class RunnerBackend:
    """A runner process, spoken to through two pipes."""

    def __init__(self, submission: Submission, root: Path) -> None:
        self.submission = submission
        to_runner_r, self._to_runner = os.pipe()
        self._from_runner, from_runner_w = os.pipe()
        env = dict(os.environ, PYTHONPATH=runner_path(), PYTHONDONTWRITEBYTECODE="1")
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
                raise RunnerDied(f"the runner process {self.dead} during the crash runs "
                                  f"(its output: {file_tail(self.out_path)!r})")
            if reply.get("done"):
                return
            if "error" in reply:
                raise RunnerDied(f"the runner failed: {reply['error']}")
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
