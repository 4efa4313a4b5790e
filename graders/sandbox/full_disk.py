"""Filling the disk under a running submission, from outside: its file-size limit lowered.

Every process below the observer gets ``RLIMIT_FSIZE`` (soft and hard, so it cannot be raised
back) lowered to the limit: a write that crosses it writes what fits and returns a short count,
and the next one fails (EFBIG; Python ignores the SIGXFSZ that comes with it), as a full disk
cuts a write short and then fails (ENOSPC). A process of another user is limited by a helper
run as that user (``prlimit --pid``): lowering another user's limit otherwise takes
CAP_SYS_RESOURCE, which containers (Docker's defaults, Gradescope) do not grant even to root;
processes of root itself (the sandbox's own) are left alone. Linux only.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from pathlib import Path

__all__ = ["limit_file_size", "descendants"]


def descendants(root: int) -> list[int]:
    """Every process below ``root`` (not ``root`` itself), as /proc shows them now."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _owner(pid: int) -> tuple[int, int] | None:
    """(real uid, real gid) of ``pid``, or None when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["Uid"].split()[0]), int(fields["Gid"].split()[0])


def _limit_one(pid: int, limit: int) -> str:
    """Lower ``pid``'s file-size limit; what went wrong, or ""."""
    owner = _owner(pid)
    if owner is None:
        return ""
    uid, gid = owner
    if uid == os.getuid():
        try:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, limit))
        except ProcessLookupError:
            return ""
        except OSError as err:
            return f"prlimit of process {pid}: {err.strerror or err}"
        return ""
    if uid == 0 or os.geteuid() != 0:
        return ""  # the sandbox's own helpers (root): they write no file of the submission
    tool = shutil.which("prlimit")
    if tool is None:
        return "prlimit (util-linux) is missing"
    proc = subprocess.run([tool, "--pid", str(pid), f"--fsize={limit}:{limit}"], user=uid,
                          group=gid, extra_groups=[], capture_output=True, text=True,
                          timeout=10, check=False)
    if proc.returncode != 0 and _owner(pid) is not None:
        return f"prlimit of process {pid}: {proc.stderr.strip()[:200]}"
    return ""


def limit_file_size(root: int, limit: int) -> tuple[int, str]:
    """Lower the file-size limit of every process below ``root`` to ``limit`` bytes;
    (processes seen, what went wrong or "")."""
    done: set[int] = set()
    error = ""
    for _ in range(3):  # again, for a process forked while the first pass ran
        fresh = [pid for pid in descendants(root) if pid not in done]
        if not fresh:
            break
        for pid in fresh:
            error = _limit_one(pid, limit) or error
            done.add(pid)
    return len(done), error
