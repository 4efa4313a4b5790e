"""Copies a grading batch works on, so that it never writes what it reads.

:func:`copy_hand_ins` makes the hand-ins' copy: the folder of hand-ins copied whole, byte for
byte (``timestamp.txt``, ``submission_secret.txt`` and every other file, their times too);
grading reads the copy only, so a source that is also the destination (the course's own
``submitted/``) is safe.
:func:`shadow_course` makes a copy of the course (its config, source notebooks and gradebook)
where nbgrader grades; :func:`backup_gradebook` copies a gradebook with SQLite's backup API.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

from graders.nbgrader_plumbing.course import CONFIG_NAME, Course

__all__ = ["copy_hand_ins", "shadow_course", "backup_gradebook", "merge_submission"]


def _copy_entry(src: Path, dest: Path, skip: Path | None) -> None:
    info = os.lstat(src)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(src), dest)  # kept as a link: the reader refuses links
    elif stat.S_ISDIR(info.st_mode):
        if skip is not None and src.resolve() == skip:
            return
        dest.mkdir()
        for child in sorted(os.listdir(src)):
            _copy_entry(src / child, dest / child, skip)
        shutil.copystat(src, dest, follow_symlinks=False)
    elif stat.S_ISREG(info.st_mode):
        shutil.copy2(src, dest, follow_symlinks=False)
    # anything else (a FIFO, a device) is not a hand-in: it is left out


def copy_hand_ins(source: Path, dest: Path, skip: Path | None = None) -> Path:
    """Copy the folder ``source`` to ``dest`` (which must not exist) byte for byte, links as
    links, leaving out ``skip`` (the batch's own work folder, were it inside)."""
    _copy_entry(Path(source), Path(dest), skip.resolve() if skip else None)
    return Path(dest)


def backup_gradebook(src: Path, dest: Path) -> None:
    """Copy the sqlite gradebook ``src`` to ``dest`` with SQLite's backup API (a consistent
    copy even while another process writes it)."""
    tmp = dest.with_name(dest.name + ".part")
    tmp.unlink(missing_ok=True)
    with sqlite3.connect(f"file:{src}?mode=ro", uri=True, timeout=120) as source, \
            sqlite3.connect(tmp) as target:
        source.backup(target)
    target.close()
    source.close()
    os.replace(tmp, dest)


def shadow_course(course: Course, root: Path) -> Course:
    """A copy of ``course`` in ``root`` (config, source notebooks, gradebook) to grade in."""
    root.mkdir(parents=True)
    shutil.copy2(course.config_path, root / CONFIG_NAME)
    shutil.copytree(course.root / "source", root / "source", symlinks=True)
    backup_gradebook(course.gradebook_path, root / course.gradebook_path.name)
    return Course(root.resolve(), course.assignment)


def _not_regular(folder: str, names: list[str]) -> set[str]:
    """The entries of ``folder`` that are neither regular files nor folders (links above all)."""
    kinds = {name: os.lstat(os.path.join(folder, name)).st_mode for name in names}
    return {name for name, mode in kinds.items()
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))}


def merge_submission(kept: Path, handed_in: Path, dest: Path) -> None:
    """Make ``dest``: the files of ``kept`` (the course's ``submitted/<student>/<assignment>/``,
    when there is one: nbgrader's ``timestamp.txt`` and the rest) with the regular files of
    ``handed_in`` (the student's folder in the hand-ins' copy) over them. Links are left out."""
    if kept.is_dir() and not kept.is_symlink():
        shutil.copytree(kept, dest, ignore=_not_regular)
    else:
        dest.mkdir(parents=True)
    for entry in sorted(handed_in.iterdir()) if handed_in.is_dir() else []:
        if entry.is_file() and not entry.is_symlink():
            target = dest / entry.name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            shutil.copy2(entry, target)
