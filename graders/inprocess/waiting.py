"""Waiting for forked children: each reaped or, out of time, killed with its process group.

The runner (or, in in-process mode, the notebook's own process) starts the children and waits here,
``jobs`` at a time; :func:`wait_child` reports how each ended. POSIX only (fork, SIGKILL); on Linux
a pidfd wakes the wait the moment a child ends, elsewhere a short growing sleep polls for it.
"""

from __future__ import annotations

import os
import select
import signal
import time

# Bound now, before any submission code runs: the runner loads the submission, whose top level
# may patch ``os``, ``signal`` or ``time`` before the runner waits for a single child.
_kill = os.kill
_killpg = os.killpg
_waitpid = os.waitpid
_wait4 = getattr(os, "wait4", None)
_close = os.close
_monotonic = time.monotonic
_sleep = time.sleep
_SIGKILL = signal.SIGKILL
_pidfd_open = getattr(os, "pidfd_open", None)

__all__ = ["wait_child", "run_children"]


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
