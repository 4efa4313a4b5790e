"""Which filesystem a folder is on, said in words: a measurement names the disk it was taken on.

A save's cost depends on the disk: on a RAM filesystem (tmpfs) fsync costs nothing, on a laptop's
SSD a fraction of a millisecond, on a network filesystem much more. Linux only reads the mount
table (``/proc/self/mounts``); elsewhere the type is reported as unknown.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Filesystem", "filesystem_of", "RAM_FILESYSTEMS"]

#: Filesystems that live in memory: fsync is free there, and nothing survives a reboot.
RAM_FILESYSTEMS = {"tmpfs", "ramfs", "devtmpfs"}

_MOUNTS = Path("/proc/self/mounts")


@dataclass(frozen=True)
class Filesystem:
    """The filesystem that holds ``folder``: its mount point, type and device (None if unknown)."""

    folder: Path
    mount_point: Path | None = None
    fstype: str | None = None
    device: str | None = None

    @property
    def in_memory(self) -> bool:
        """Whether it is a RAM filesystem, where fsync costs nothing."""
        return self.fstype in RAM_FILESYSTEMS

    def describe(self) -> str:
        """One sentence: where the folder is and what kind of filesystem holds it."""
        if self.fstype is None and sys.platform == "emscripten":  # a browser's Python
            return _in_the_browser(self.folder)
        if self.fstype is None:
            return (f"Measured in {self.folder}; this system does not say which filesystem that "
                    "is (the mount table is read on Linux only).")
        what = f"{self.fstype} filesystem mounted at {self.mount_point} ({self.device})"
        note = (" That filesystem lives in RAM: fsync costs nothing there, so a real disk "
                "would be slower." if self.in_memory else "")
        return f"Measured in {self.folder}, on the {what}.{note}"

    __str__ = describe


def _in_the_browser(folder: Path) -> str:
    if folder.parts[1:2] == ("drive",):  # JupyterLite's drive: the notebooks' own folder
        return (f"Measured in {folder}, in this browser's storage (the site keeps your files in "
                "the browser, IndexedDB): each write travels from the kernel to the page, so a "
                "save costs more here than on a disk.")
    return (f"Measured in {folder}, in the browser tab's memory: fsync costs nothing there, and "
            "nothing survives closing the tab.")


def _unescape(field: str) -> str:
    # The mount table writes spaces, tabs and newlines in paths as octal escapes.
    return (field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")
            .replace("\\134", "\\"))


def filesystem_of(folder: str | os.PathLike, *, mounts: Path = _MOUNTS) -> Filesystem:
    """The filesystem holding ``folder``: the mount with the longest mount point above it."""
    where = Path(folder).resolve()
    try:
        lines = mounts.read_text(encoding="utf-8").splitlines()
    except OSError:
        return Filesystem(where)
    best: tuple[int, Filesystem] | None = None
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        device, point, fstype = _unescape(parts[0]), Path(_unescape(parts[1])), parts[2]
        if where == point or point in where.parents:
            depth = len(point.parts)
            if best is None or depth >= best[0]:
                best = (depth, Filesystem(where, point, fstype, device))
    return best[1] if best else Filesystem(where)
