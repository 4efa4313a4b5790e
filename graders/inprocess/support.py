"""What the forking harness's sides share: its errors, the files a child leaves, and where crash
runs can happen.

- :class:`HarnessError` (and :class:`RunnerDied`): the harness itself could not do what was
  asked; never raised for anything a submission does.
- The names of the files a forked child leaves in its harness directory (``EVENTS``, ``LEDGER``,
  ``STDOUT``, ``STDERR``; ``CHECKPOINT`` is what the submission saves in its working directory).
- :func:`unsupported_reason` (fork, SIGKILL, RLIMIT_FSIZE: POSIX only) and :func:`scratch_dir`
  (tmpfs where there is one).
"""

from __future__ import annotations

import os
import signal
import sys

from graders.loop.protocol import CHECKPOINT

try:
    import resource
except ImportError:  # not POSIX
    resource = None

__all__ = ["HarnessError", "RunnerDied", "CHECKPOINT", "EVENTS", "LEDGER", "STDOUT", "STDERR",
           "unsupported_reason", "scratch_dir"]

EVENTS = "events.jsonl"
LEDGER = "ledger.jsonl"
STDOUT = "stdout.txt"
STDERR = "stderr.txt"

_SCRATCH_NEEDED = 256 * 1024 * 1024


class HarnessError(Exception):
    """The harness itself could not do what was asked (an unknown scenario or crash point, a
    runner that could not start). Never raised for anything a submission does."""


class RunnerDied(HarnessError):
    """The runner ended (or stopped answering) in the middle of the crash runs."""


def unsupported_reason() -> str | None:
    """Why crash runs cannot happen on this platform, or None if they can."""
    # A browser's Python (Pyodide, ``sys.platform == "emscripten"``) has ``os.fork`` and a
    # ``resource`` module, but neither forks nor sets limits.
    needed = [hasattr(os, "fork"), hasattr(signal, "SIGKILL"), hasattr(signal, "SIGXFSZ"),
              resource is not None, sys.platform != "emscripten"]
    if all(needed):
        return None
    return ("The crash harness needs Linux or macOS: it forks the run, kills it with SIGKILL and "
            "tears writes with RLIMIT_FSIZE, none of which this platform has. Nothing was run; "
            "use WSL, a Linux container or Binder to run the crash points.")


def scratch_dir() -> str | None:
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
