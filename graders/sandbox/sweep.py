"""What grading killed from outside left on this machine, removed at the next start; never what
a live run holds.

Three kinds of residue: the modes of what grading closed to other users
(:func:`graders.sandbox.uid_closing.reopen_left`), run folders
(:func:`graders.recording.run_folders.sweep`: each is held by its run's flock while the run
lives), and what a sandbox uid (a run as root runs as one: the uid tier's runs, and a ``check``
or ``grade`` run as root) made outside its folders (processes, files at
the top of the shared temp folders, IPC objects; a run removes its own when it ends), which is
cleared for a uid that was reserved here once and that no run holds now (its lock,
:mod:`graders.sandbox.uids`, is free: taking it keeps every new run off the uid while it is
cleared).
"""

from __future__ import annotations

import os

import graders.sandbox.uid_closing as uid_closing
import graders.sandbox.uid_tier as uid_tier
import graders.sandbox.uid_walls as uid_walls
import graders.sandbox.uids as uids
from graders.recording import run_folders

__all__ = ["sweep_left_behind", "clear_unheld_uids"]


def _sandbox_uids_present() -> set[int]:
    """The sandbox uids that own a process, a file at the top of a shared temp folder, a POSIX
    message queue or a SysV IPC object."""
    found = {owner for _, owner in
             uid_tier.entries_by_owner((*uid_tier.SHARED_TEMP, "/dev/mqueue", "/proc"))
             if owner in uids.UID_RANGE}
    for _table, row in uid_walls.ipc_objects():
        found |= {int(row[k]) for k in ("uid", "cuid")
                  if row.get(k, "").isdigit() and int(row[k]) in uids.UID_RANGE}
    return found


def clear_unheld_uids() -> list[str]:
    """End and remove what each sandbox uid no live run holds left (only uids reserved here
    before: a uid of the range with no lock file is someone else's, e.g. systemd's dynamic
    users); return what was removed. Root only."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return []
    present = _sandbox_uids_present()
    if not present:
        return []
    try:
        folder = uids.lock_folder()
    except OSError:
        return []
    removed = []
    for uid in sorted(present):
        if not os.path.isfile(os.path.join(folder, str(uid))):
            continue
        held = uids.hold(uid, folder)
        if held is None:  # a live run's
            continue
        try:
            if not uid_tier.end_uid(uid, known_alive=False):
                removed.append(f"processes of uid {uid} (not all ended)")
            removed += uid_tier.remove_residue(uid) + uid_walls.remove_ipc(uid)
        finally:
            held.release()
    return removed


def sweep_left_behind() -> list[str]:
    """Remove what grading or a check killed before it ended left here (run folders, modes
    closed, and what the sandbox uids made: a run as root runs as one, in either tier); one line
    each. Probes no tier and starts no sandbox program: what a uid left is found by reading
    ``/proc``, the shared temp folders and the IPC tables, and only a uid reserved here that no
    live run holds is cleared."""
    removed = run_folders.sweep()
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # sandbox uids are root's alone
        removed += [f"{path} closed to other users (its mode put back)"
                    for path in uid_closing.reopen_left()]
        removed += [f"{item} (left by a sandbox uid)" for item in clear_unheld_uids()]
    return removed
