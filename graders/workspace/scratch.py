"""The scratch folder an exercise's ``try_it()`` runs in, and going there only for the run.

``try_it()`` runs the student's loop, whose ``save_checkpoint`` writes ``checkpoint.json`` in the
current folder. That file must not land beside the notebook (nor in what is handed in), and the
kernel must not stay in another folder afterwards: the notebook's relative paths and the links
``solutions()`` shows are made from where the notebook is. So the run goes into the scratch folder
and comes back (`working_in`), and the folder goes away with the kernel:

    SCRATCH = scratch_folder()          # one per kernel, however often the cell runs
    with working_in(SCRATCH):
        run_agent(...)                  # checkpoint.json is SCRATCH / "checkpoint.json"

A kernel that exits removes its folder; one that was killed cannot, so the next
`scratch_folder` call removes the folders of kernels that are gone (the process id is in the name).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["PREFIX", "residue_folders", "scratch_folder", "working_in"]

#: The name every scratch folder starts with, then the kernel's process id.
PREFIX = "checkpoint-lab-try-it-"

_OURS: dict[str, Path] = {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def residue_folders(prefix: str = PREFIX, where: Path | None = None) -> list[Path]:
    """Scratch folders in ``where`` (the temp folder) whose kernel is gone, ours to remove."""
    where = Path(where or tempfile.gettempdir())
    pattern = re.compile(rf"^{re.escape(prefix)}(\d+)-")
    found = []
    for path in sorted(where.glob(f"{prefix}*")):
        match = pattern.match(path.name)
        try:
            mine = path.is_dir() and path.stat().st_uid == os.getuid()
        except (OSError, AttributeError):
            mine = False
        if match and mine and not _alive(int(match.group(1))):
            found.append(path)
    return found


def scratch_folder(prefix: str = PREFIX) -> Path:
    """This kernel's scratch folder (made once, removed when the kernel exits)."""
    folder = _OURS.get(prefix)
    if folder is not None and folder.is_dir():
        return folder
    for gone in residue_folders(prefix):
        shutil.rmtree(gone, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    _OURS[prefix] = folder
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@contextmanager
def working_in(folder: Path) -> Iterator[Path]:
    """Run the block with ``folder`` as the current folder, and come back whatever happens."""
    here = os.getcwd()
    os.chdir(folder)
    try:
        yield Path(folder)
    finally:
        os.chdir(here)
