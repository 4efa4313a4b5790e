"""The uid tier's disk budget: what one run's uid owns on the grading machine's disks, watched.

The uid tier has no tmpfs of its own to fill and no quota to lean on: a run's working and temp
folders live on the machine's shared temp folders, beside its neighbours' folders and the
grader's traces. So while a run lives, a :class:`Watcher` adds up, every
:data:`PERIOD` seconds, the blocks and the files its uid owns in its two folders and at the top
of the machine's shared temp folders (whatever that uid may create without Landlock), and once
either passes :data:`BUDGET_BYTES` or :data:`BUDGET_FILES` it ends every process of that uid at
once and says why (:attr:`Watcher.over`): the run that filled the disk is named, and its
neighbours and the grader keep their room. Blocks, not sizes: ``posix_fallocate`` takes blocks
without writing a byte (the seccomp filter refuses ``fallocate`` itself; glibc then writes the
blocks, which this counts all the same), and a sparse file takes none.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from pathlib import Path

__all__ = ["BUDGET_BYTES", "BUDGET_FILES", "PERIOD", "Watcher", "owned"]

#: What one run's uid may own on disk: far above an honest run (a checkpoint of kilobytes,
#: three times the lesson's largest), far below a machine's free temp space.
BUDGET_BYTES = 96 << 20
BUDGET_FILES = 10_000
#: How often the watcher looks (seconds).
PERIOD = 0.05


def _walk(path: str, uid: int, totals: list[int], top_only: bool) -> None:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if st.st_uid == uid:
            totals[0] += st.st_blocks * 512
            totals[1] += 1
        elif top_only:
            continue
        if stat.S_ISDIR(st.st_mode) and (st.st_uid == uid or not top_only):
            _walk(entry.path, uid, totals, False)


def owned(uid: int, folders: tuple[str, ...], shared: tuple[str, ...]) -> tuple[int, int]:
    """(bytes of blocks, files) that ``uid`` owns under ``folders`` (whole) and in ``shared``
    (entries it owns at the top, and everything under them)."""
    totals = [0, 0]
    for folder in folders:
        _walk(folder, uid, totals, False)
    for folder in shared:
        _walk(folder, uid, totals, True)
    return totals[0], totals[1]


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (the grader is root: it may signal them all)."""
    for _ in range(20):
        found = False
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                    os.kill(int(entry), signal.SIGKILL)
                    found = True
            except OSError:
                continue
        if not found:
            return


class Watcher:
    """Watch one run's uid until :meth:`stop`; :attr:`over` says why it was ended (or None),
    :attr:`spent` how long the watching took (seconds of this process's time)."""

    def __init__(self, uid: int, folders: tuple[Path, ...], shared: tuple[str, ...], *,
                 budget_bytes: int = BUDGET_BYTES, budget_files: int = BUDGET_FILES,
                 period: float = PERIOD) -> None:
        self.uid = uid
        self.folders = tuple(str(f) for f in folders)
        self.shared = shared
        self.budget = (budget_bytes, budget_files)
        self.period = period
        self.over: str | None = None
        self.spent = 0.0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"disk budget {uid}",
                                        daemon=True)

    def start(self) -> Watcher:
        self._thread.start()
        return self

    def stop(self) -> str | None:
        """Stop watching, after one last look; return :attr:`over`."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        self.check()
        return self.over

    def check(self) -> bool:
        """Look once; True (and every process of the uid ended) when the run is over budget."""
        if self.over is not None:
            return True
        began = time.thread_time()
        used, files = owned(self.uid, self.folders, self.shared)
        self.spent += time.thread_time() - began
        if used > self.budget[0]:
            self.over = (f"filled the disk: its files took {used >> 20} MiB of the grading "
                         f"machine's disk, more than the {self.budget[0] >> 20} MiB one run "
                         "may keep")
        elif files > self.budget[1]:
            self.over = (f"filled the disk: it made {files:,} files, more than the "
                         f"{self.budget[1]:,} one run may keep")
        if self.over is not None:
            _kill_uid(self.uid)
            return True
        return False

    def _watch(self) -> None:
        while not self._done.wait(self.period):
            if self.check():
                return
