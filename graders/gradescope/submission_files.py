"""What a Gradescope submission holds: the exercise notebooks, found by their answer cells.

Students upload notebooks under any names, or zips of them. :func:`find_notebooks` reads them in
memory (nothing is unpacked to disk), regular files only (no links), within a budget: at most
`_MAX_FILES` notebooks, `_MAX_MEMBERS` zip members looked at, each notebook at most
`graders.checks.answer_cells.MAX_FILE_BYTES` (outputs included), `_MAX_TOTAL_BYTES` in all, and a
zip member is read no further than it can still be a notebook (JSON starts with ``{``): a zip of
blanks costs nothing.
"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

__all__ = ["Found", "find_notebooks"]

#: What one submission may cost to read: notebooks looked at, zip members looked at, and bytes
#: read in all (a notebook is about 40 KB, or megabytes with stored outputs; each is also capped
#: at MAX_FILE_BYTES).
_MAX_FILES = 64
_MAX_MEMBERS = 1000
_MAX_TOTAL_BYTES = 160 << 20
#: Blanks a notebook may start with before it is not one.
_BLANK_LIMIT = 1 << 16


@dataclass
class Found:
    """What a submission folder holds: notebooks by exercise, and what could not be used."""

    notebooks: dict[str, tuple[str, dict]] = field(default_factory=dict)  # exercise -> (name, nb)
    unreadable: dict[str, str] = field(default_factory=dict)  # display name -> why
    duplicates: list[str] = field(default_factory=list)
    others: list[str] = field(default_factory=list)  # notebooks of no exercise


class _Budget:
    """What reading one submission may still cost: files looked at, bytes read."""

    def __init__(self) -> None:
        self.files, self.bytes = _MAX_FILES, _MAX_TOTAL_BYTES

    def check(self, size: int) -> str | None:
        """Why a file of ``size`` bytes is not read, or None."""
        from graders.checks.answer_cells import MAX_FILE_BYTES

        if self.files <= 0:
            return f"the submission holds more than {_MAX_FILES} notebooks; the rest was not read"
        if size > MAX_FILE_BYTES:
            return f"it is larger than {MAX_FILE_BYTES >> 20} MiB"
        if size > self.bytes:
            return (f"the submission's notebooks weigh more than {_MAX_TOTAL_BYTES >> 20} MiB in "
                    "all; the rest was not read")
        return None

    def spend(self, size: int) -> None:
        """One file looked at, ``size`` bytes of it read."""
        self.files -= 1
        self.bytes -= size


def _skipped(rel: PurePosixPath) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in rel.parts)


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: _Budget
                 ) -> tuple[bytes | None, str | None]:
    """(bytes, None) of a zip member that could be a notebook, or (None, why not): never more
    than the budget, and not past a start that no notebook has (JSON opens with ``{``)."""
    why = budget.check(info.file_size)
    if why:
        return None, why
    data = bytearray()
    try:
        with archive.open(info) as member:
            while chunk := member.read(1 << 16):
                data += chunk
                head = bytes(data[:_BLANK_LIMIT]).lstrip()
                if head and not head.startswith(b"{"):
                    return None, "it is not a notebook (a notebook is JSON, and starts with {)"
                if not head and len(data) >= _BLANK_LIMIT:
                    return None, "it is not a notebook (it starts with nothing but blanks)"
        return bytes(data), None
    finally:
        budget.spend(len(data))


def _candidates(folder: Path) -> list[tuple[str, bytes | None, str | None]]:
    """(display name, bytes or None, why unusable) for each notebook in ``folder`` or its zips:
    regular files only (no links), nothing written anywhere, within `_Budget`."""
    out: list[tuple[str, bytes | None, str | None]] = []
    budget = _Budget()
    for path in sorted(folder.rglob("*")):
        rel = PurePosixPath(path.relative_to(folder).as_posix())
        if _skipped(rel) or path.is_symlink() or not path.is_file():
            continue
        if path.suffix == ".ipynb":
            size = path.stat().st_size
            why = budget.check(size)
            if why is None:
                budget.spend(size)
            out.append((str(rel), None if why else path.read_bytes(), why))
        elif path.suffix == ".zip" and budget.files > 0:
            out.extend(_from_zip(path, str(rel), budget))
    return out


def _from_zip(path: Path, shown: str, budget: _Budget
              ) -> list[tuple[str, bytes | None, str | None]]:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        return [(shown, None, f"it is not a zip file we can open ({exc})")]
    out = []
    with archive:
        for info in archive.infolist()[:_MAX_MEMBERS]:
            rel = PurePosixPath(info.filename)
            if info.is_dir() or rel.suffix != ".ipynb" or _skipped(rel):
                continue
            try:
                data, why = _read_member(archive, info, budget)
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, zlib.error) as exc:
                data, why = None, f"it could not be taken out of the zip ({exc})"
            out.append((f"{shown}:{info.filename}", data, why))
    return out


def find_notebooks(folder: Path, exercises: list[dict]) -> Found:
    """The exercise notebooks in ``folder`` (and in the zips there, read in memory), by exercise.

    A notebook is recognised by its answer cells' grade_ids (nbgrader metadata), whatever its
    file name; an unreadable file is assigned to the exercise its file name names, if any.
    """
    from graders.checks import notebook_of
    from graders.checks.answer_cells import notebook_problem

    by_name = {e["notebook"]: e["exercise"] for e in exercises}
    wanted = {e["exercise"] for e in exercises}
    found = Found()
    for shown, data, why in _candidates(Path(folder)):
        nb = None
        if why is None and data is not None:
            try:
                nb, problem = notebook_problem(data.decode("utf-8"))
                why = problem and f"it is not a notebook: {problem}"
            except UnicodeDecodeError as exc:
                why = f"it is not a notebook: it is not UTF-8 text ({exc.reason})"
        if nb is None:
            found.unreadable[shown] = why or "it could not be read"
            continue
        exercise = notebook_of(nb)
        if exercise is None and PurePosixPath(shown).stem in by_name:
            exercise = by_name[PurePosixPath(shown).stem]
        if exercise not in wanted:
            found.others.append(shown)
        elif exercise in found.notebooks:
            found.duplicates.append(shown)
        else:
            found.notebooks[exercise] = (shown, nb)
    return found
